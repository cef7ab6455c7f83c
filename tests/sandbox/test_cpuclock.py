"""The clocks of a call (``sandbox.cpuclock``) and the limits that set them (``Limits``)."""

from __future__ import annotations

import os

import pytest

from rnngrade.sandbox import Limits
from rnngrade.sandbox.cpuclock import CallClock, Probe, Reading


class FakeProbe:
    """Readings set by the test."""

    def __init__(self, cpu: float = 0.0, delay: float = 0.0) -> None:
        self.now: Reading | None = Reading(cpu, delay)

    def read(self) -> Reading | None:
        return self.now


def clock(probe: FakeProbe | None, cpu: float = 1.0, wall: float = 12.0) -> CallClock:
    return CallClock(probe, cpu, wall, started=100.0)  # type: ignore[arg-type]


def test_cpu_time_is_the_limit_whatever_the_wall_clock_says():
    probe = FakeProbe(cpu=5.0, delay=2.0)
    call = clock(probe)
    probe.now = Reading(5.9, 2.0 + 9.0)  # 10 s later: 0.9 s on a CPU, 9 s waiting for one
    assert call.used(110.0) == pytest.approx((0.9, 1.0))
    assert call.verdict(110.0) is None
    probe.now = Reading(6.0, 11.0)
    assert call.verdict(110.1) == "used 1 s of CPU time (the limit per call)"


def test_time_waiting_for_a_reply_counts_but_not_time_waiting_for_a_cpu():
    probe = FakeProbe(cpu=1.0, delay=0.0)
    call = clock(probe)
    probe.now = Reading(1.1, 20.0)  # asleep 12 s, on a machine busy for 20 s of it
    assert call.verdict(132.0) == ("waited 12 s (wall clock) for a reply while it used little "
                                   "CPU time (sleeping or blocked)")
    probe.now = Reading(1.1, 21.0)
    assert call.verdict(132.0) is None


def test_no_reading_leaves_the_wall_clock_fallback():
    call = clock(None)
    assert call.used(105.0) == (None, 5.0)
    assert call.verdict(111.9) is None and call.verdict(112.0) is not None


def test_the_next_check_is_when_a_limit_can_first_be_reached():
    probe = FakeProbe()
    call = clock(probe)
    probe.now = Reading(0.25, 0.0)
    assert call.next_check(100.5) == pytest.approx(101.25)  # 0.75 s of CPU left


def test_a_probe_reads_a_live_process_and_nothing_once_closed():
    probe = Probe(os.getpid())
    first = probe.read()
    assert first is not None and first.cpu > 0
    sum(range(2_000_000))
    second = probe.read()
    assert second is not None and second.cpu > first.cpu
    probe.close()
    assert probe.read() is None


def test_the_wall_clock_fallback_of_a_call():
    assert Limits().wall_limit() == 30.0  # twice 10 s of CPU time, and 10 s more
    assert Limits(call_seconds=1).wall_limit(0.5) == 11.0
    limits = Limits(call_seconds=2, wall_seconds=3)
    assert limits.wall_limit() == 3.0 and limits.wall_limit(1.0) == 1.5  # in proportion
    assert Limits().overridden({"wall_seconds": 4}, "here").wall_seconds == 4.0
    with pytest.raises(ValueError, match="wall_seconds must be a positive number"):
        Limits().overridden({"wall_seconds": 0}, "here")

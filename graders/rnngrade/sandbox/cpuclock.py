"""The clocks of a call into a worker: the CPU time it used, and how long it waited for a reply
that is not explained by a busy machine.

A call's real limit is CPU time: what a correct submission needs does not grow when other
processes share the machine. Code that uses no CPU (sleeping, blocked) is stopped by a wall-clock
fallback instead, counted without the time the worker was ready to run but waiting for a CPU (the
kernel's ``run_delay``), so a busy machine does not bring it closer either. Both are read from
``/proc/PID/schedstat`` (the worker's main thread: the sandbox pins BLAS and OpenMP pools to one
thread, so that is where its work runs), or, where the kernel keeps no scheduler statistics, from
``/proc/PID/stat`` (the whole process, no waiting time: the fallback is then plain wall clock).
Where neither can be read (``/proc`` mounted with ``hidepid``), only the fallback stops a call.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field

from rnngrade.limits import describe_seconds

_TICK = 1.0 / os.sysconf("SC_CLK_TCK")
SHORTEST_CHECK = 0.005  # seconds between two readings of a busy worker's clocks, at least


@dataclass(frozen=True)
class Reading:
    """A process's clocks at one moment, in seconds."""

    cpu: float  # time on a CPU
    delay: float  # time ready to run but waiting for a CPU (0 where the kernel does not say)


class Probe:
    """Reads the clocks of process ``pid`` (see the module docstring); ``read`` returns None once
    the process is gone or its files cannot be read."""

    def __init__(self, pid: int) -> None:
        self._fd: int | None = None
        self._schedstat = True
        with contextlib.suppress(OSError):
            self._fd = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        first = self.read()
        if first is None or first.cpu == 0:  # no scheduler statistics: utime + stime
            self.close()
            self._schedstat = False
            with contextlib.suppress(OSError):
                self._fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)

    def read(self) -> Reading | None:
        if self._fd is None:
            return None
        try:
            text = os.pread(self._fd, 1024, 0).decode("ascii", "replace")
            if self._schedstat:
                on_cpu, delay = text.split()[:2]
                return Reading(int(on_cpu) / 1e9, int(delay) / 1e9)
            utime, stime = text.rsplit(")", 1)[1].split()[11:13]
            return Reading((int(utime) + int(stime)) * _TICK, 0.0)
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


@dataclass
class CallClock:
    """The limits of one call: ``cpu_limit`` seconds of CPU time, and ``wall_limit`` seconds of
    waiting for the reply, the time the worker waited for a CPU not counted."""

    probe: Probe | None
    cpu_limit: float
    wall_limit: float
    started: float = field(default_factory=time.monotonic)
    start: Reading | None = None

    def __post_init__(self) -> None:
        if self.start is None and self.probe is not None:
            self.start = self.probe.read()

    def used(self, now: float | None = None) -> tuple[float | None, float]:
        """(CPU seconds used, or None where unknown; seconds waited, busy machine excepted)."""
        now = time.monotonic() if now is None else now
        reading = self.probe.read() if self.probe is not None else None
        if reading is None or self.start is None:
            return None, now - self.started
        delay = max(0.0, reading.delay - self.start.delay)
        return max(0.0, reading.cpu - self.start.cpu), max(0.0, now - self.started - delay)

    def verdict(self, now: float) -> str | None:
        """Why the call is over its limits (the end of a sentence: "... timed out: {verdict}"),
        or None while it is within them."""
        cpu, waited = self.used(now)
        if cpu is not None and cpu >= self.cpu_limit:
            return used_cpu(self.cpu_limit)
        if waited >= self.wall_limit:
            return waited_wall(self.wall_limit)
        return None

    def next_check(self, now: float) -> float:
        """The earliest time.monotonic() at which a limit can be reached: the CPU clock of one
        thread and the waiting clock run no faster than the wall clock."""
        cpu, waited = self.used(now)
        left = self.wall_limit - waited
        if cpu is not None:
            left = min(left, self.cpu_limit - cpu)
        return now + max(SHORTEST_CHECK, left)


def used_cpu(limit: float) -> str:
    return f"used {describe_seconds(limit)} of CPU time (the limit per call)"


def waited_wall(limit: float) -> str:
    return (f"waited {describe_seconds(limit)} (wall clock) for a reply while it used little CPU "
            "time (sleeping or blocked)")

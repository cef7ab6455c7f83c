"""Caps the grader applies to what a worker sends, as it reads it, and the grader's memory for a
large result. Each test lifts or bypasses the worker's own caps (the student's to patch) so that
only the grader's side can hold."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator

import pytest

from rnngrade.harness.runner.base import EXCEPTION, LOAD_ERROR, StudentError
from rnngrade.sandbox import Limits
from rnngrade.sandbox.channel import LARGE, MAX_FRAME, Payload
from rnngrade.sandbox.protocol import MAX_NOTES, MESSAGE_CHARS, NOTE_CHARS, TRUNCATED
from rnngrade.sandbox.runner import result_cap

MIB = 1 << 20

SOURCES = {
    "long_message": 'def f():\n    raise ValueError("regraded " * 2_000_000)\n',
    "flooded_notes": '''
import sys

worker = sys.modules["rnngrade.sandbox.worker"]
send = worker._send


def forged(state, message):
    if type(message).__name__ == "Loaded":
        message = type(message)(("staff notice " * 2000,) * 100, None, message.functions)
    return send(state, message)


worker._send = forged


def f():
    return 1
''',
    "large": '''
import numpy as np


def make(n):
    big = np.full(n, 0.5)
    return big, big, {"again": big}
''',
}


def test_an_honest_worker_cuts_a_long_exception_message(sandbox):
    with pytest.raises(StudentError) as info:
        sandbox(SOURCES["long_message"]).call("f")
    assert info.value.kind == EXCEPTION and "ValueError: regraded regraded" in info.value.message
    assert len(info.value.message) <= MESSAGE_CHARS + len(TRUNCATED)


def test_a_load_report_over_its_cap_is_refused_unread_and_the_load_fails(sandbox):
    runner = sandbox(SOURCES["flooded_notes"])
    for _ in range(2):
        with pytest.raises(StudentError) as info:
            runner.call("f")
        assert info.value.kind == LOAD_ERROR
        assert info.value.message == (
            "the submission could not be loaded: its top-level code: the worker sent data that "
            "cannot be graded (a load report of 2.5 MiB, over the 1 MiB limit)")
    assert runner.load_notes() == [] and not runner.has_function("f")


def test_load_notes_forged_past_the_worker_s_caps_are_cut_by_the_grader(sandbox, hostile_source):
    runner = sandbox(hostile_source("forged_notes"))
    notes = runner.load_notes()
    assert len(notes) == MAX_NOTES and notes[-1] == "... and 181 more notes"
    assert all(len(note) <= NOTE_CHARS + len(TRUNCATED) for note in notes)
    assert runner.has_function("rnn_cell_forward")


def test_a_result_may_take_the_memory_limit_at_most():
    assert result_cap(Limits(memory_bytes=300 * MIB)) == 300 * MIB
    assert result_cap(Limits()) == MAX_FRAME < Limits().memory_bytes


@pytest.fixture
def traced() -> Iterator[None]:
    """tracemalloc on (it sees the grader's buffers and NumPy's arrays), the automatic garbage
    collector off (so only the runner's own collection can free a reference cycle)."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()


def test_a_large_result_is_laid_over_the_one_buffer_it_arrived_in(sandbox, traced):
    runner = sandbox(SOURCES["large"], limits=Limits(call_seconds=30))
    n = 5_000_000  # 40 MB
    before, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    a, b, c = runner.call("make", (n,)).value
    _, peak = tracemalloc.get_traced_memory()
    assert a is b is c["again"] and a.shape == (n,) and float(a[-1]) == 0.5
    buffer = a
    while not isinstance(buffer, Payload):
        buffer = buffer.base
    assert len(buffer) < a.nbytes + MIB  # the frame's payload: the array and a little more
    assert peak - before < a.nbytes + 2 * MIB  # one copy (the bound), not one per reference


def test_earlier_results_only_cycles_hold_are_collected_before_a_large_reply(sandbox, traced):
    runner = sandbox(SOURCES["large"], limits=Limits(call_seconds=30))
    n = (LARGE + 16 * MIB) // 8  # 48 MiB: a large reply
    before, _ = tracemalloc.get_traced_memory()
    first = runner.call("make", (n,)).value
    cycle: list = [first]
    cycle.append(cycle)  # as a failed check's traceback holds the value it compared
    del first, cycle
    tracemalloc.reset_peak()
    second = runner.call("make", (n,)).value
    _, peak = tracemalloc.get_traced_memory()
    # The bound: what the grader still uses (nothing here) plus one reply. Without the
    # collection the unreachable first reply stays: twice that.
    assert peak - before < second[0].nbytes + 8 * MIB

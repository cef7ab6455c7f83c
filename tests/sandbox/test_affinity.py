"""The worker follows the grader's CPU during short calls and is let go during long ones."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from rnngrade.sandbox import affinity

pytestmark = pytest.mark.skipif(not affinity.available(),
                                reason="one CPU (or no sched_getcpu): nothing to follow")

SOURCE = textwrap.dedent('''
    import threading
    import time


    def quick():
        return 1


    def pool_then_wait():
        done = threading.Event()
        threading.Thread(target=done.wait, args=(2.0,), daemon=True).start()
        time.sleep(0.1)  # longer than affinity.WIDEN_AFTER
        return threading.active_count()
''')


def cpus_of(tid: int) -> set[int]:
    return os.sched_getaffinity(tid)


def test_a_short_call_runs_on_the_caller_s_cpu_and_a_long_one_anywhere(sandbox):
    runner = sandbox(SOURCE)
    allowed = affinity.allowed_cpus()
    runner.call("quick")  # the first call comes long after the load: the worker is pinned
    assert len(cpus_of(runner.worker_pid)) == 1 and cpus_of(0) == allowed  # caller let go
    time.sleep(0.01)  # a pause: the next call pins the worker again before it starts a thread
    assert runner.call("pool_then_wait").value >= 2
    threads = [int(t) for t in os.listdir(f"/proc/{runner.worker_pid}/task")]
    assert len(threads) >= 2
    assert all(cpus_of(tid) == allowed for tid in threads)  # the thread born pinned, too

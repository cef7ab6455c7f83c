"""Every way a call can fail in the worker, each with its kind and a clear message, and the
grader carrying on in a fresh worker afterwards. (Only failing code here, nothing destructive:
the attacks are in test_hostile.py.)"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from rnngrade.harness.runner.base import (
    CRASH,
    EXCEPTION,
    EXIT,
    LOAD_ERROR,
    MEMORY,
    OUTPUT_LIMIT,
    PROTOCOL,
    TIMEOUT,
    Handle,
    StudentError,
)
from rnngrade.sandbox import Limits

FAILING = textwrap.dedent('''
    import ctypes
    import os
    import stat
    import sys
    import time

    import numpy as np


    class Thing:
        pass


    def ok(x):
        return x + 1


    def thing():
        return Thing()


    def spin():
        while True:
            pass


    def nap(seconds):
        time.sleep(seconds)
        return seconds


    def hog():
        return np.empty(1 << 40)  # 8 TiB of address space


    def segfault():
        ctypes.string_at(0)


    def abort():
        os.abort()


    def leave(code):
        os._exit(code)


    def exit_cleanly():
        sys.exit(0)


    def interrupt():
        raise KeyboardInterrupt("pressed")


    class Escape(BaseException):
        pass


    def escape():
        raise Escape("out")


    def write(n):
        with open("out.bin", "wb") as f:
            f.write(b"x" * n)


    def matrix():
        return np.ones((2, 2)).view(np.matrix)


    def int_keys():
        return {1: "a"}


    def deep():
        x = []
        for _ in range(100):
            x = [x]
        return x


    def junk():
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.write(fd, b"\\xff" * 16)
            except OSError:
                pass
        time.sleep(5)


    def hang_up():
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.close(fd)
            except OSError:
                pass
        time.sleep(30)


    def forged():
        # a well-formed reply to a request that was never made
        from rnngrade.sandbox.codec import encode_bytes
        data = encode_bytes(("ok", 10**9, 1, (), {}))
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.write(fd, len(data).to_bytes(8, "little") + data)
            except OSError:
                pass
        time.sleep(5)
''')


def failure(runner, function, *args, **kwargs) -> StudentError:
    with pytest.raises(StudentError) as info:
        runner.call(function, args, **kwargs)
    assert info.value.function == function
    return info.value


def test_a_hang_times_out_and_the_next_call_gets_a_fresh_worker(sandbox):
    runner = sandbox(FAILING, limits=Limits(call_seconds=0.5, wall_seconds=1.0))
    first = runner.worker_pid
    error = failure(runner, "spin")
    assert error.kind == TIMEOUT
    assert error.message == "spin timed out: used 0.5 s of CPU time (the limit per call)"
    assert error.usage is not None and error.usage.cpu is not None and error.usage.cpu >= 0.5
    assert runner.call("ok", (1,)).value == 2
    assert runner.worker_pid != first and runner.restarts == 1
    error = failure(runner, "nap", 5, timeout=0.2)  # a per-call limit: its wall clock in step
    assert error.kind == TIMEOUT and "timed out: waited 0.4 s (wall clock)" in error.message
    assert runner.call("nap", (0.01,)).value == 0.01


def test_memory_exhaustion_is_reported_with_the_limit(sandbox):
    runner = sandbox(FAILING)
    error = failure(runner, "hog")
    assert error.kind == MEMORY and error.message == "hog killed: memory limit 4 GiB"
    assert runner.call("ok", (1,)).value == 2 and runner.restarts == 1  # recycled
    small = sandbox(FAILING, limits=Limits(memory_bytes=3 << 30))
    assert failure(small, "hog").message.endswith("memory limit 3 GiB")


def line_of(code: str) -> int:
    return [line.strip() for line in FAILING.splitlines()].index(code) + 1


def test_a_signal_is_a_crash_named_after_the_signal(sandbox):
    runner = sandbox(FAILING)
    error = failure(runner, "segfault")
    assert error.kind == CRASH and error.message == "segfault crashed: segmentation fault (SIGSEGV)"
    # the student's line, not the worker's frames
    line = line_of("ctypes.string_at(0)")
    assert error.stderr.splitlines() == ["Fatal Python error: Segmentation fault",
                                         f'  File "rnn.py", line {line} in segfault']
    assert runner.call("ok", (2,)).value == 3


def test_an_abort_is_named_an_abort_though_the_worker_is_pid_1(sandbox):
    runner = sandbox(FAILING)
    error = failure(runner, "abort")
    assert error.kind == CRASH and error.message == "abort crashed: aborted (SIGABRT)"
    assert error.stderr.splitlines() == ["Fatal Python error: Aborted",
                                         f'  File "rnn.py", line {line_of("os.abort()")} in abort']


@pytest.mark.parametrize("function, args, kind, words", [
    ("leave", (3,), EXIT, "ended the worker process (exit status 3"),
    ("leave", (0,), EXIT, "exit status 0"),
    ("exit_cleanly", (), EXIT, "SystemExit(0)"),
    ("interrupt", (), EXCEPTION, "KeyboardInterrupt: pressed"),
    ("escape", (), EXCEPTION, "Escape: out"),
])
def test_exits_and_base_exceptions(sandbox, function, args, kind, words):
    runner = sandbox(FAILING)
    error = failure(runner, function, *args)
    assert error.kind == kind and words in error.message
    assert runner.call("ok", (0,)).value == 1


def test_the_cpu_limit_kills_a_worker_that_burns_more(sandbox):
    runner = sandbox(FAILING, limits=Limits(cpu_seconds=1, call_seconds=20))
    error = failure(runner, "spin")
    assert error.kind == TIMEOUT and "CPU time limit 1 s" in error.message


def test_the_file_size_limit(sandbox):
    runner = sandbox(FAILING, limits=Limits(file_bytes=1 << 20))
    assert runner.call("write", (1000,)).value is None
    error = failure(runner, "write", 2 << 20)
    assert error.kind == OUTPUT_LIMIT and "file size limit (1 MiB per file)" in error.message


@pytest.mark.parametrize("function, words", [
    ("matrix", "a matrix (a numpy.ndarray subclass) is not plain data"),
    ("int_keys", "only dicts with str keys cross"),
    ("deep", "nested more than 64 levels deep"),
])
def test_values_that_cannot_cross_are_refused_and_the_worker_stays(sandbox, function, words):
    runner = sandbox(FAILING)
    pid = runner.worker_pid
    error = failure(runner, function)
    assert error.kind == PROTOCOL and words in error.message
    assert error.message.startswith(f"{function} returned a value that cannot be graded")
    assert runner.call("ok", (1,)).value == 2 and runner.worker_pid == pid


@pytest.mark.parametrize("function", ["junk", "forged"])
def test_bytes_forged_on_the_channel_are_refused_and_the_worker_replaced(sandbox, function):
    runner = sandbox(FAILING)
    pid = runner.worker_pid
    error = failure(runner, function)
    assert error.kind == PROTOCOL and "cannot be graded" in error.message
    assert runner.call("ok", (1,)).value == 2 and runner.worker_pid != pid


def test_a_worker_that_hangs_up_but_lives_on_is_killed(sandbox):
    runner = sandbox(FAILING)
    error = failure(runner, "hang_up")
    assert error.kind == PROTOCOL and "closed its channel" in error.message
    assert runner.call("ok", (1,)).value == 2


def test_handles_do_not_survive_a_restart(sandbox):
    runner = sandbox(FAILING)
    handle = runner.call("thing").value
    assert type(handle) is Handle
    failure(runner, "segfault")
    error = failure(runner, "ok", handle)
    assert error.kind == PROTOCOL and "unknown handle" in error.message
    assert type(runner.call("thing").value) is Handle


@pytest.mark.parametrize("top_level, words", [
    ("while True:\n    pass\n", "its top-level code timed out: used 0.5 s of CPU time"),
    ("import os\nos._exit(2)\n", "its top-level code ended the worker process (exit status 2"),
    ("import ctypes\nctypes.string_at(0)\n", "its top-level code crashed: segmentation fault"),
    ("raise KeyboardInterrupt\n", "top-level code raised KeyboardInterrupt"),
])
def test_a_submission_that_cannot_load_is_a_load_error_for_every_call(sandbox, top_level, words):
    runner = sandbox(top_level + "\ndef ok(x):\n    return x\n", limits=Limits(call_seconds=0.5))
    for _ in range(2):
        error = failure(runner, "ok", 1)
        assert error.kind == LOAD_ERROR and words in error.message
    assert not runner.has_function("ok")


def test_top_level_exits_are_noted_and_skipped_like_any_top_level_error(sandbox):
    runner = sandbox("import sys\nsys.exit(1)\n\ndef ok(x):\n    return x\n")
    assert any("SystemExit" in note for note in runner.load_notes())
    assert runner.call("ok", (np.ones(1),)).value == np.ones(1)


@pytest.mark.slow  # starts a second zygote (a few seconds)
def test_a_dead_zygote_is_replaced_and_running_workers_carry_on(sandbox):
    from rnngrade.sandbox.zygote.client import shared_client

    runner = sandbox(FAILING)
    zygote = shared_client().process
    zygote.kill()  # the zygote this test session started
    zygote.wait()
    assert runner.call("ok", (1,)).value == 2  # its worker talks to the grader directly
    fresh = sandbox(FAILING)
    assert fresh.call("ok", (2,)).value == 3
    assert shared_client().process.pid != zygote.pid
    error = failure(runner, "segfault")  # the old zygote cannot say why: still a crash
    assert error.kind == CRASH


def test_an_interrupted_grader_abandons_the_call_and_carries_on(sandbox):
    import signal

    runner = sandbox(FAILING)
    pid = runner.worker_pid

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            runner.call("nap", (5,))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert runner.call("ok", (1,)).value == 2 and runner.worker_pid != pid


def test_a_fork_fails_in_the_worker_and_the_worker_answers_on(sandbox):
    """A CPU worker starts no process (sandbox/seccomp.py): the student sees an ordinary
    error, and the worker goes on answering (a child that had started would never answer)."""
    runner = sandbox("import os\n\ndef fork_and_return(x):\n    os.fork()\n    return x\n"
                     "\ndef ok(x):\n    return x\n")
    for n in range(3):
        assert "Operation not permitted" in failure(runner, "fork_and_return", n).message
        assert runner.call("ok", (n,)).value == n

"""Hostile submissions (fixtures/submissions/hostile/) graded through the sandbox.

Each fixture is a lab1 rnn.py with an honest ``softmax`` and one attack. For every one: the worker
must first report a private filesystem and a non-root uid (else the test is skipped: hostile code
never runs unprotected); then ``softmax`` is called and is right, the attacked ``rnn_cell_forward``
fails for the right reason (or its value is wrong or refused), ``softmax`` still works after, no
canary file changed, no canary text appears in any output, nothing reached the test's port, and
the grader's own comparison functions are untouched. The attacks only ever aim at the canary
course root the test makes under its tmp_path (and at the port it listens on).
"""

from __future__ import annotations

import builtins
import math
import platform
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from rnngrade.harness.runner.base import (
    CRASH,
    EXCEPTION,
    EXIT,
    MEMORY,
    OUTPUT_LIMIT,
    PROTOCOL,
    TIMEOUT,
    StudentError,
)
from rnngrade.sandbox import Limits
from rnngrade.sandbox.protocol import MESSAGE_CHARS

ORIGINALS = (np.allclose, np.array_equal, np.testing.assert_allclose, torch.allclose,
             torch.equal, math.isclose, builtins.abs)


@dataclass(frozen=True)
class Attack:
    kind: str | None  # the StudentError kind of the attacked call; None: it returns a value
    words: str = ""  # in the error message
    right: bool = False  # when it returns: whether the value is the right one
    needs: str = ""  # a protection the kernel may not allow: skipped (saying why) without it
    seconds: float = 1.0  # the call's CPU time limit
    wall: float | None = None  # its wall-clock fallback; None: the default (21 s for 1 s)


ATTACKS = {
    "infinite_loop": Attack(TIMEOUT, "rnn_cell_forward timed out: used 1 s of CPU time"),
    "sleep_forever": Attack(TIMEOUT, "rnn_cell_forward timed out: waited 2 s (wall clock)",
                            wall=2.0),
    "memory_bomb": Attack(MEMORY, "rnn_cell_forward killed: memory limit 4 GiB"),
    "fork_bomb": Attack(TIMEOUT, "rnn_cell_forward timed out: ", wall=2.0),
    "os_exit": Attack(EXIT, "ended the worker process (exit status 3"),
    "sys_exit": Attack(EXIT, "SystemExit(0)"),
    "raise_systemexit": Attack(EXIT, "SystemExit('grading is over')"),
    "raise_keyboardinterrupt": Attack(EXCEPTION, "KeyboardInterrupt"),
    "raise_baseexception": Attack(EXCEPTION, "Escape: not an Exception"),
    "segfault": Attack(CRASH, "crashed: segmentation fault (SIGSEGV)"),
    "recursion_bomb": Attack(CRASH, "crashed: segmentation fault (SIGSEGV)"),
    "print_flood": Attack(None, right=True),
    "big_file": Attack(OUTPUT_LIMIT, "file size limit (64 MiB per file)"),
    "read_reference": Attack(EXCEPTION, "FileNotFoundError: no course repository in sight"),
    "network_loopback": Attack(EXCEPTION, "OSError: [Errno 101] Network is unreachable"),
    "network_external": Attack(EXCEPTION, "OSError: [Errno 101] Network is unreachable"),
    "patch_comparisons": Attack(None),
    "ndarray_subclass": Attack(PROTOCOL, "a AlwaysEqual (a numpy.ndarray subclass) is not plain"),
    "gc_snoop": Attack(None),
    "thread_left_running": Attack(None),
    "signal_handlers": Attack(TIMEOUT, "rnn_cell_forward timed out: used 1 s of CPU time"),
    "write_outside": Attack(EXCEPTION, "FileNotFoundError"),
    "delete_files": Attack(EXCEPTION, "FileNotFoundError"),
    "syspath_import": Attack(EXCEPTION, "No module named 'rnn_reference_copy'"),
    "env_snoop": Attack(None),
    "kill_everything": Attack(None),
    "namespace_escape": Attack(EXCEPTION, "PermissionError: blocked: unshare EPERM, clone EPERM, "
                               "clone3 ENOSYS, setns EPERM, mount EPERM, umount2 EPERM, pivot_root"
                               " EPERM, keyctl EPERM, bpf EPERM, ptrace EPERM, perf_event_open "
                               "EPERM", needs="system call filter"),
    "proc_snoop": Attack(None, needs="host environment hidden in /proc"),
    "output_cap_patch": Attack(None, right=True, seconds=10.0),
    "big_return": Attack(None, seconds=30.0),  # 400 MB through a socket on a busy machine
    "huge_exception": Attack(PROTOCOL, "(an error report of 19.7 MiB, over the 64 KiB limit)",
                             seconds=10.0),
    "garbled_reply": Attack(PROTOCOL, "the worker sent data that cannot be graded (unknown tag "
                            "255)"),
    "huge_frame_header": Attack(PROTOCOL, "rnn_cell_forward returned a value that cannot be "
                                "graded: 1024 GiB of data, more than the 513 MiB a result may "
                                "take"),
    "unexpected_reply": Attack(PROTOCOL, "the worker sent data that cannot be graded (a load "
                               "report out of turn)"),
    "forged_notes": Attack(None, right=True),
}


class Listener:
    """A TCP port on 127.0.0.1 that records every connection made to it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.connections.append(conn.recv(1000) or b"<connected>")
                except OSError:
                    self.connections.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    port = Listener()
    yield port
    port.close()


def test_every_hostile_fixture_is_covered():
    from rnngrade.paths import course_root

    names = {p.stem for p in (course_root() / "fixtures/submissions/hostile").glob("*.py")}
    assert names == set(ATTACKS) and len(names) >= 35


def softmax_is_right(runner, rng) -> None:
    x = rng.standard_normal((5, 7)) * 3
    e = np.exp(x - x.max(axis=0))
    assert np.allclose(runner.call("softmax", (x,)).value, e / e.sum(axis=0))


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_hostile_submission_is_contained(name, sandbox, canary, hostile_source, lab1_args,
                                           listener):
    attack = ATTACKS[name]
    before = canary.snapshot()
    # sandbox() skips unless the worker reports a private filesystem and a non-root uid
    runner = sandbox(hostile_source(name, canary, listener.port),
                     limits=Limits(call_seconds=attack.seconds, wall_seconds=attack.wall))
    protections = runner.protections()
    assert protections["private filesystem"] and protections["unprivileged uid"]
    if attack.needs and not protections[attack.needs]:
        pytest.skip(f"no {attack.needs} on this machine: "
                    f"{runner.protection_details().get(attack.needs, 'not available')}")
    rng = np.random.default_rng(11)
    outputs = list(runner.load_notes())
    softmax_is_right(runner, rng)
    args, (a_next, yt_pred) = lab1_args
    try:
        result = runner.call("rnn_cell_forward", args)
    except StudentError as error:
        assert (error.kind, attack.words in error.message) == (attack.kind, True), error.message
        outputs += [error.message, error.stdout, error.stderr]
    else:
        assert attack.kind is None, f"expected {attack.kind}, got a value"
        outputs += [result.stdout, result.stderr, repr(result.value)]
        right = all(np.shape(got) == np.shape(want) and np.allclose(got, want)
                    for got, want in zip(result.value[:2], (a_next, yt_pred)))
        assert right == attack.right
        if name in ("print_flood", "output_cap_patch"):
            for stream in (result.stdout, result.stderr)[:1 if name == "print_flood" else 2]:
                assert stream.endswith("\n[... truncated]")
                assert len(stream) <= Limits().output_bytes + 20
    softmax_is_right(runner, rng)
    assert canary.snapshot() == before
    assert listener.connections == []
    for text in outputs:  # (the canary's path may show: the submission names it itself)
        assert canary.token not in text
    assert (np.allclose, np.array_equal, np.testing.assert_allclose, torch.allclose, torch.equal,
            math.isclose, builtins.abs) == ORIGINALS


@pytest.mark.parametrize("name, words", [
    ("os_exit", "ended the worker process (exit status 3"),
    ("segfault", "segmentation fault"),
    ("ndarray_subclass", "is not plain data"),
    ("read_reference", "FileNotFoundError"),
])
def test_grading_a_hostile_submission_end_to_end(sandbox_protected, name, words):
    """engine.grade (sandboxed by default) completes; the attacked tests score 0 with the reason
    and the honest softmax tests score in full."""
    from rnngrade.grading.engine import grade
    from rnngrade.paths import course_root

    result = grade(course_root() / "fixtures/submissions/hostile" / f"{name}.py", "lab1")
    assert result.status == "graded" and result.protections["private filesystem"]
    tests = {t.name: t for t in result.tests}
    for test in ("test_softmax_random", "test_softmax_extreme_logits", "test_softmax_dtype"):
        assert tests[test].score == tests[test].max_score > 0
    cell, sequence = tests["test_rnn_cell_forward_random"], tests["test_rnn_forward_random"]
    assert cell.score == 0 and words in cell.message, cell.message
    # the honest rnn_forward is graded with a correct cell in place of the attacked one
    # (grading/stand_ins.py), unless the attack ends the worker
    assert sequence.score == (0 if name in ("os_exit", "segfault") else sequence.max_score)


def kernel_allows() -> dict[str, bool]:
    """Which of the new measures this kernel supports, judged from the grader's side."""
    import os

    with open("/proc/self/status") as f:
        seccomp = "Seccomp:" in f.read()
    return {"system call filter": seccomp and platform.machine() in ("x86_64", "aarch64"),
            "cgroup namespace": os.path.exists("/proc/self/ns/cgroup"),
            "host environment hidden in /proc": True}


def test_the_worker_s_kernel_openings_are_closed_and_reported(sandbox):
    """Each measure the kernel supports is in force, measured from inside the worker (and
    reported); one it does not is reported as missing."""
    runner = sandbox("def f():\n    return 1\n")
    protections, details = runner.protections(), runner.protection_details()
    for measure, allowed in kernel_allows().items():
        assert protections[measure] is allowed, (measure, details.get(measure))
    assert runner.call("f").value == 1


def test_proc_shows_nothing_of_the_host(sandbox, hostile_source, lab1_args):
    import os

    from rnngrade.sandbox.zygote.client import shared_client

    runner = sandbox(hostile_source("proc_snoop"))
    if not runner.protections()["host environment hidden in /proc"]:
        pytest.skip("the worker's /proc is not fresh here")
    seen = runner.call("rnn_cell_forward", lab1_args[0]).value[2]
    assert seen["/proc/1/environ"].strip("\0") == ""
    assert seen["/proc/1/cmdline"].strip("\0") == "rnngrade-worker"
    assert all(line.endswith(":/") for line in seen["/proc/self/cgroup"].splitlines())
    mounted = {line.split()[4] for line in seen["/proc/self/mountinfo"].splitlines()}
    jail = {"/", "/dev", "/proc", "/tmp", "/submission", "/dev/shm", "/etc/ld.so.cache",
            "/etc/localtime", "/sys/devices/system/cpu", "/sys/devices/system/node"}
    jail |= {f"/dev/{d}" for d in ("null", "zero", "full", "random", "urandom")}  # no mknod
    jail |= {f"/{d}" for d in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")}
    assert mounted - jail <= set(shared_client().info.binds)  # the Python installation
    text = "".join(seen.values())
    with open("/proc/self/cgroup") as f:
        host_cgroups = {line.split(":", 2)[2].strip() for line in f} - {"/"}
    for secret in [os.environ["PATH"], *host_cgroups]:
        assert secret not in text


@pytest.mark.parametrize("name, words", [
    ("namespace_escape", "PermissionError: blocked: unshare EPERM"),
    ("garbled_reply", "cannot be graded (unknown tag 255)"),
    ("huge_frame_header", "1024 GiB of data, more than the 513 MiB a result may take"),
    pytest.param("huge_exception", "an error report of 19.7 MiB, over the 64 KiB limit",
                 marks=pytest.mark.slow),  # a 20 MB message built in every case (15 s)
])
def test_grading_a_kernel_or_channel_attack_end_to_end(sandbox_protected, name, words):
    """Through engine.grade: the attack scores no more than the honest functions around it
    earn, the reason is stated, the texts kept are within their caps, and the report lists the
    protections that held."""
    import json

    from rnngrade.grading.engine import grade
    from rnngrade.paths import course_root

    result = grade(course_root() / "fixtures/submissions/hostile" / f"{name}.py", "lab1")
    if name == "namespace_escape" and not result.protections.get("system call filter"):
        pytest.skip("no system call filter here")
    assert result.status == "graded"
    assert all(result.protections[m] is allowed for m, allowed in kernel_allows().items())
    tests = {t.name: t for t in result.tests}
    softmax = [t for t in tests if t.startswith("test_softmax")]
    assert softmax and all(tests[t].score == tests[t].max_score > 0 for t in softmax)
    cell = tests["test_rnn_cell_forward_random"]
    assert cell.score == 0 and words in cell.message, cell.message
    # nothing else scored but the honest rnn_forward, graded with a correct cell in place of
    # the attacked one (grading/stand_ins.py)
    honest = softmax + [t for t in tests if t.startswith("test_rnn_forward_")
                        and not t.startswith("test_rnn_forward_batch")]
    assert result.score == sum(tests[t].score for t in honest)
    assert all(len(t.message) < 4 * MESSAGE_CHARS for t in result.tests)
    assert len(json.dumps(result.to_dict(), default=str)) < 200_000


@pytest.mark.slow  # grades a 400 MB result in every rnn_cell_forward case (about 15 s)
def test_the_grader_s_memory_stays_bounded_for_a_400_mb_result(tmp_path):
    """engine.grade of big_return in a fresh process: its peak resident memory stays within
    the process's own size plus two results (measured: 2146 MiB before the grader collected
    the failed checks' cycles before each large reply, 668 MiB after)."""
    import subprocess
    import sys

    from rnngrade.paths import course_root

    script = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from rnngrade.grading.engine import grade\n"
        "result = grade(Path(sys.argv[1]), 'lab1')\n"
        "cell = {t.name: t for t in result.tests}['test_rnn_cell_forward_random']\n"
        "assert result.status == 'graded' and cell.score == 0, cell.message\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    path = course_root() / "fixtures/submissions/hostile/big_return.py"
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    peak = int(run.stdout.split()[-1]) << 10
    assert peak < 1200 << 20  # about 300 MB of grader and suite, plus two 400 MB results

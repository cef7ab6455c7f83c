"""A batch's grading processes each use a clone of the coordinator's zygote: forked from it, with
a channel, jail directories and workers of its own, ending when its grader's channel closes."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator

import numpy as np
import pytest

from rnngrade.sandbox.runner import SandboxRunner
from rnngrade.sandbox.zygote import client as zygote

from .conftest import REFERENCE, require_protected


@pytest.fixture
def mother(sandbox_available: None) -> zygote.ZygoteClient:
    """This process's own zygote (the one the sandbox tests share), as a batch's coordinator
    has one."""
    return zygote.shared_client()


@pytest.fixture
def adopted(monkeypatch) -> Iterator[None]:
    """This process's shared zygote is whatever the test adopts; restored afterwards."""
    monkeypatch.setattr(zygote, "_CLIENT", None)
    monkeypatch.setattr(zygote, "_STARTING", None)
    yield
    client = zygote._CLIENT
    if client is not None:
        client.close()


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def ended(pid: int, timeout: float = 10.0) -> bool:
    """Whether ``pid`` has exited (a zombie left for its parent to reap counts) in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def _ended_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def softmax_through_the_shared_zygote() -> np.ndarray:
    runner = SandboxRunner(REFERENCE, "rnn.py")
    try:
        require_protected(runner)
        return runner.call("softmax", (np.array([[1.0], [3.0]]),)).value
    finally:
        runner.close()


def test_a_clone_is_a_zygote_of_its_own_forked_from_the_mother(mother, adopted):
    channel, pid = mother.clone()
    zygote.adopt(channel, pid)
    clone = zygote.shared_client()
    assert clone.info.pid == pid != mother.info.pid
    assert parent_of(pid) == mother.info.pid  # forked from it, never from a grader
    assert not set(clone.info.dirs) & set(mother.info.dirs)  # jail directories its own
    value = softmax_through_the_shared_zygote()
    np.testing.assert_allclose(value.sum(axis=0), 1.0)
    assert mother.alive
    zygote.close_shared_client()
    assert ended(pid)
    assert not any(os.path.exists(d) for d in clone.info.dirs)  # cleaned up on its way out
    assert mother.alive  # the mother serves on


def test_a_clone_ends_when_its_grader_s_channel_closes(mother):
    channel, pid = mother.clone()
    clone = zygote.ZygoteClient((channel, pid))
    assert clone.alive
    channel.close()  # the grading process died without a word
    assert ended(pid)
    assert not clone.alive


def test_a_clone_outlives_its_mother_while_its_grader_needs_it(mother, adopted):
    mother = zygote.ZygoteClient(mother.clone())  # a clone is a zygote too: a mother to close
    channel, pid = mother.clone()
    mother.close()  # the coordinator is done with its own zygote
    assert ended(mother.info.pid)
    zygote.adopt(channel, pid)
    np.testing.assert_allclose(softmax_through_the_shared_zygote().sum(axis=0), 1.0)
    zygote.close_shared_client()
    assert ended(pid)


def test_an_unusable_clone_leaves_the_process_to_start_its_own_zygote(adopted, monkeypatch):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    theirs.close()  # no zygote at the other end
    gone = _ended_pid()
    started = []
    monkeypatch.setattr(zygote.ZygoteClient, "_start", lambda self: started.append(self))
    zygote.adopt(ours, gone)
    assert zygote._CLIENT is None  # nothing adopted: shared_client starts one as usual
    assert ours.fileno() == -1  # and the dead channel is not kept open
    assert started == []

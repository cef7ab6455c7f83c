"""The zygote's messages and their one decoder: every message survives the wire as itself, a
malformed one is refused with a ProtocolError, and the client turns a malformed answer into a
SandboxUnavailable (a grader error) that says so. Only the last test needs a real zygote."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from rnngrade.errors import GraderError
from rnngrade.sandbox.channel import ChannelClosed, recv_packet, send_packet
from rnngrade.sandbox.codec import ProtocolError, decode, encode_bytes
from rnngrade.sandbox.zygote import protocol
from rnngrade.sandbox.zygote.client import SandboxUnavailable, ZygoteClient
from rnngrade.sandbox.zygote.protocol import (
    ANSWERS,
    GREETINGS,
    REQUESTS,
    Assign,
    Boot,
    Broken,
    Clone,
    Cloned,
    Failure,
    Forked,
    Prepared,
    Ready,
    Reap,
    Reaped,
    Release,
    Spawn,
    Spawned,
    decode_boot,
    decode_message,
    encode_boot,
    encode_message,
    recv_message,
    send_message,
)

LIMITS = {"cpu_seconds": 10, "memory_bytes": 1 << 30, "disk_bytes": 128 << 20}
MESSAGES = [
    Spawn(3, "cpu", LIMITS, True), Reap(4, 1234, 1.5), Release(1234), Clone(5),
    Ready(77, False, ("/usr", "/opt/python"), ("/tmp/rnngrade-jail-a", "/tmp/rnngrade-scratch-b")),
    Broken("ImportError: no module named 'torch'"), Spawned(3, 1235),
    Failure(3, "could not start a worker process"), Reaped(4, 9, 0.25), Reaped(4, None, 0.0),
    Cloned(5, 999), Forked(1236, ("no user namespace",)), Prepared(()), Assign(LIMITS)]


def wire(raw: object) -> object:
    """``raw`` as the other end decodes it (the codec, as a packet carries it)."""
    return decode(encode_bytes(raw))


def test_every_kind_of_message_has_a_round_trip_below():
    assert {type(m) for m in MESSAGES} == set(protocol._TYPES.values())


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_a_message_decodes_as_itself(message):
    back = decode_message(wire(encode_message(message)), message.FDS, [type(message)])
    assert back == message and type(back) is type(message)


@pytest.mark.parametrize("message", [m for m in MESSAGES if m.FDS], ids=lambda m: type(m).__name__)
def test_a_message_travels_with_its_descriptors(message):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pipes = [os.pipe() for _ in range(message.FDS)]
    try:
        send_message(a, message, [w for _, w in pipes])
        back, fds = recv_message(b, [type(message)], 5.0)
        assert back == message and len(fds) == message.FDS
        for fd, (r, _) in zip(fds, pipes):  # each one the pipe's write end, in order
            os.write(fd, b"x")
            assert os.read(r, 1) == b"x"
            os.close(fd)
    finally:
        a.close()
        b.close()
        for r, w in pipes:
            os.close(r)
            os.close(w)


def test_decoding_normalises_sequences_and_seconds():
    assert decode_message(("reap", 1, 2, 3), 0, REQUESTS) == Reap(1, 2, 3.0)
    assert type(decode_message(("reap", 1, 2, 3), 0, REQUESTS).timeout) is float
    assert decode_message(wire(("forked", 5, ["a", "b"])), 0, [Forked]) == Forked(5, ("a", "b"))


@pytest.mark.parametrize(("raw", "fds", "expected", "why"), [
    ("spawned", 0, ANSWERS, "without a tag"),
    ((), 0, ANSWERS, "without a tag"),
    ((7, 1), 0, ANSWERS, "without a tag"),
    (("nonsense", 1), 0, ANSWERS, "unexpected 'nonsense'"),
    (("spawn", 1, "cpu", {}, True), 3, ANSWERS, "unexpected 'spawn'"),  # a request, not an answer
    (("spawned", 1, 2), 0, REQUESTS, "unexpected 'spawned'"),
    (("ready", 1, False, (), ()), 0, ANSWERS, "unexpected 'ready'"),
    (("spawned", 1), 0, ANSWERS, "1 fields, not 2"),
    (("release", 1, 2), 0, REQUESTS, "2 fields, not 1"),
    (("spawned", 1, "12"), 0, ANSWERS, "pid is not an int"),
    (("spawned", True, 12), 0, ANSWERS, "seq is not an int"),
    (("reaped", 1, 1.5, 0.0), 0, ANSWERS, "status is not an int"),
    (("reaped", 1, None, "0"), 0, ANSWERS, "cpu is not a number"),
    (("failed", 1, None), 0, ANSWERS, "why is not a str"),
    (("ready", 1, False, ("/usr", 3), ()), 0, GREETINGS, "binds is not a sequence of str"),
    (("ready", 1, 0, (), ()), 0, GREETINGS, "privileged is not a bool"),
    (("spawn", 1, "cpu", {"cpu_seconds": "10"}, True), 3, REQUESTS, "limits is not a dict"),
    (("spawn", 1, "cpu", {}, True), 0, REQUESTS, "0 descriptors, not 3"),
    (("clone", 1), 2, REQUESTS, "2 descriptors, not 1"),
    (("reap", 1, 2, 3.0), 1, REQUESTS, "1 descriptors, not 0"),
])
def test_a_malformed_message_is_refused(raw, fds, expected, why):
    with pytest.raises(ProtocolError, match=why):
        decode_message(wire(raw), fds, expected)


def test_sending_refuses_the_wrong_number_of_descriptors():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with a, b, pytest.raises(ValueError, match="takes 1 descriptors, not 0"):
        send_message(a, Clone(1))


def test_a_refused_packet_s_descriptors_are_closed():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    r, w = os.pipe()
    with a, b:
        send_packet(a, ("spawned", 1, 2), [w])  # an answer comes with no descriptor
        os.close(w)
        with pytest.raises(ProtocolError, match="1 descriptors, not 0"):
            recv_message(b, ANSWERS, 5.0)
    os.set_blocking(r, False)  # a write end left open anywhere: BlockingIOError, not a hang
    assert os.read(r, 1) == b""  # none is
    os.close(r)


def test_the_configuration_round_trips_and_a_malformed_one_is_refused():
    boot = Boot(("/a", "/b"), ("/course",), ("torch",))
    assert decode_boot(encode_boot(boot)) == boot
    for data in (b"\xff", b"not json", b"[]", b'{"path": [], "hidden": []}',
                 b'{"path": ["/a", 3], "hidden": [], "imports": []}'):
        with pytest.raises(ProtocolError, match="configuration"):
            decode_boot(data)


# ----------------------------------------------------------------------------- the client

@contextmanager
def stand_in_zygote(answer: Callable[[tuple], object], greeting: object = None
                    ) -> Iterator[ZygoteClient]:
    """A client adopting a stand-in for a zygote: a thread that greets with ``greeting`` (a
    valid ``Ready`` when None) and answers each request ``raw`` with ``answer(raw)``."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    process = subprocess.Popen(["sleep", "60"])  # the pid the client watches
    if greeting is None:
        greeting = encode_message(Ready(process.pid, False, (), ()))
    else:  # the client gives up at once and waits for the process: it has ended
        process.kill()
    send_packet(theirs, greeting)

    def serve() -> None:
        while True:
            try:
                raw, fds = recv_packet(theirs)
            except (ChannelClosed, OSError):
                return
            for fd in fds:
                os.close(fd)
            if type(raw) is tuple and raw[0] != "release":
                send_packet(theirs, answer(raw))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = None
    try:
        client = ZygoteClient((ours, process.pid))
        yield client
    finally:
        process.kill()
        if client is not None:
            client.close()
        process.wait()
        ours.close()
        theirs.close()
        thread.join(5.0)


def test_the_client_round_trips_through_a_stand_in():
    with stand_in_zygote(lambda raw: ("spawned", raw[1], 4321) if raw[0] == "spawn"
                         else ("reaped", raw[1], 0, 0.5)) as client:
        pid, sock, out_r, err_r = client.spawn("cpu", LIMITS)
        sock.close()
        os.close(out_r)
        os.close(err_r)
        assert pid == 4321
        assert client.reap(pid, 0.0) == (0, 0.5)


def test_a_failure_is_reported_with_the_zygote_s_reason():
    with stand_in_zygote(lambda raw: ("failed", raw[1], "no spare today")) as client, \
            pytest.raises(SandboxUnavailable, match="could not start a worker: no spare today"):
        client.spawn("cpu", LIMITS)


@pytest.mark.parametrize(("answer", "why"), [
    (lambda raw: "garbage", "without a tag"),
    (lambda raw: ("reaped", raw[1], "nine", 0.0), "status is not an int"),
    (lambda raw: ("reaped", raw[1] + 5, 0, 0.0), "never made"),
    (lambda raw: ("spawned", raw[1], 7), "a 'spawned' answer where a 'reaped' was due"),
    (lambda raw: ("ready", 1, False, (), ()), "unexpected 'ready'"),
])
def test_a_malformed_answer_is_a_grader_error_saying_so(answer, why):
    with stand_in_zygote(answer) as client:
        with pytest.raises(SandboxUnavailable, match="malformed message") as caught:
            client.reap(5, 0.0)
        assert why in str(caught.value)
        assert isinstance(caught.value, GraderError)


def test_a_malformed_spawn_answer_closes_the_worker_s_ends():
    with stand_in_zygote(lambda raw: ("spawned", raw[1])) as client:
        before = set(os.listdir("/proc/self/fd"))
        with pytest.raises(SandboxUnavailable, match="1 fields, not 2"):
            client.spawn("cpu", LIMITS)
        assert set(os.listdir("/proc/self/fd")) <= before


@pytest.mark.parametrize(("greeting", "why"), [
    (("ready", "facts"), r"did not start \(a 'ready' message with 1 fields, not 4"),
    (("spawned", 1, 2), r"did not start \(an unexpected 'spawned' message"),
    (encode_message(Broken("ImportError: no torch")), "did not start: ImportError: no torch")])
def test_a_zygote_that_does_not_greet_properly_did_not_start(greeting, why):
    with pytest.raises(SandboxUnavailable, match=why), stand_in_zygote(lambda raw: raw, greeting):
        pass


# ----------------------------------------------------------------------------- the zygote

def test_the_zygote_drops_a_malformed_request_and_serves_on(sandbox_available):
    from rnngrade.sandbox.zygote.client import shared_client

    client = shared_client()
    r, w = os.pipe()
    with client._lock:  # nothing else may talk to it meanwhile
        send_packet(client.sock, ("spawn", 10**6, "cpu"))  # too few fields
        send_packet(client.sock, ("spawn", 10**6, "cpu", {}, True))  # no descriptors
        send_packet(client.sock, ("reaped", 10**6, None, 0.0), [w])  # an answer, with a pipe
        send_packet(client.sock, "not a message")
    os.close(w)
    assert client.reap(os.getpid(), 0.0) == (None, 0.0)  # not its worker: answered at once
    os.set_blocking(r, False)  # its copy still open: BlockingIOError, not a hang
    assert os.read(r, 1) == b""  # it closed its copy of the refused packet's pipe
    os.close(r)

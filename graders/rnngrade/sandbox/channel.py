"""Length-prefixed frames over a stream socket, and one-message packets over a SOCK_SEQPACKET
socket (the zygote's control channels, which also pass file descriptors)."""

from __future__ import annotations

import array
import select
import socket
import struct
import time
from collections.abc import Sequence

from rnngrade.sandbox.codec import MAX_BYTES, ProtocolError, decode, encode_bytes

HEADER = struct.Struct("<Q")
MAX_FRAME = MAX_BYTES + (1 << 20)  # payload limit plus room for the message's own fields
_IOV_MAX = 512
_PACKET = 1 << 16


class ChannelClosed(EOFError):
    """The other end went away."""


class ChannelTimeout(TimeoutError):
    """No complete frame before the deadline."""


def send_frame(sock: socket.socket, parts: Sequence[bytes | bytearray | memoryview],
               deadline: float | None = None) -> None:
    """Send ``parts`` as one frame: on a blocking socket, or on a non-blocking one by
    ``deadline`` (time.monotonic)."""
    size = sum(memoryview(p).nbytes for p in parts)
    views = [memoryview(HEADER.pack(size))]
    views += [memoryview(p).cast("B") for p in parts if memoryview(p).nbytes]
    while views:
        try:
            sent = sock.sendmsg(views[:_IOV_MAX])
        except (BlockingIOError, InterruptedError):
            if deadline is None:
                raise
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout("timed out sending") from None
            select.select([], [sock], [], remaining)
            continue
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosed(str(exc)) from None
        while sent:
            first = views[0]
            if sent >= first.nbytes:
                sent -= first.nbytes
                views.pop(0)
            else:
                views[0] = first[sent:]
                sent = 0


def recv_exact(sock: socket.socket, buf: bytearray | memoryview) -> None:
    """Fill ``buf`` from a blocking socket."""
    view = memoryview(buf)
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ChannelClosed("the other end closed the channel")
        got += n


def recv_frame(sock: socket.socket, max_size: int = MAX_FRAME) -> bytearray:
    """One frame's payload from a blocking socket."""
    header = bytearray(HEADER.size)
    recv_exact(sock, header)
    (size,) = HEADER.unpack(header)
    if size > max_size:
        raise ProtocolError(f"a message of {size} bytes is over the limit")
    payload = bytearray(size)
    recv_exact(sock, payload)
    return payload


class FrameReader:
    """Assembles one frame from a non-blocking socket, a piece at a time (grader side)."""

    def __init__(self, sock: socket.socket, max_size: int = MAX_FRAME) -> None:
        self.sock = sock
        self.max_size = max_size
        self._reset()

    def _reset(self) -> None:
        self.header = bytearray(HEADER.size)
        self.payload: bytearray | None = None
        self.got = 0

    def read_some(self) -> bytearray | None:
        """Read what is available; the payload once the frame is complete, else None.
        Raises ChannelClosed at end of stream, ProtocolError for an oversized frame."""
        while True:
            target = self.header if self.payload is None else self.payload
            if self.got < len(target):
                try:
                    n = self.sock.recv_into(memoryview(target)[self.got:], 0,
                                            socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    return None
                except ConnectionResetError as exc:
                    raise ChannelClosed(str(exc)) from None
                if n == 0:
                    raise ChannelClosed("the other end closed the channel")
                self.got += n
                if self.got < len(target):
                    continue
            if self.payload is None:
                (size,) = HEADER.unpack(self.header)
                if size > self.max_size:
                    raise ProtocolError(f"a message of {size} bytes is over the limit")
                self.payload = bytearray(size)
                self.got = 0
                if size:
                    continue
            payload = self.payload
            self._reset()
            return payload


# ------------------------------------------------------------------- packets with descriptors

def send_packet(sock: socket.socket, message: object, fds: Sequence[int] = ()) -> None:
    """One small message (and descriptors) as one SOCK_SEQPACKET packet."""
    data = encode_bytes(message, max_bytes=_PACKET - 1)
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def recv_packet(sock: socket.socket, timeout: float | None = None, max_fds: int = 8
                ) -> tuple[object, list[int]]:
    """One packet: (message, descriptors). Raises ChannelClosed / ChannelTimeout."""
    if timeout is not None:
        ready, _, _ = select.select([sock], [], [], max(timeout, 0.0))
        if not ready:
            raise ChannelTimeout("no message before the deadline")
    fds = array.array("i")
    data, ancdata, flags, _ = sock.recvmsg(_PACKET, socket.CMSG_LEN(max_fds * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        for fd in fds:
            _close(fd)
        raise ChannelClosed("the other end closed the channel")
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        for fd in fds:
            _close(fd)
        raise ProtocolError("a control message was truncated")
    return decode(data), list(fds)


def _close(fd: int) -> None:
    import os

    try:
        os.close(fd)
    except OSError:
        pass

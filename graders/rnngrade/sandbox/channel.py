"""Frames over a stream socket (a header: payload size and message kind; then the payload), and
one-message packets over a SOCK_SEQPACKET socket (the zygote's control channels, which also pass
file descriptors)."""

from __future__ import annotations

import array
import gc
import select
import socket
import struct
import time
import weakref
from collections.abc import Mapping, Sequence

from rnngrade.sandbox.codec import MAX_BYTES, ProtocolError, decode, encode_bytes

HEADER = struct.Struct("<QB")  # payload size, message kind
MAX_FRAME = MAX_BYTES + (1 << 20)  # payload limit plus room for the message's own fields
LARGE = 32 << 20  # a payload this large first makes room (see FrameReader)
_IOV_MAX = 512
_PACKET = 1 << 16


class ChannelClosed(EOFError):
    """The other end went away."""


class ChannelTimeout(TimeoutError):
    """No complete frame before the deadline."""


class FrameRefused(ProtocolError):
    """A frame refused from its header alone: of a kind not expected (``cap`` None) or larger than
    its kind may be."""

    def __init__(self, kind: int, size: int, cap: int | None) -> None:
        what = "unexpected kind" if cap is None else f"{size} bytes, over {cap}"
        super().__init__(f"a message of kind {kind} refused ({what})")
        self.kind = kind
        self.size = size
        self.cap = cap


class Payload(bytearray):
    """A frame's payload: the one buffer that decoded arrays and tensors are laid over (the
    reader keeps weak references to large ones, see ``FrameReader``)."""

    __slots__ = ("__weakref__",)


def send_frame(sock: socket.socket, kind: int, parts: Sequence[bytes | bytearray | memoryview],
               deadline: float | None = None) -> None:
    """Send ``parts`` as one frame of ``kind``: on a blocking socket, or on a non-blocking one by
    ``deadline`` (time.monotonic)."""
    size = sum(memoryview(p).nbytes for p in parts)
    views = [memoryview(HEADER.pack(size, kind))]
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


def recv_frame(sock: socket.socket, max_size: int = MAX_FRAME) -> tuple[int, Payload]:
    """One frame from a blocking socket: (kind, payload)."""
    header = bytearray(HEADER.size)
    recv_exact(sock, header)
    size, kind = HEADER.unpack(header)
    if size > max_size:
        raise FrameRefused(kind, size, max_size)
    payload = Payload(size)
    recv_exact(sock, payload)
    return kind, payload


class FrameReader:
    """Assembles one frame from a non-blocking socket, a piece at a time (grader side).

    ``caps``: the kinds of message expected next and the largest payload each may have. A frame
    of another kind, or larger, is refused from its header, before anything is allocated for it.

    Memory: a payload of ``LARGE`` bytes or more is the one buffer its arrays are laid over. When
    an earlier large payload (of any reader) is still in memory as a new one arrives, unreachable
    reference cycles are collected first (a failed check's traceback keeps the value it compared
    until then), so the grader holds the values its code still uses, plus one reply."""

    def __init__(self, sock: socket.socket, caps: Mapping[int, int]) -> None:
        self.sock = sock
        self.caps = caps
        self._reset()

    def _reset(self) -> None:
        self.header = bytearray(HEADER.size)
        self.payload: Payload | None = None
        self.kind = 0
        self.got = 0

    def read_some(self) -> tuple[int, Payload] | None:
        """Read what is available; (kind, payload) once the frame is complete, else None.
        Raises ChannelClosed at end of stream, FrameRefused for a frame not wanted."""
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
                size, kind = HEADER.unpack(self.header)
                cap = self.caps.get(kind)
                if cap is None or size > cap:
                    raise FrameRefused(kind, size, cap)
                if size >= LARGE:
                    _make_room()
                self.payload = Payload(size)
                if size >= LARGE:
                    _large.append(weakref.ref(self.payload))
                self.kind = kind
                self.got = 0
                if size:
                    continue
            kind, payload = self.kind, self.payload
            self._reset()
            return kind, payload


_large: list[weakref.ref[Payload]] = []  # this process's large payloads, any reader's


def _make_room() -> None:
    """Before a large payload: collect unreachable cycles if an earlier one is still in memory."""
    if any(ref() is not None for ref in _large):
        gc.collect()
    _large[:] = [ref for ref in _large if ref() is not None]


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

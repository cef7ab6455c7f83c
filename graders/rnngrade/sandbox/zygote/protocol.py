"""The messages a zygote sends and receives: one small frozen type per kind of message, and the
one decoder that turns a packet back into them.

The zygote's configuration (``Boot``) is its first message, JSON, read before its ``sys.path``
lets it import rnngrade. Every later message is one SOCK_SEQPACKET packet (``channel``): a
``codec``-encoded tuple, the message's tag then its fields (no pickle), with descriptors as
SCM_RIGHTS; how many descriptors travel is part of the message (``FDS``).

    grader -> zygote (control channel)          zygote -> grader
    Boot(path, hidden, imports)   first, JSON   Ready(pid, privileged, binds, dirs) | Broken(why)
    Spawn(seq, device, limits, isolate) + 3 fds Spawned(seq, pid) | Failure(seq, why)
    Reap(seq, pid, timeout)                     Reaped(seq, status | None, cpu)
    Release(pid)                                (no answer)
    Clone(seq) + 1 fd (the clone's channel)     Cloned(seq, pid) | Failure(seq, why)
                                                and, on that channel, the clone's Ready | Broken

    within the zygote's process tree (a spare's channel)
    intermediate -> zygote  Forked(pid, problems)  the spare's pid
    spare -> zygote         Prepared(problems)     jailed and warmed up, waiting
    zygote -> spare         Assign(limits) + 3 fds become the worker on these descriptors

``decode_message`` checks the tag against the kinds the receiver expects, the number of fields and
descriptors, and every field's type; a packet that fails a check raises ``ProtocolError``. Both
sides are the grader's own code, so a refused message is a grader bug: the client turns it into
``SandboxUnavailable``, the zygote drops it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from rnngrade.sandbox.channel import recv_packet, send_packet
from rnngrade.sandbox.codec import ProtocolError

SPARE_TIMEOUT = 60.0  # the longest the zygote waits for a spare; the client waits for it thrice
_SHOWN = 200  # characters of a refused message quoted in the error


# ----------------------------------------------------------------------------- field checks

def _int(value: object) -> int:
    if type(value) is not int:
        raise TypeError("not an int")
    return value


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError("not a bool")
    return value


def _str(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not a str")
    return value


def _seconds(value: object) -> float:
    if type(value) is int or type(value) is float:
        return float(value)
    raise TypeError("not a number")


def _status(value: object) -> int | None:
    return None if value is None else _int(value)


def _texts(value: object) -> tuple[str, ...]:
    if (type(value) is list or type(value) is tuple) and all(type(v) is str for v in value):
        return tuple(value)
    raise TypeError("not a sequence of str")


def _limits(value: object) -> dict[str, int]:
    if type(value) is not dict or not all(type(k) is str and type(v) is int
                                          for k, v in value.items()):
        raise TypeError("not a dict of str to int")
    return dict(value)


# ----------------------------------------------------------------------------- the messages

@dataclass(frozen=True, slots=True)
class Boot:
    """The zygote's configuration: its ``sys.path``, the grader paths its workers must not see,
    the modules it imports for them (a lab's ``worker_imports``)."""

    path: tuple[str, ...]
    hidden: tuple[str, ...]
    imports: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Spawn:
    """Hand a spare the worker's descriptors (its channel to the grader, stdout and stderr)."""

    TAG: ClassVar[str] = "spawn"
    FDS: ClassVar[int] = 3
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _str, _limits, _bool)
    seq: int
    device: str
    limits: dict[str, int]
    isolate: bool


@dataclass(frozen=True, slots=True)
class Reap:
    """The wait status of worker ``pid`` once it ends, waiting at most ``timeout`` seconds."""

    TAG: ClassVar[str] = "reap"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _int, _seconds)
    seq: int
    pid: int
    timeout: float


@dataclass(frozen=True, slots=True)
class Release:
    """Kill (if needed) and forget worker ``pid``; the zygote reaps it in the background."""

    TAG: ClassVar[str] = "release"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int,)
    pid: int


@dataclass(frozen=True, slots=True)
class Clone:
    """Fork a zygote for another grader, serving the channel that comes with this message."""

    TAG: ClassVar[str] = "clone"
    FDS: ClassVar[int] = 1
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int,)
    seq: int


@dataclass(frozen=True, slots=True)
class Ready:
    """The zygote's first message: its pid, whether it runs as root, the host directories its
    workers get bound read-only, and its own directories (removed by the client when the
    zygote could not)."""

    TAG: ClassVar[str] = "ready"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _bool, _texts, _texts)
    pid: int
    privileged: bool
    binds: tuple[str, ...]
    dirs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Broken:
    """Instead of ``Ready``: the zygote cannot serve, and why."""

    TAG: ClassVar[str] = "broken"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_str,)
    why: str


@dataclass(frozen=True, slots=True)
class Spawned:
    """The worker asked for by ``Spawn`` ``seq`` runs as ``pid``."""

    TAG: ClassVar[str] = "spawned"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _int)
    seq: int
    pid: int


@dataclass(frozen=True, slots=True)
class Failure:
    """``Spawn`` or ``Clone`` ``seq`` could not be done, and why."""

    TAG: ClassVar[str] = "failed"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _str)
    seq: int
    why: str


@dataclass(frozen=True, slots=True)
class Reaped:
    """The answer to ``Reap`` ``seq``: the wait status (None: not ended in time, or not a worker
    of this zygote) and the CPU seconds the worker used."""

    TAG: ClassVar[str] = "reaped"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _status, _seconds)
    seq: int
    status: int | None
    cpu: float


@dataclass(frozen=True, slots=True)
class Cloned:
    """The clone asked for by ``Clone`` ``seq`` runs as ``pid``."""

    TAG: ClassVar[str] = "cloned"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _int)
    seq: int
    pid: int


@dataclass(frozen=True, slots=True)
class Forked:
    """From the intermediate process: the spare is ``pid``; ``problems``: namespaces it could not
    enter."""

    TAG: ClassVar[str] = "forked"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_int, _texts)
    pid: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Prepared:
    """From a spare: jailed and warmed up, waiting for ``Assign``; ``problems``: what of its jail
    could not be built."""

    TAG: ClassVar[str] = "prepared"
    FDS: ClassVar[int] = 0
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_texts,)
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Assign:
    """To a spare: become the worker, within ``limits``, on the three descriptors that come with
    this message."""

    TAG: ClassVar[str] = "assign"
    FDS: ClassVar[int] = 3
    SHAPE: ClassVar[tuple[Callable[[Any], Any], ...]] = (_limits,)
    limits: dict[str, int]


Request = Spawn | Reap | Release | Clone
Answer = Spawned | Failure | Reaped | Cloned
Greeting = Ready | Broken
SpareMessage = Forked | Prepared | Assign
Message = Request | Answer | Greeting | SpareMessage

REQUESTS: tuple[type[Request], ...] = (Spawn, Reap, Release, Clone)
ANSWERS: tuple[type[Answer], ...] = (Spawned, Failure, Reaped, Cloned)
GREETINGS: tuple[type[Greeting], ...] = (Ready, Broken)
_TYPES: dict[str, type[Message]] = {
    kind.TAG: kind for kind in (*REQUESTS, *ANSWERS, *GREETINGS, Forked, Prepared, Assign)}

M = TypeVar("M", bound=Message)


# ----------------------------------------------------------------------------- encoding

def encode_message(message: Message) -> tuple[Any, ...]:
    """What travels for ``message``: its tag, then its fields."""
    return (message.TAG, *[getattr(message, name) for name in message.__match_args__])


def decode_message(raw: object, fds: int, expected: Sequence[type[M]]) -> M:
    """The one check of a packet: ``raw`` (the decoded packet) as a message of one of the
    ``expected`` kinds, arriving with ``fds`` descriptors, every field checked (a sequence of
    texts becomes a tuple, a number of seconds a float). Raises ProtocolError."""
    if type(raw) is not tuple or not raw or type(raw[0]) is not str:
        raise ProtocolError(f"a message without a tag: {_shown(raw)}")
    kind = _TYPES.get(raw[0])
    if kind is None or kind not in expected:
        raise ProtocolError(f"an unexpected {raw[0][:_SHOWN]!r} message "
                            f"(expected {', '.join(repr(k.TAG) for k in expected)})")
    names = kind.__match_args__
    if len(raw) - 1 != len(names):
        raise ProtocolError(f"a {kind.TAG!r} message with {len(raw) - 1} fields, "
                            f"not {len(names)}: {_shown(raw)}")
    if fds != kind.FDS:
        raise ProtocolError(f"a {kind.TAG!r} message with {fds} descriptors, not {kind.FDS}")
    values = []
    for name, check, value in zip(names, kind.SHAPE, raw[1:]):
        try:
            values.append(check(value))
        except TypeError as exc:
            raise ProtocolError(f"a {kind.TAG!r} message whose {name} is {exc}: "
                                f"{_shown(value)}") from None
    return kind(*values)  # type: ignore[return-value]  # ``kind`` is one of ``expected``


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def send_message(sock: socket.socket, message: Message, fds: Sequence[int] = ()) -> None:
    """Send ``message`` as one packet, with its descriptors."""
    if len(fds) != message.FDS:
        raise ValueError(f"a {message.TAG!r} message takes {message.FDS} descriptors, "
                         f"not {len(fds)}")
    send_packet(sock, encode_message(message), fds)


def recv_message(sock: socket.socket, expected: Sequence[type[M]],
                 timeout: float | None = None) -> tuple[M, list[int]]:
    """One packet as a message of one of the ``expected`` kinds, and its descriptors (the
    receiver's to close). Raises ChannelClosed, ChannelTimeout, or ProtocolError (having closed
    the descriptors that came with the refused packet)."""
    raw, fds = recv_packet(sock, timeout)
    try:
        return decode_message(raw, len(fds), expected), fds
    except ProtocolError:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


def encode_boot(boot: Boot) -> bytes:
    """``boot`` as JSON (the zygote reads its ``path`` before it can import this module)."""
    return json.dumps({"path": list(boot.path), "hidden": list(boot.hidden),
                       "imports": list(boot.imports)}).encode()


def decode_boot(data: bytes) -> Boot:
    """The zygote's configuration from ``data``. Raises ProtocolError."""
    try:
        fields = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"a configuration that is not JSON ({exc})") from None
    if type(fields) is not dict or set(fields) != set(Boot.__match_args__):
        raise ProtocolError(f"a configuration with the wrong fields: {_shown(fields)}")
    try:
        return Boot(*(_texts(fields[name]) for name in Boot.__match_args__))
    except TypeError as exc:
        raise ProtocolError(f"a configuration with a field that is {exc}") from None

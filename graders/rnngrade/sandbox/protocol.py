"""The messages between the grader and a worker: one small frozen type per kind of message, and
the one decoder that turns a worker's bytes into them.

A frame is a header (payload size, ``Kind``) and a payload, the message's fields as one
``codec``-encoded tuple (no pickle). The kind travels in the header, so the grader refuses a
message it does not expect, or one larger than its kind may be (``reply_caps``), before it
allocates anything for it.

    grader -> worker                           worker -> grader
    Load(source, filename, handle_base,        Hello(protections, details)      first, unasked
         helpers)
    Call(seq, name, args, kwargs, helper,      Loaded(notes, fatal, functions)  answers Load
         head)                                 Value(seq, value, args, kwargs)  answers Call
    Has(seq, name)                             Failed(seq, kind, message,       answers Call
    Exit()                                            recycle)                  or Has
                                               Found(seq, found)                answers Has

Once a submission is loaded the worker is the student's: ``decode_reply`` checks the kind against
the request, the sequence number and every field's type, and cuts each text field to its cap
(``MESSAGE_CHARS``, ``NOTE_CHARS`` ...) whatever the worker claims to have cut. A reply that fails
a check raises ``ProtocolError``, which the runner turns into a failed call with the reason (the
student's doing, never a grader error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, ClassVar

from rnngrade.harness.runner.base import (
    CRASH,
    EXCEPTION,
    EXIT,
    LOAD_ERROR,
    MEMORY,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    OUTPUT_LIMIT,
    PROTOCOL,
    TIMEOUT,
)
from rnngrade.sandbox.codec import HandleTable, ProtocolError, decode, encode

# Caps on what the grader keeps of one reply, per field (characters). The worker cuts to the same
# caps so that an honest reply never meets them; the grader cuts again, trusting nothing.
MESSAGE_CHARS = 4000  # an error message, a fatal load error
NOTE_CHARS = 1000  # one load note
MAX_NOTES = 20
NAME_CHARS = 200  # one function name the loaded module defines
MAX_FUNCTIONS = 2000
DETAIL_CHARS = 1000  # one protection's name or detail
MAX_DETAILS = 64
TRUNCATED = " [... truncated]"

ERROR_KINDS = frozenset({EXCEPTION, NOT_IMPLEMENTED, MISSING_FUNCTION, LOAD_ERROR, TIMEOUT, MEMORY,
                         CRASH, EXIT, PROTOCOL, OUTPUT_LIMIT})


class Kind(IntEnum):
    """A message's kind: one byte of its frame's header."""

    LOAD = 1
    CALL = 2
    HAS = 3
    EXIT = 4
    HELLO = 16
    LOADED = 17
    VALUE = 18
    FAILED = 19
    FOUND = 20

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {Kind.LOAD: "a load request", Kind.CALL: "a call", Kind.HAS: "a question",
           Kind.EXIT: "an exit request", Kind.HELLO: "a greeting", Kind.LOADED: "a load report",
           Kind.VALUE: "a result", Kind.FAILED: "an error report", Kind.FOUND: "an answer"}

# The largest payload of each kind of reply, in bytes (``Kind.VALUE``: set per runner, see
# ``reply_caps``). Honest replies stay far below: a message is at most 4000 characters, a load
# report 20 notes and 2000 names.
SMALL_REPLY = 64 << 10
LOADED_REPLY = 1 << 20
FOUND_REPLY = 64


def reply_caps(value_bytes: int) -> dict[int, int]:
    """The largest payload per kind of reply, a result taking at most ``value_bytes``."""
    return {Kind.HELLO: SMALL_REPLY, Kind.LOADED: LOADED_REPLY, Kind.VALUE: value_bytes,
            Kind.FAILED: SMALL_REPLY, Kind.FOUND: FOUND_REPLY}


def expecting(caps: dict[int, int], *kinds: Kind) -> dict[int, int]:
    """``caps`` restricted to ``kinds``: what a FrameReader accepts next."""
    return {kind: caps[kind] for kind in kinds}


# ----------------------------------------------------------------------------- grader -> worker

@dataclass(frozen=True, slots=True)
class Load:
    """Load the submission: its source text under ``filename``; handles number from
    ``handle_base`` on (so a restarted worker's handles never alias an earlier worker's);
    ``helpers``: the source of the lab's own grader helpers, run first ("": none)."""

    KIND: ClassVar[Kind] = Kind.LOAD
    source: str
    filename: str
    handle_base: int
    helpers: str = ""


@dataclass(frozen=True, slots=True)
class Call:
    """Call ``name`` (a student function, or a grader helper when ``helper``); ``head``: only the
    first ``head`` items of a tuple or list result are wanted."""

    KIND: ClassVar[Kind] = Kind.CALL
    seq: int
    name: str
    args: tuple
    kwargs: dict
    helper: bool = False
    head: int | None = None


@dataclass(frozen=True, slots=True)
class Has:
    """Whether the loaded module has a callable ``name``."""

    KIND: ClassVar[Kind] = Kind.HAS
    seq: int
    name: str


@dataclass(frozen=True, slots=True)
class Exit:
    """End the worker."""

    KIND: ClassVar[Kind] = Kind.EXIT


# ----------------------------------------------------------------------------- worker -> grader

@dataclass(frozen=True, slots=True)
class Hello:
    """The worker's first message: which protections it measured in force, and why any is not."""

    KIND: ClassVar[Kind] = Kind.HELLO
    protections: dict[str, bool]
    details: dict[str, str]


@dataclass(frozen=True, slots=True)
class Loaded:
    """The submission is loaded (``fatal``: why it cannot be used at all); ``functions``: the
    public names it binds to plain functions."""

    KIND: ClassVar[Kind] = Kind.LOADED
    notes: tuple[str, ...]
    fatal: str | None
    functions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Value:
    """A call returned ``value``; ``args``/``kwargs``: the arguments after it (both None: the
    worker vouches the call changed none of them)."""

    KIND: ClassVar[Kind] = Kind.VALUE
    seq: int
    value: Any
    args: tuple | None
    kwargs: dict | None


@dataclass(frozen=True, slots=True)
class Failed:
    """A call failed: ``kind`` (see ``runner.base``) and ``message``; ``recycle``: the worker is
    spent (out of memory) and must be replaced. ``seq`` -1: the request did not decode."""

    KIND: ClassVar[Kind] = Kind.FAILED
    seq: int
    kind: str
    message: str
    recycle: bool


@dataclass(frozen=True, slots=True)
class Found:
    """The answer to ``Has``."""

    KIND: ClassVar[Kind] = Kind.FOUND
    seq: int
    found: bool


Request = Load | Call | Has | Exit
Reply = Hello | Loaded | Value | Failed | Found
Message = Request | Reply


def encode_message(message: Message, handles: HandleTable | None = None
                   ) -> tuple[Kind, list[bytes | bytearray | memoryview]]:
    """(kind, buffers) of ``message``: its fields as one encoded tuple. ``handles`` (worker side):
    where objects that are not plain data are kept."""
    fields = tuple([getattr(message, name) for name in message.__match_args__])
    return message.KIND, encode(fields, handles=handles)


# ----------------------------------------------------------------------------- decoding

def _fields(kind: int, payload: bytearray, count: int, handles: HandleTable | None = None,
            report: dict | None = None) -> tuple:
    fields = decode(payload, handles=handles, report=report)
    if type(fields) is not tuple or len(fields) != count:
        raise ProtocolError(f"{Kind(kind).label} with the wrong fields")
    return fields


def decode_request(kind: int, payload: bytearray, handles: HandleTable,
                   report: dict | None = None) -> Request:
    """Worker side: the grader's request (trusted, but checked all the same)."""
    if kind == Kind.CALL:
        seq, name, args, kwargs, helper, head = _fields(kind, payload, 6, handles, report)
        if not (type(seq) is int and type(name) is str and type(args) is tuple
                and type(kwargs) is dict and type(helper) is bool
                and (head is None or type(head) is int)):
            raise ProtocolError("a malformed call")
        return Call(seq, name, args, kwargs, helper, head)
    if kind == Kind.HAS:
        seq, name = _fields(kind, payload, 2)
        if not (type(seq) is int and type(name) is str):
            raise ProtocolError("a malformed question")
        return Has(seq, name)
    if kind == Kind.LOAD:
        source, filename, handle_base, helpers = _fields(kind, payload, 4)
        if not (type(source) is str and type(filename) is str and type(handle_base) is int
                and type(helpers) is str):
            raise ProtocolError("a malformed load request")
        return Load(source, filename, handle_base, helpers)
    if kind == Kind.EXIT:
        _fields(kind, payload, 0)
        return Exit()
    raise ProtocolError(f"a message of unknown kind {kind}")


def decode_reply(kind: int, payload: bytearray, seq: int | None = None) -> Reply:
    """Grader side, the one check of what a worker sends: the reply as its type, every field
    checked and every text cut to its cap. ``seq``: the request it must answer (a ``Failed``
    with seq -1, "your request did not decode", answers any). Raises ProtocolError."""
    if kind == Kind.VALUE:
        got, value, args, kwargs = _fields(kind, payload, 4)
        if not (args is None and kwargs is None
                or type(args) is tuple and type(kwargs) is dict):
            raise ProtocolError("a result with malformed arguments")
        _check_seq(got, seq)
        return Value(got, value, args, kwargs)
    if kind == Kind.FAILED:
        got, error, message, recycle = _fields(kind, payload, 4)
        if not (type(error) is str and error in ERROR_KINDS and type(message) is str
                and type(recycle) is bool):
            raise ProtocolError("a malformed error report")
        if got != -1:
            _check_seq(got, seq)
        return Failed(got, error, cap_text(message, MESSAGE_CHARS), recycle)
    if kind == Kind.FOUND:
        got, found = _fields(kind, payload, 2)
        if type(found) is not bool:
            raise ProtocolError("a malformed answer")
        _check_seq(got, seq)
        return Found(got, found)
    if kind == Kind.LOADED:
        notes, fatal, functions = _fields(kind, payload, 3)
        if not (type(notes) is tuple and all(type(n) is str for n in notes)
                and (fatal is None or type(fatal) is str)
                and type(functions) is tuple and all(type(n) is str for n in functions)):
            raise ProtocolError("a malformed load report")
        return Loaded(cap_notes(notes), None if fatal is None else cap_text(fatal, MESSAGE_CHARS),
                      tuple(n for n in functions[:MAX_FUNCTIONS] if len(n) <= NAME_CHARS))
    if kind == Kind.HELLO:
        protections, details = _fields(kind, payload, 2)
        if not (type(protections) is dict and type(details) is dict
                and all(type(v) is str for v in details.values())
                and len(protections) <= MAX_DETAILS and len(details) <= MAX_DETAILS):
            raise ProtocolError("a malformed greeting")
        return Hello({cap_text(k, DETAIL_CHARS): v is True for k, v in protections.items()},
                     {cap_text(k, DETAIL_CHARS): cap_text(v, DETAIL_CHARS)
                      for k, v in details.items()})
    raise ProtocolError(f"a message of unknown kind {kind}")


def _check_seq(got: Any, seq: int | None) -> None:
    if type(got) is not int or (seq is not None and got != seq):
        raise ProtocolError("an answer to a request that was never made")


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def cap_notes(notes: Sequence[str]) -> tuple[str, ...]:
    """At most ``MAX_NOTES`` notes of at most ``NOTE_CHARS`` characters each."""
    kept = [cap_text(note, NOTE_CHARS) for note in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        kept[-1] = f"... and {len(notes) - MAX_NOTES + 1} more notes"
    return tuple(kept)

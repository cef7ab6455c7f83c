"""The worker protocol's types and its one validating decoder (no worker process here)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnngrade.harness.runner.base import EXCEPTION, PROTOCOL
from rnngrade.sandbox.codec import HandleTable, ProtocolError, encode_bytes
from rnngrade.sandbox.protocol import (
    MAX_FUNCTIONS,
    MAX_NOTES,
    MESSAGE_CHARS,
    NAME_CHARS,
    NOTE_CHARS,
    TRUNCATED,
    Call,
    Exit,
    Failed,
    Found,
    Has,
    Hello,
    Kind,
    Load,
    Loaded,
    Value,
    decode_reply,
    decode_request,
    encode_message,
)


def wire(message) -> tuple[int, bytearray]:
    kind, parts = encode_message(message)
    return kind, bytearray(b"".join(bytes(p) for p in parts))


@pytest.mark.parametrize("reply", [
    Hello({"pid namespace": True, "system call filter": False}, {"why": "old kernel"}),
    Loaded(("line 3 does not parse as Python and was skipped",), None, ("softmax", "rnn")),
    Loaded((), "the submission does not compile: invalid syntax", ()),
    Value(4, (np.arange(6.0).reshape(2, 3), {"k": [1, "x"]}), (np.ones(2),), {"a": 1}),
    Value(4, None, None, None),
    Failed(4, EXCEPTION, "ValueError: shapes do not match", False),
    Failed(-1, PROTOCOL, "bad request", False),
    Found(4, True),
])
def test_every_reply_comes_back_as_its_own_type(reply):
    kind, payload = wire(reply)
    back = decode_reply(kind, payload, 4)
    assert type(back) is type(reply) and kind == reply.KIND
    assert repr(back) == repr(reply)


@pytest.mark.parametrize("request_", [
    Load("def f():\n    return 1\n", "rnn.py", 1 << 32),
    Call(7, "softmax", (np.ones((3, 2)),), {"axis": 0}, False, 2),
    Call(8, "grad_check", (), {}, True, None),
    Has(9, "rnn_forward"),
    Exit(),
])
def test_every_request_comes_back_as_its_own_type(request_):
    kind, payload = wire(request_)
    back = decode_request(kind, payload, HandleTable())
    assert type(back) is type(request_) and repr(back) == repr(request_)


def forged(kind: Kind, fields: tuple) -> tuple[int, bytearray]:
    return kind, bytearray(encode_bytes(fields))


@pytest.mark.parametrize("kind, fields, words", [
    (Kind.VALUE, (4, 1, (), {}, "extra"), "wrong fields"),
    (Kind.VALUE, (4, 1, (), None), "malformed arguments"),
    (Kind.VALUE, (4, 1, [], {}), "malformed arguments"),
    (Kind.VALUE, (5, 1, None, None), "never made"),
    (Kind.VALUE, ("4", 1, None, None), "never made"),
    (Kind.FAILED, (4, "regraded", "full marks", False), "malformed error report"),
    (Kind.FAILED, (4, EXCEPTION, b"bytes", False), "malformed error report"),
    (Kind.FAILED, (4, EXCEPTION, "text", 1), "malformed error report"),
    (Kind.FAILED, (3, EXCEPTION, "text", False), "never made"),
    (Kind.FOUND, (4, 1), "malformed answer"),
    (Kind.LOADED, (["a list"], None, ()), "malformed load report"),
    (Kind.LOADED, ((), 3, ()), "malformed load report"),
    (Kind.LOADED, ((), None, (1,)), "malformed load report"),
    (Kind.HELLO, ({"pid namespace": True}, {"why": 1}), "malformed greeting"),
    (Kind.HELLO, ({str(i): True for i in range(100)}, {}), "malformed greeting"),
    (99, (), "unknown kind"),
    (Kind.VALUE, [4, 1, None, None], "wrong fields"),
])
def test_a_malformed_reply_is_a_protocol_error_saying_what_is_wrong(kind, fields, words):
    with pytest.raises(ProtocolError, match=words):
        decode_reply(*forged(kind, fields), 4)


def test_the_grader_cuts_every_text_field_to_its_cap_whatever_the_worker_sent():
    failed = decode_reply(*forged(Kind.FAILED, (4, EXCEPTION, "x" * 50_000, False)), 4)
    assert failed.message == "x" * MESSAGE_CHARS + TRUNCATED
    notes = tuple(f"note {i} " + "y" * 5000 for i in range(50))
    names = ("a" * (NAME_CHARS + 1), "softmax") + tuple(f"f{i}" for i in range(3000))
    loaded = decode_reply(*forged(Kind.LOADED, (notes, "z" * 9000, names)))
    assert len(loaded.notes) == MAX_NOTES
    assert all(len(n) <= NOTE_CHARS + len(TRUNCATED) for n in loaded.notes)
    assert loaded.notes[0].startswith("note 0 ") and loaded.notes[-1] == "... and 31 more notes"
    assert loaded.fatal == "z" * MESSAGE_CHARS + TRUNCATED
    assert "softmax" in loaded.functions and len(loaded.functions) == MAX_FUNCTIONS - 1
    assert all(len(n) <= NAME_CHARS for n in loaded.functions)
    hello = decode_reply(*forged(Kind.HELLO, ({"k" * 5000: True, "m": 1}, {"d": "v" * 5000})))
    assert hello.protections == {"k" * 1000 + TRUNCATED: True, "m": False}
    assert hello.details == {"d": "v" * 1000 + TRUNCATED}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(Kind) + [0, 255]), st.binary(max_size=200))
def test_random_bytes_of_any_kind_decode_or_are_refused_never_anything_else(kind, data):
    try:
        decode_reply(kind, bytearray(data), 4)
    except ProtocolError:
        pass

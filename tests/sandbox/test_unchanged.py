"""A reply leaves the arguments out only when the call changed none of them: every kind of
in-place change still reaches the grader's check, and an untouched call costs no copy back."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from rnngrade.harness.checks.arguments import changed_entry as first_difference
from rnngrade.sandbox.codec import decode, encode
from rnngrade.sandbox.unchanged import ArgumentGuard

CHANGES = textwrap.dedent('''
    import numpy as np


    def nothing(x, p, items, t):
        return float(np.sum(x)) + len(items)


    def undone(x, p, items, t):
        x[0, 0] += 1.0
        x[0, 0] -= 1.0


    def element(x, p, items, t):
        x[1, 2] = 7.0


    def entry_replaced(x, p, items, t):
        p["W"] = p["W"] * 2


    def entry_added(x, p, items, t):
        p["extra"] = 1


    def entry_removed(x, p, items, t):
        del p["b"]


    def list_appended(x, p, items, t):
        items.append(3)


    def nested_array(x, p, items, t):
        items[1][0][:] = 0.0


    def reshaped(x, p, items, t):
        x.shape = (x.size,)


    def retyped(x, p, items, t):
        x.dtype = np.int64


    def tensor_in_place(x, p, items, t):
        t.mul_(3)


    def tensor_flag(x, p, items, t):
        t.requires_grad_(True)
''')


def arguments():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((3, 4)) + 2.0,
            {"W": rng.standard_normal((2, 2)), "b": np.ones((2, 1))},
            [1, [np.ones(3)]],
            torch.arange(4, dtype=torch.float64))


def test_an_untouched_call_hands_back_the_grader_s_own_arguments(sandbox):
    args = arguments()
    for function in ("nothing", "undone"):
        result = sandbox(CHANGES).call(function, args)
        assert result.args_after is args


@pytest.mark.parametrize("function", ["element", "entry_replaced", "entry_added",
                                      "entry_removed", "list_appended", "nested_array",
                                      "reshaped", "retyped", "tensor_in_place", "tensor_flag"])
def test_every_in_place_change_comes_back_to_the_grader(sandbox, function):
    args = arguments()
    result = sandbox(CHANGES).call(function, args)
    assert result.args_after is not args
    if function == "tensor_flag":
        assert result.args_after[3].requires_grad and not args[3].requires_grad
    else:
        assert first_difference(args, result.args_after, "arguments")
    assert not first_difference(args, arguments(), "arguments")  # the grader's copy as it was


def guard_on(values):
    payload = bytearray(b"".join(bytes(p) for p in encode(values)))
    report: dict = {}
    decoded = decode(payload, report=report)
    return decoded, ArgumentGuard(decoded, payload, report["in_place"])


def test_the_guard_vouches_only_for_what_it_can_see():
    (x, p), guard = guard_on((np.ones(3), {"a": np.zeros(2)}))
    assert guard.unchanged()
    p["a"] = np.zeros(2)  # equal values, another array
    assert not guard.unchanged()
    (x, p), guard = guard_on((np.ones(3), {"a": np.zeros(2)}))
    x[0] = 2.0
    assert not guard.unchanged()
    payload = bytearray(b"".join(bytes(q) for q in encode((np.ones(2),))))
    assert not ArgumentGuard(decode(payload), payload, in_place=False).unchanged()
    assert ArgumentGuard((object(),), bytearray(8), True).entries is None  # an opaque object
    assert guard_on((np.float32(1.0), "text", [1, 2.5]))[1].unchanged()

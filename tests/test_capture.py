"""Capturing a function's locals copies only bounded numeric values and runs none of their code."""
# ruff: noqa: F841 - the locals of `student` are what is captured

from __future__ import annotations

import numpy as np
import torch

from rnngrade.harness.capture import MAX_NAMES, RETURN, capture_call


class Evil:
    def __getattr__(self, name):
        raise RuntimeError("attribute")

    def __eq__(self, other):
        raise RuntimeError("eq")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("array")

    __hash__ = None


class Sub(np.ndarray):
    def __array__(self, *args, **kwargs):
        raise RuntimeError("array")

    def __eq__(self, other):
        raise RuntimeError("eq")


def student(x):
    good = 2 * x
    huge = np.ones(2_000_000)
    evil = Evil()
    sub = np.arange(4.0).reshape(2, 2).view(Sub)
    grad = torch.ones(3, requires_grad=True) * 3
    cycle = []
    cycle.append(cycle)
    grads = {"dW": x + 1, (1, 2): x}  # a key that is not a string is skipped unread
    objects = np.empty(1, dtype=object)
    objects[0] = evil
    return {"out": good}


def test_capture_keeps_numeric_copies_only():
    x = np.ones((2, 3))
    value, taken = capture_call(student, lambda: student(x))
    assert set(value) == {"out"}
    assert np.array_equal(taken["good"], 2 * x) and taken["good"].dtype == np.float64
    assert np.array_equal(taken["sub"], np.arange(4.0).reshape(2, 2))
    assert type(taken["sub"]) is np.ndarray and type(taken["grad"]) is np.ndarray
    assert np.array_equal(taken[f"{RETURN}['out']"], 2 * x)
    assert np.array_equal(taken["grads['dW']"], x + 1)
    assert not {"huge", "evil", "cycle", "objects"} & set(taken)
    taken["good"][0, 0] = 7.0
    assert value["out"][0, 0] == 2.0  # a copy


def test_capture_is_bounded_and_leaves_the_call_alone():
    def many():
        names = {f"v{i}": np.ones(2) for i in range(200)}
        return names

    value, taken = capture_call(many, many)
    assert len(value) == 200 and len(taken) <= MAX_NAMES

    def raises():
        raise ValueError("student")

    try:
        capture_call(raises, raises)
    except ValueError as exc:
        assert str(exc) == "student"
    else:
        raise AssertionError("the student's exception must propagate")
    assert capture_call(Evil(), lambda: 5) == (5, {})  # not a plain function: nothing read

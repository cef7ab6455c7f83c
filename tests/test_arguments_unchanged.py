"""A student function that changes its arguments in place is named; one that leaves them alone
is not, whatever values they hold (NaN, -0.0), and the caller's own arrays never change."""

import textwrap

import numpy as np
import pytest
import torch

from rnngrade.grading.checker import check_arguments_unchanged
from rnngrade.harness.checks.arguments import changed_entry as first_difference
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy


@pytest.mark.parametrize("before", [
    np.array([1.0, np.nan, -0.0]), np.arange(6, dtype=np.int32).reshape(2, 3).T,
    np.array([1 + 2j, np.nan]), np.array([True, False]), np.array(["a", "b"]),
    torch.tensor([1.0, float("nan")], dtype=torch.float32)])
def test_equal_values_are_unchanged(before):
    after = before.clone() if isinstance(before, torch.Tensor) else before.copy()
    assert first_difference({"x": [before]}, {"x": [after]}, "argument 1") == ""


def test_equal_values_in_other_bits_are_unchanged_and_every_change_is_found():
    assert first_difference(np.array([0.0, np.nan]), np.array([-0.0, -np.nan]), "a") == ""
    assert first_difference(np.array([0.0, 1.0]), np.array([0.0, 1.0 + 1e-16 * 3]), "a") == "a"
    assert first_difference(np.ones((2, 3)), np.ones((3, 2)), "a") == "a"
    assert first_difference(np.arange(3), np.arange(3) * 2, "a") == "a"
    assert first_difference({"W": np.ones(2)}, {"W": np.ones(2), "b": 0}, "p") == "p['b'] added"
    assert first_difference(np.array([np.nan]), np.array([1.0]), "a") == "a"


MODULE = textwrap.dedent("""
    def scale_in_place(x, p):
        p["W"] *= 2.0
        return x

    def same(x, y):
        return x is y

    def pure(x, p):
        return x + p["W"]
""")


def test_the_in_process_runner_calls_on_copies_that_keep_shared_arrays_shared():
    m = ModuleProxy(InProcessRunner.from_source(MODULE, "mod.py"))
    x, W = np.ones(3), np.full(3, 0.5)
    assert m.same(x, x) is True  # one array passed twice stays one array, as deepcopy keeps it
    m.calls.clear()
    m.pure(x, {"W": W})
    check_arguments_unchanged(m.calls)
    m.calls.clear()
    m.scale_in_place(x, {"W": W})
    with pytest.raises(AssertionError, match=r"scale_in_place modified its input \(argument 2"):
        check_arguments_unchanged(m.calls)
    assert np.array_equal(W, np.full(3, 0.5))  # the caller's own array

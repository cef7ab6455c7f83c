"""``ModuleProxy.on_cache``: a backward pass on the cache of the module's own forward pass, in
one call beside the module, with the same results, messages and argument checks as two calls."""

import textwrap

import numpy as np
import pytest

from rnngrade.grading.checker import check_arguments_unchanged
from rnngrade.harness.runner.base import EXCEPTION, MISSING_FUNCTION, NOT_IMPLEMENTED, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy

MODULE = textwrap.dedent("""
    import numpy as np


    def forward(x, w):
        h = np.tanh(w * x)
        return h, (h, x, w)


    def backward(dh, cache):
        h, x, w = cache
        dz = dh * (1 - h ** 2)
        return {"dx": dz * w, "dw": float(np.sum(dz * x))}


    def forward_in_place(x, w):
        x *= 2.0
        return forward(x, w)


    def backward_in_place(dh, cache):
        dh += 1.0
        return backward(dh, cache)


    def no_cache(x, w):
        return np.tanh(w * x)


    def template(x, w):
        return None


    def blank(dh, cache):
        raise NotImplementedError
""")


@pytest.fixture
def m() -> ModuleProxy:
    return ModuleProxy(InProcessRunner.from_source(MODULE, "cells.py"))


def test_the_result_is_the_backward_pass_on_the_forward_pass_s_own_cache(m):
    x, dh = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)
    one_by_one = m.backward(dh, m.forward(x, 0.7)[1])
    together = m.on_cache("backward", (dh,), "forward", (x, 0.7), 1)
    assert np.array_equal(together["dx"], one_by_one["dx"])
    assert together["dw"] == one_by_one["dw"]


def test_both_calls_are_logged_so_a_changed_argument_is_named(m):
    x, dh = np.ones(3), np.ones(3)
    m.on_cache("backward", (dh,), "forward", (x, 0.5), 1)
    assert [c.function for c in m.calls] == ["forward", "backward"]
    check_arguments_unchanged(m.calls)  # nothing changed
    for function, producer, culprit in (("backward", "forward_in_place", "forward_in_place"),
                                        ("backward_in_place", "forward", "backward_in_place")):
        m.calls.clear()
        m.on_cache(function, (dh,), producer, (x, 0.5), 1)
        with pytest.raises(AssertionError, match=rf"^{culprit} modified its input \(argument 1"):
            check_arguments_unchanged(m.calls)
    assert np.array_equal(x, np.ones(3)) and np.array_equal(dh, np.ones(3))  # the caller's own


def test_a_forward_pass_without_a_cache_missing_and_unfinished_functions_say_so(m):
    with pytest.raises(StudentError) as info:
        m.on_cache("backward", (np.ones(2),), "no_cache", (np.ones(2), 1.0), 1)
    assert info.value.kind == EXCEPTION
    assert ("no_cache returned a value of type ndarray; backward needs the cache, item 1"
            in info.value.message)
    with pytest.raises(StudentError) as info:
        m.on_cache("backward", (np.ones(2),), "template", (np.ones(2), 1.0), 1)
    assert info.value.kind == NOT_IMPLEMENTED
    assert info.value.message.startswith("template returns None — looks unfinished")
    with pytest.raises(StudentError) as info:
        m.on_cache("backward", (np.ones(2),), "absent", (np.ones(2), 1.0), 1)
    assert info.value.kind == MISSING_FUNCTION and "`absent`" in info.value.message
    with pytest.raises(StudentError) as info:
        m.on_cache("blank", (np.ones(2),), "forward", (np.ones(2), 1.0), 1)
    assert info.value.kind == NOT_IMPLEMENTED and info.value.message.startswith("blank:")

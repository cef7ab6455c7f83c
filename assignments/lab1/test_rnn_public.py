"""Public tests for lab1. Run them with:  pytest assignments/lab1

Each test says which check failed, where, and by how much. The expected values come from
fixtures/public/lab1.npz, computed by the course's reference solution.
"""

import numpy as np
import pytest

from rnngrade.testing import assert_outputs

STUDENT_MODULE = "rnn"


def random_parameters(rng, n_x, n_a, n_y):
    return {"Wax": rng.standard_normal((n_a, n_x)), "Waa": rng.standard_normal((n_a, n_a)),
            "Wya": rng.standard_normal((n_y, n_a)), "ba": rng.standard_normal((n_a, 1)),
            "by": rng.standard_normal((n_y, 1))}


def assert_shape(name, value, expected):
    assert value is not None, f"{name} is None — looks unfinished"
    assert np.shape(value) == expected, f"{name} has shape {np.shape(value)}, expected {expected}"


def holds(got, want):
    """Whether ``got`` holds the same values as ``want`` (arrays, dicts, tuples or lists)."""
    if isinstance(want, np.ndarray):
        return isinstance(got, np.ndarray) and got.shape == want.shape and np.allclose(got, want)
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(
            holds(got[k], want[k]) for k in want)
    if isinstance(want, tuple | list):
        return isinstance(got, tuple | list) and len(got) == len(want) and all(
            holds(g, w) for g, w in zip(got, want))
    return got == want


@pytest.mark.points(2)
def test_softmax_small(student, vectors):
    case = vectors.case("softmax_small")
    got = student.softmax(*case.args)
    assert_outputs(got, case.outputs, "softmax(x)", inputs=case.args)


@pytest.mark.points(2)
def test_softmax_large_logits(student, vectors):
    case = vectors.case("softmax_large_logits")
    got = student.softmax(*case.args)
    assert_outputs(got, case.outputs, "softmax(x) with logits of ±1000", inputs=case.args)


@pytest.mark.points(2)
def test_rnn_cell_forward_shapes(student, rng):
    n_x, n_a, n_y, m = 3, 5, 2, 7
    a_next, yt_pred, _ = student.rnn_cell_forward(rng.standard_normal((n_x, m)),
                                                  rng.standard_normal((n_a, m)),
                                                  random_parameters(rng, n_x, n_a, n_y))
    assert_shape("a_next", a_next, (n_a, m))
    assert_shape("yt_pred", yt_pred, (n_y, m))


@pytest.mark.points(4)
def test_rnn_cell_forward_values(student, vectors):
    case = vectors.case("cell_small")
    a_next, yt_pred, _ = student.rnn_cell_forward(*case.args)
    assert_outputs((a_next, yt_pred), case.outputs, "rnn_cell_forward",
                   names=("a_next", "yt_pred"), inputs=case.args)


@pytest.mark.points(2)
def test_rnn_forward_shapes(student, rng):
    n_x, n_a, n_y, m, T_x = 3, 5, 2, 4, 6
    a, y_pred, _ = student.rnn_forward(rng.standard_normal((n_x, m, T_x)),
                                       rng.standard_normal((n_a, m)),
                                       random_parameters(rng, n_x, n_a, n_y))
    assert_shape("a", a, (n_a, m, T_x))
    assert_shape("y_pred", y_pred, (n_y, m, T_x))


@pytest.mark.points(4)
def test_rnn_forward_values(student, vectors):
    case = vectors.case("forward_small")
    a, y_pred, _ = student.rnn_forward(*case.args)
    assert_outputs((a, y_pred), case.outputs, "rnn_forward", names=("a", "y_pred"),
                   inputs=case.args)


@pytest.mark.points(1)
def test_rnn_cell_forward_cache(student, vectors):
    """Lab 2's backward step unpacks the cache as (a_next, a_prev, xt, parameters)."""
    xt, a_prev, parameters = vectors.case("cell_small").args
    a_next, _, cache = student.rnn_cell_forward(xt, a_prev, parameters)
    names = ("a_next", "a_prev", "xt", "parameters")
    assert isinstance(cache, tuple | list) and len(cache) == 4, \
        f"cache should be the tuple {names}; it is a {type(cache).__name__}" + (
            f" of {len(cache)} items" if isinstance(cache, tuple | list) else "")
    for i, (name, want) in enumerate(zip(names, (a_next, a_prev, xt, parameters))):
        assert holds(cache[i], want), f"cache[{i}] should be {name}: the cache is {names}"


@pytest.mark.points(1)
def test_rnn_forward_caches(student, vectors):
    """Lab 2's backward pass unpacks the caches as (list of the step caches, x), item t of the
    list being what rnn_cell_forward returned at step t."""
    x, a0, parameters = vectors.case("forward_small").args
    a, _, caches = student.rnn_forward(x, a0, parameters)
    assert isinstance(caches, tuple | list) and len(caches) == 2, \
        "caches should be the tuple (list of the step caches, x)"
    steps, inputs = caches
    T_x = x.shape[2]
    assert isinstance(steps, list) and len(steps) == T_x, \
        f"caches[0] should be a list of the {T_x} step caches"
    assert holds(inputs, x), "caches[1] should be x"
    assert_shape("a", a, (a0.shape[0], a0.shape[1], T_x))
    for t in range(T_x):
        state = a0 if t == 0 else a[:, :, t - 1]
        own = student.rnn_cell_forward(x[:, :, t], state, parameters)[2]
        assert holds(steps[t], own), \
            f"caches[0][{t}] should be the cache rnn_cell_forward returns at step {t}"


@pytest.mark.points(4)
def test_rnn_forward_batch_values(student, vectors):
    case = vectors.case("batch_small")
    states = student.rnn_forward_batch(*case.args)
    assert_outputs(states, case.outputs, "rnn_forward_batch states (B, T, H)", inputs=case.args)

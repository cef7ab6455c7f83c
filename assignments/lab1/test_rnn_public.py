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


@pytest.mark.points(4)
def test_rnn_forward_batch_values(student, vectors):
    case = vectors.case("batch_small")
    states = student.rnn_forward_batch(*case.args)
    assert_outputs(states, case.outputs, "rnn_forward_batch states (B, T, H)", inputs=case.args)

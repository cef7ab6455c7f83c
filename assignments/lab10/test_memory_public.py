"""Public tests for lab 10. Run them with:  pytest assignments/lab10
(and one training run as well with:  pytest assignments/lab10 --outcome)

Expected values come from fixtures/public/lab10.npz, computed by the course's reference solution;
the figures are the README's. The harness calls your functions on copies of their arguments, so a
test sees exactly what your function did to them.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from rnngrade.testing import EXACT, CheckFailure, Tolerance, assert_outputs, progress

STUDENT_MODULE = "memory"

# The README prints its figures to three significant digits.
PRINTED = Tolerance(0.0, 5e-3, "the README's figures, printed to three significant digits")
# README: the first 12 losses of train_recall equal the reference's to rtol 1e-5.
LOSSES = Tolerance(1e-6, 1e-5, "README: the first losses to rtol 1e-5")


def check_case(student, vectors, name, call=None, names=None, tol=None):
    case = vectors.case(name)
    got = call(student, *case.args) if call else getattr(student, case.function)(*case.args)
    assert_outputs(got, case.outputs, f"{case.function} (case {name})", names=names,
                   inputs=case.args, tol=tol)


def gradient_ratio_rnn(m, weights, inputs, readout):
    return m.gradient_ratio("rnn", weights, inputs, readout)


def gradient_ratio_lstm(m, weights, inputs, readout):
    return m.gradient_ratio("lstm", weights, inputs, readout)


def gradient_ratio_gru(m, weights, inputs, readout):
    return m.gradient_ratio("gru", weights, inputs, readout)


def profile_of_seed(m, H, rho, sigma_x, T, seed):
    return m.orthogonal_rnn_profile(H, rho, sigma_x, T, torch.Generator().manual_seed(seed))


def recall_of_seed(m, batch, lag, seed):
    return m.recall_batch(batch, lag, torch.Generator().manual_seed(seed))


def train_recall_lstm_losses(m, lag, forget_bias, updates, seed):
    return m.train_recall("lstm", lag, forget_bias, updates, seed)[2]


def train_recall_lin_losses(m, lag, updates, seed):
    return m.train_recall("lin", lag, 0.0, updates, seed)[2]


# ------------------------------------------------------------------ gradient_ratio

@pytest.mark.points(3)
def test_gradient_ratio_small(student, vectors):
    check_case(student, vectors, "ratio_rnn", gradient_ratio_rnn)
    check_case(student, vectors, "ratio_lstm", gradient_ratio_lstm)
    check_case(student, vectors, "ratio_gru", gradient_ratio_gru)


@pytest.mark.points(2)
def test_gradient_ratio_readme_table(student):
    """Two rows of the README's table: the default RNN and the LSTM with forget bias 3."""
    torch.set_num_threads(1)  # the README's figures were printed with one thread
    torch.manual_seed(1)
    inputs, readout = torch.randn(32, 200, 8), torch.randn(64)
    torch.manual_seed(1)
    rnn = nn.RNN(8, 64, batch_first=True).state_dict()
    torch.manual_seed(1)
    lstm = nn.LSTM(8, 64, batch_first=True)
    with torch.no_grad():
        lstm.bias_ih_l0[64:128] = 3.0
        lstm.bias_hh_l0[64:128] = 0.0
    rows = {"rnn": (rnn, [1.66e-03, 1.76e-07, 7.83e-28]),
            "lstm": (lstm.state_dict(), [3.34e-01, 3.20e-01, 3.36e-01])}
    for kind, (weights, printed) in rows.items():
        ratio = student.gradient_ratio(kind, weights, inputs, readout)
        if not isinstance(ratio, np.ndarray) or ratio.shape != (200,):
            raise CheckFailure(f"gradient_ratio should return a NumPy array of shape (200,), got "
                               f"{type(ratio).__name__} {getattr(ratio, 'shape', '')}")
        assert_outputs(ratio[[10, 25, 100]], np.array(printed),
                       f"gradient_ratio({kind}) at lags 10, 25, 100", tol=PRINTED)


# ------------------------------------------------------------------ cell path, simulation

@pytest.mark.points(2)
def test_cell_state_gradient(student, vectors):
    check_case(student, vectors, "cell_state")


@pytest.mark.points(1)
def test_cell_state_gradient_readme(student):
    torch.manual_seed(2)
    cell = nn.LSTMCell(8, 64)
    with torch.no_grad():
        for p in cell.parameters():
            p.mul_(0.1)
        cell.bias_ih[64:128] = 5.0
        cell.bias_hh[64:128] = 0.0
    inputs = torch.cat([torch.randn(1, 1, 8) for _ in range(100)], dim=1)
    got = student.cell_state_gradient(cell.state_dict(), inputs)
    assert_outputs(got, 8.99e-01, "cell_state_gradient(b_f = 5, weights ×0.1)", tol=PRINTED)


@pytest.mark.points(2)
def test_orthogonal_rnn_profile(student, vectors):
    check_case(student, vectors, "profile", profile_of_seed)


# ------------------------------------------------------------------ closed forms

@pytest.mark.points(3)
def test_closed_forms(student, vectors):
    for name in ("half_life", "forget_bias_half_life", "time_constant", "chrono_forget_bias",
                 "memory_after", "gru_half_life", "lru_half_life", "mode_period"):
        check_case(student, vectors, name)


@pytest.mark.points(1)
def test_readme_half_lives(student):
    assert_outputs(student.forget_bias_half_life(np.array([1.0, 3.0, 5.0])),
                   np.array([2.21, 14.3, 103.2]), "forget_bias_half_life(1, 3, 5)", tol=PRINTED)
    assert_outputs(student.lru_half_life(np.array([0.9, 0.999])), np.array([6.58, 692.8]),
                   "lru_half_life(0.9, 0.999)", tol=PRINTED)
    assert_outputs(student.chrono_forget_bias(1 + 250 / math.log(2)), 5.888,
                   "chrono_forget_bias(1 + 250/ln 2)", tol=PRINTED)


# ------------------------------------------------------------------ recall

@pytest.mark.points(2)
def test_recall_batch(student, vectors):
    check_case(student, vectors, "recall", recall_of_seed, names=("x", "y"), tol=EXACT)


@pytest.mark.points(2)
def test_train_recall_first_losses(student, vectors):
    check_case(student, vectors, "train_lstm", train_recall_lstm_losses, tol=LOSSES)
    check_case(student, vectors, "train_lin", train_recall_lin_losses, tol=LOSSES)


@pytest.mark.outcome(wall=60, cpu=60)
def test_lstm_forget_bias_5_learns_lag_25(student):
    """400 updates of the README's LSTM with forget bias 5 at lag 25; run with  pytest --outcome.
    Not counted in the public points: the grader grades the same run by its test accuracy."""
    with progress(student, "recall_batch", every=100, total=401):
        acc, solved, losses = student.train_recall("lstm", 25, 5.0, 400, 0)
    figure = (f"test accuracy {acc:.1%} after 400 updates at lag 25 (needs ≥ 95%; chance is "
              f"12.5%; the reference: 100%, solved at 74); yours solved at {solved}")
    if not acc >= 0.95:
        raise CheckFailure("outside the band: " + figure)
    print(figure)

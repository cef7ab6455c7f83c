"""Hidden suite for lab 2: backpropagation through time (assignments/lab2/README.md). NumPy only.

Caches come from the submission's own forward functions (the lab README: a cache's layout is the
submission's business), unless those cannot feed the backward pass: then a classic-layout cache
from the reference does (``grading/chained.py``), so a backward pass never pays for a forward
pass's mistake. Gradient checks compare the backward pass with central differences of the forward
pass that fed it; the other checks compare with the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from rnngrade.suite import (
    EXACT,
    ArgRef,
    Chain,
    FunctionRef,
    OutputLoss,
    Tolerance,
    expect_chained,
    expect_gradient_check,
)

# Gradient checks compare 1 + the relative error |a − n| / max(|a|, |n|, 1e-12) with 1.
# Central differences with ε = 1e-5 in float64 are accurate to ~1e-10 absolute (truncation
# ε²·f‴/6, rounding 1e-16·|L|/ε), and the checked entries are at least 1e-2 of the largest
# gradient, so a correct backward pass lands at 1e-6 or better (the reference: ~1e-9); the
# README calls anything above 1e-4 a bug, and real mistakes land above 1e-2.
GRADIENT_CHECK = Tolerance(0.0, 1e-5, "relative error against central differences (ε = 1e-5, "
                           "float64) must stay below 1e-5; a correct gradient gives ~1e-8")
# numerical_gradient against the exact derivative: the central difference is off by
# ε²·f‴/6 ≈ 1e-10 plus rounding 1e-16·|f|/ε ≈ 1e-10 (|f| ≤ 10 here); a one-sided difference is
# off by ε·f″/2 ≈ 1e-5, a hundred times this tolerance.
CENTRAL_DIFFERENCE = Tolerance(1e-7, 1e-6, "central differences with ε = 1e-5 are accurate to "
                               "~1e-9 here; one-sided ones only to ~1e-5")

SIZES = [  # (n_x, n_a, m, T_x): edge sizes n_a = 1, m = 1, T_x = 1 and larger ones
    pytest.param(3, 5, 4, 6, id="n_x3-n_a5-m4-T6"),
    pytest.param(4, 1, 3, 5, id="n_a1"),
    pytest.param(2, 4, 1, 5, id="m1"),
    pytest.param(3, 4, 5, 1, id="T1"),
    pytest.param(5, 5, 3, 4, id="square-n_x5-n_a5"),
    pytest.param(6, 10, 16, 12, id="n_x6-n_a10-m16-T12"),
    pytest.param(None, None, None, None, id="drawn-sizes"),
]


def sizes_or_drawn(rng: np.random.Generator, *sizes: int | None) -> tuple[int, ...]:
    """The given sizes, or (for the "drawn-sizes" case) sizes drawn from the test's rng."""
    if sizes[0] is not None:
        return tuple(int(s) for s in sizes)  # type: ignore[arg-type]
    return tuple(int(v) for v in rng.integers([1, 1, 1, 4], [8, 9, 9, 10]))


def make_parameters(rng: np.random.Generator, n_x: int, n_a: int, n_y: int = 3,
                    dtype: type = np.float64) -> dict:
    """Weights scaled so the tanh units stay in their sensitive range."""
    p = {"Wax": rng.standard_normal((n_a, n_x)) / np.sqrt(n_x),
         "Waa": rng.standard_normal((n_a, n_a)) / np.sqrt(n_a),
         "Wya": rng.standard_normal((n_y, n_a)),
         "ba": 0.5 * rng.standard_normal((n_a, 1)),
         "by": 0.5 * rng.standard_normal((n_y, 1))}
    return {k: v.astype(dtype) for k, v in p.items()}


# ------------------------------------------------------------------ probes

# The backward passes read their forward pass's cache: the submission's own when its forward
# pass can feed them, else a classic-layout cache from the reference (grading/chained.py).
CELL = Chain("lab2", "rnn_cell_forward", "rnn_cell_backward", arity=3, cache=2, outputs=2)
SEQUENCE = Chain("lab2", "rnn_forward", "rnn_backward", arity=3, cache=2, outputs=2)


# ------------------------------------------------------------------ rnn_cell_backward

@pytest.mark.parametrize("n_x, n_a, m, T_x", SIZES)
def test_rnn_cell_backward_random(check, rng, n_x, n_a, m, T_x):
    n_x, n_a, m, _ = sizes_or_drawn(rng, n_x, n_a, m, T_x)
    p = make_parameters(rng, n_x, n_a)
    args = (rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m)), p,
            rng.standard_normal((n_a, m)))
    expect_chained(check, CELL, "rnn_cell_backward", args)


@pytest.mark.parametrize("zero", ["a_prev", "xt", "Waa", "Wax", "da_next_row"])
def test_rnn_cell_backward_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    p = make_parameters(rng, 3, 4)
    xt, a_prev, da_next = (rng.standard_normal(s) for s in ((3, 5), (4, 5), (4, 5)))
    if zero == "a_prev":
        a_prev = np.zeros_like(a_prev)
    elif zero == "xt":
        xt = np.zeros_like(xt)
    elif zero == "da_next_row":
        da_next[1] = 0.0
    else:
        p[zero] = np.zeros_like(p[zero])
    expect_chained(check, CELL, f"rnn_cell_backward with {zero} = 0", (xt, a_prev, p, da_next))


def test_rnn_cell_backward_float32(check, rng):
    p = make_parameters(rng, 4, 6, dtype=np.float32)
    args = tuple(rng.standard_normal(s).astype(np.float32) for s in ((4, 5), (6, 5)))
    da_next = rng.standard_normal((6, 5)).astype(np.float32)
    expect_chained(check, CELL, "rnn_cell_backward (float32 inputs)", (*args, p, da_next))


@pytest.mark.parametrize("n_x, n_a, m", [(3, 5, 4), (4, 1, 3), (2, 3, 1)],
                         ids=["n_x3-n_a5-m4", "n_a1", "m1"])
def test_rnn_cell_backward_gradient_check(check, reference, rng, n_x, n_a, m):
    p = make_parameters(rng, n_x, n_a)
    xt, a_prev, da_next = (rng.standard_normal(s) for s in ((n_x, m), (n_a, m), (n_a, m)))

    loss = OutputLoss("rnn_cell_forward", 3, ((0, da_next),))  # L = Σ da_next ⊙ a_next
    targets = {"dxt": (xt, None), "da_prev": (a_prev, None), "dWax": (p["Wax"], None),
               "dWaa": (p["Waa"], None), "dba": (p["ba"], None)}
    expect_gradient_check(check, reference, "rnn_cell_backward", CELL.own(), loss,
                          (xt, a_prev, p, da_next), targets, rng, GRADIENT_CHECK, chain=CELL)


# ------------------------------------------------------------------ rnn_backward

@pytest.mark.parametrize("n_x, n_a, m, T_x", SIZES)
def test_rnn_backward_random(check, rng, n_x, n_a, m, T_x):
    n_x, n_a, m, T_x = sizes_or_drawn(rng, n_x, n_a, m, T_x)
    p = make_parameters(rng, n_x, n_a)
    args = (rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m)), p,
            rng.standard_normal((n_a, m, T_x)))
    expect_chained(check, SEQUENCE, "rnn_backward", args, time_axis=2)


@pytest.mark.parametrize("zero", ["a0", "x", "Waa", "da_before_last"])
def test_rnn_backward_term_isolation(check, rng, zero):
    """One input or weight at zero. With da = 0 before the last step, every gradient of the
    earlier steps flows back through the recurrence."""
    p = make_parameters(rng, 3, 4)
    x, a0, da = (rng.standard_normal(s) for s in ((3, 5, 6), (4, 5), (4, 5, 6)))
    if zero == "a0":
        a0 = np.zeros_like(a0)
    elif zero == "x":
        x = np.zeros_like(x)
    elif zero == "da_before_last":
        da[:, :, :-1] = 0.0
    else:
        p["Waa"] = np.zeros_like(p["Waa"])
    expect_chained(check, SEQUENCE, f"rnn_backward with {zero} = 0", (x, a0, p, da), time_axis=2)


def test_rnn_backward_float32(check, rng):
    p = make_parameters(rng, 3, 5, dtype=np.float32)
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    a0 = rng.standard_normal((5, 4)).astype(np.float32)
    da = rng.standard_normal((5, 4, 7)).astype(np.float32)
    expect_chained(check, SEQUENCE, "rnn_backward (float32 inputs)", (x, a0, p, da), time_axis=2)


def test_rnn_backward_long_sequence(check, rng):
    p = make_parameters(rng, 4, 6)
    p["Waa"] *= 0.8  # keep the gradient from exploding over 150 steps
    args = (rng.standard_normal((4, 3, 150)), rng.standard_normal((6, 3)), p,
            rng.standard_normal((6, 3, 150)))
    expect_chained(check, SEQUENCE, "rnn_backward (T_x = 150)", args, time_axis=2)


@pytest.mark.parametrize("n_x, n_a, m, T_x", [(3, 4, 3, 5), (2, 1, 2, 6), (3, 3, 1, 4)],
                         ids=["n_x3-n_a4-m3-T5", "n_a1-T6", "m1-T4"])
def test_rnn_backward_gradient_check(check, reference, rng, n_x, n_a, m, T_x):
    """T_x ≥ 4: a backward pass that drops the recurrent term is exact at T_x = 1."""
    p = make_parameters(rng, n_x, n_a)
    x, a0, da = (rng.standard_normal(s) for s in ((n_x, m, T_x), (n_a, m), (n_a, m, T_x)))

    loss = OutputLoss("rnn_forward", 3, ((0, da),))  # L = Σ_t Σ da[:, :, t] ⊙ a[:, :, t]
    targets = {"dx": (x, None), "da0": (a0, None), "dWax": (p["Wax"], None),
               "dWaa": (p["Waa"], None), "dba": (p["ba"], None)}
    expect_gradient_check(check, reference, "rnn_backward", SEQUENCE.own(), loss,
                          (x, a0, p, da), targets, rng, GRADIENT_CHECK, chain=SEQUENCE)


# ------------------------------------------------------------------ clip, clip_by_global_norm

def random_gradients(rng: np.random.Generator, keys: tuple[str, ...], scale: float,
                     dtype: type = np.float64) -> dict:
    shapes = [(4, 4), (4, 3), (2, 4), (4, 1), (2, 1), (7,), (3, 2, 2)]
    return {k: (scale * rng.standard_normal(shapes[i % len(shapes)])).astype(dtype)
            for i, k in enumerate(keys)}


CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")


# The README: clip is graded on the classic keys only (the classic template indexes these five).
@pytest.mark.parametrize("scale, max_value", [
    pytest.param(5.0, 3.0, id="classic-keys"),
    pytest.param(8.0, 0.5, id="small-bound"),
    pytest.param(0.5, 10.0, id="all-inside"),
])
def test_clip_elementwise(check, rng, scale, max_value):
    grads = random_gradients(rng, CLASSIC_KEYS, scale)
    # In-place clipping is allowed (lab2 README): only the returned dict is judged.
    check.expect(f"clip(gradients, {max_value})", lambda m, g, v: m.clip(g, v),
                 (grads, max_value), may_modify=True)


def test_clip_float32(check, rng):
    grads = random_gradients(rng, CLASSIC_KEYS, 6.0, np.float32)
    check.expect("clip (float32 gradients)", lambda m, g, v: m.clip(g, v), (grads, 2.0),
                 may_modify=True)


@pytest.mark.parametrize("keys, scale, max_norm", [
    pytest.param(CLASSIC_KEYS, 3.0, 5.0, id="clipped"),
    pytest.param(CLASSIC_KEYS, 0.1, 5.0, id="below-threshold"),
    pytest.param(("W1", "b1", "embedding"), 2.0, 1.0, id="other-keys"),
    pytest.param(("g",), 4.0, 2.0, id="one-array"),
])
def test_clip_by_global_norm(check, rng, keys, scale, max_norm):
    grads = random_gradients(rng, keys, scale)
    check.expect(f"clip_by_global_norm(grads, {max_norm})",
                 lambda m, g, v: m.clip_by_global_norm(g, v), (grads, max_norm),
                 names=("clipped_grads", "norm_before"))


def test_clip_by_global_norm_float32(check, rng):
    grads = random_gradients(rng, CLASSIC_KEYS, 2.0, np.float32)
    check.expect("clip_by_global_norm (float32 gradients)",
                 lambda m, g, v: m.clip_by_global_norm(g, v), (grads, 1.0),
                 names=("clipped_grads", "norm_before"))


# ------------------------------------------------------------------ numerical_gradient

def gradient_and_x_after(m, f, x):
    """numerical_gradient's result and the array x as the function left it."""
    grad = m.numerical_gradient(f, x)
    return grad, m.calls[-1].result.args_after[1]


def polynomial_case(rng: np.random.Generator, shape: tuple[int, ...]):
    """f() = Σ c1·x + c2·x² + c3·x³ (worker_helpers.polynomial_of) and its exact gradient."""
    x = rng.standard_normal(shape)
    c = rng.standard_normal((3, *shape))
    f = FunctionRef("polynomial_of", (ArgRef(1), c))
    return f, x, c[0] + 2 * c[1] * x + 3 * c[2] * x**2


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (1, 1)], ids=str)
def test_numerical_gradient_polynomial(check, rng, shape):
    f, x, exact = polynomial_case(rng, shape)
    # x restored is judged by test_numerical_gradient_restores_x, with a diagnosis of its own
    check.expect("numerical_gradient of a cubic polynomial",
                 lambda m, f, x: gradient_and_x_after(m, f, x)[0], (f, x),
                 oracle=lambda f, x: exact, tol=CENTRAL_DIFFERENCE, may_modify=True)


def test_numerical_gradient_sin(check, rng):
    x = 2 * rng.standard_normal((4, 3))
    f = FunctionRef("sin_sum_of", (ArgRef(1),))  # f() = Σ sin(x)·x
    check.expect("numerical_gradient of Σ sin(x)·x",
                 lambda m, f, x: gradient_and_x_after(m, f, x)[0], (f, x),
                 oracle=lambda f, x: np.cos(x) * x + np.sin(x), tol=CENTRAL_DIFFERENCE,
                 may_modify=True)


@pytest.mark.parametrize("shape", [(6,), (3, 4)], ids=str)
def test_numerical_gradient_restores_x(check, rng, shape):
    """x must hold exactly its old values afterwards (bit for bit)."""
    f, x, _ = polynomial_case(rng, shape)
    check.expect("x after numerical_gradient", lambda m, f, x: gradient_and_x_after(m, f, x)[1],
                 (f, x), oracle=lambda f, x: x.copy(), tol=EXACT)


# ------------------------------------------------------------------ relative_error

def close_pair(rng: np.random.Generator, shape: tuple[int, ...], noise: float):
    a = rng.standard_normal(shape)
    return a, a * (1 + noise * rng.standard_normal(shape))


def relative_error_probe(m, a, b):
    return m.relative_error(a, b)


@pytest.mark.parametrize("shape, noise", [((4, 3), 1e-6), ((10,), 1e-3), ((2, 3, 4), 0.5)],
                         ids=["close", "1e-3", "far"])
def test_relative_error_random(check, rng, shape, noise):
    check.expect("relative_error(a, b)", relative_error_probe, close_pair(rng, shape, noise))


def test_relative_error_one_bad_entry(check, rng):
    """One entry off among many close ones: the maximum over entries must find it."""
    a, b = close_pair(rng, (20, 20), 1e-9)
    b[7, 3] = 3 * a[7, 3]
    check.expect("relative_error with one bad entry", relative_error_probe, (a, b))


@pytest.mark.parametrize("case", ["shared-zeros", "all-zero", "one-side-zero"])
def test_relative_error_zeros(check, rng, case):
    """Zeros in both arrays give 0, never NaN; a zero against a non-zero gives 1."""
    a, b = close_pair(rng, (3, 5), 1e-4)
    if case == "shared-zeros":
        a[0], b[0] = 0.0, 0.0
    elif case == "all-zero":
        a, b = np.zeros((3, 5)), np.zeros((3, 5))
    else:
        a[1, 2] = 0.0
    check.expect(f"relative_error with {case}", relative_error_probe, (a, b))


# ------------------------------------------------------------------ char_rnn_loss_and_grads

def char_rnn_case(rng: np.random.Generator, B: int, T: int, V: int, H: int,
                  dtype: type = np.float64, chars: int | None = None) -> tuple:
    """Parameters, X, Y, h0 for the character model; ``chars`` limits the characters used."""
    p = {"W_xh": 0.5 * rng.standard_normal((H, V)), "W_hh": rng.standard_normal((H, H)) / H**0.5,
         "b_h": 0.1 * rng.standard_normal(H), "W_hy": 0.5 * rng.standard_normal((V, H)),
         "b_y": 0.1 * rng.standard_normal(V)}
    text = rng.integers(0, chars or V, size=(B, T + 1))
    h0 = 0.5 * rng.standard_normal((H, B))
    return ({k: v.astype(dtype) for k, v in p.items()}, text[:, :-1], text[:, 1:],
            h0.astype(dtype))


def char_rnn(m, p, X, Y, h0):
    return m.char_rnn_loss_and_grads(p, X, Y, h0)


CHAR_NAMES = ("loss", "grads", "h_last")


@pytest.mark.parametrize("B, T, V, H", [(5, 4, 4, 6), (3, 8, 7, 5), (1, 6, 5, 4), (4, 1, 6, 3),
                                        (6, 5, 4, 1), (16, 10, 12, 8)],
                         ids=["B5-T4-V4-H6", "B3-T8", "B1", "T1", "H1", "B16-T10-V12-H8"])
def test_char_rnn_random(check, rng, B, T, V, H):
    check.expect("char_rnn_loss_and_grads", char_rnn, char_rnn_case(rng, B, T, V, H),
                 names=CHAR_NAMES, time_axis=1)


def test_char_rnn_duplicate_characters(check, rng):
    """Streams 0 and 1 read the same text, so every step has a repeated character."""
    p, X, Y, h0 = char_rnn_case(rng, 4, 5, 6, 5)
    X[1], Y[1] = X[0], Y[0]
    check.expect("char_rnn_loss_and_grads with two streams reading the same characters",
                 char_rnn, (p, X, Y, h0), names=CHAR_NAMES)


@pytest.mark.parametrize("V", [5, 27])
def test_char_rnn_zero_weights_loss_is_log_v(check, rng, V):
    """With every weight zero the model predicts uniformly: the mean loss is exactly ln V."""
    p, X, Y, h0 = char_rnn_case(rng, 3, 4, V, 6)
    p = {k: np.zeros_like(v) for k, v in p.items()}
    check.expect("loss of char_rnn_loss_and_grads at zero weights",
                 lambda m, *a: char_rnn(m, *a)[0], (p, X, Y, h0),
                 oracle=lambda *a: float(np.log(V)))


@pytest.mark.parametrize("zero", ["h0", "W_hh", "W_xh"])
def test_char_rnn_term_isolation(check, rng, zero):
    p, X, Y, h0 = char_rnn_case(rng, 4, 6, 5, 4)
    if zero == "h0":
        h0 = np.zeros_like(h0)
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"char_rnn_loss_and_grads with {zero} = 0", char_rnn, (p, X, Y, h0),
                 names=CHAR_NAMES)


def test_char_rnn_float32(check, rng):
    check.expect("char_rnn_loss_and_grads (float32 inputs)", char_rnn,
                 char_rnn_case(rng, 4, 5, 6, 8, np.float32), names=CHAR_NAMES)


def test_char_rnn_long_sequence(check, rng):
    check.expect("char_rnn_loss_and_grads (T = 80)", char_rnn, char_rnn_case(rng, 3, 80, 8, 6),
                 names=CHAR_NAMES)


@pytest.mark.parametrize("B, T, V, H", [(6, 5, 5, 4), (2, 7, 6, 3)], ids=["B6-V5", "B2-T7"])
def test_char_rnn_gradient_check(check, reference, rng, B, T, V, H):
    """Every parameter, against central differences of the submission's own loss; the last
    character of the vocabulary never occurs, so its W_xh column is structurally zero."""
    p, X, Y, h0 = char_rnn_case(rng, B, T, V, H, chars=V - 1)
    used = np.zeros(p["W_xh"].shape, dtype=bool)
    used[:, np.unique(X)] = True
    targets = {k: (v, used if k == "W_xh" else None) for k, v in p.items()}
    expect_gradient_check(check, reference, "char_rnn_loss_and_grads",
                          lambda m, *a: char_rnn(m, *a)[1],
                          OutputLoss("char_rnn_loss_and_grads", 4, ((0, np.float64(1.0)),)),
                          (p, X, Y, h0), targets, rng, GRADIENT_CHECK)

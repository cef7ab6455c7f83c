"""Public tests for lab 2. Run them with:  pytest assignments/lab2

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab2.npz, computed by the course's reference solution. The gradient checks compare
your backward pass with central differences of *your own* forward pass, as the grader does.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them. This file needs NumPy only.
"""

import numpy as np
import pytest

from rnngrade.testing import (
    EXACT,
    ArgRef,
    CheckFailure,
    FunctionRef,
    Tolerance,
    assert_outputs,
    numeric_gradient,
    relative_error,
    sample_indices,
)

STUDENT_MODULE = "bptt"
# clip may clip in place and numerical_gradient perturbs x in place (the README): their
# argument writes are not reported (numerical_gradient's x is checked for its old values)
MAY_MODIFY = ("clip", "numerical_gradient")

# README ("How to read it"): a correct backward pass lands at 1e-6…1e-10 against central
# differences (ε = 1e-5, float64); above 1e-4 is a bug. 1e-5 sits between the two with a 10x
# margin on either side.
GRADIENT_CHECK_LIMIT = 1e-5
# numerical_gradient against the exact derivative of a cubic: the central difference is off by
# ε²·f'''/6 ≈ 1e-10 plus rounding 1e-16·|f|/ε ≈ 1e-10; a one-sided difference is off by
# ε·f''/2 ≈ 1e-5, a hundred times this tolerance.
CENTRAL_DIFFERENCE = Tolerance(1e-7, 1e-6, "central differences, ε = 1e-5: error ≈ 1e-10")

CELL_KEYS = ("dxt", "da_prev", "dWax", "dWaa", "dba")
SEQUENCE_KEYS = ("dx", "da0", "dWax", "dWaa", "dba")


# ------------------------------------------------------------------ helpers (not tests)

def rnn_cell_backward_of_forward(m, xt, a_prev, parameters, da_next):
    """Your rnn_cell_backward on the cache of your rnn_cell_forward."""
    return m.rnn_cell_backward(da_next, m.rnn_cell_forward(xt, a_prev, parameters)[2])


def rnn_backward_of_forward(m, x, a0, parameters, da):
    """Your rnn_backward on the caches of your rnn_forward."""
    return m.rnn_backward(da, m.rnn_forward(x, a0, parameters)[2])


def random_parameters(rng, n_x, n_a, n_y):
    return {"Wax": 0.7 * rng.standard_normal((n_a, n_x)),
            "Waa": 0.7 * rng.standard_normal((n_a, n_a)),
            "Wya": 0.7 * rng.standard_normal((n_y, n_a)),
            "ba": 0.7 * rng.standard_normal((n_a, 1)),
            "by": 0.7 * rng.standard_normal((n_y, 1))}


def expect_shapes(name, value, shapes):
    """``value`` is a dict holding an array of the given shape under each key."""
    if value is None:
        raise CheckFailure(f"{name} returns None — looks unfinished")
    if not isinstance(value, dict):
        raise CheckFailure(f"{name} should return a dict, got a {type(value).__name__}")
    missing = [k for k in shapes if k not in value]
    if missing:
        raise CheckFailure(f"{name}: the returned dict lacks the key(s) {missing}")
    for key, shape in shapes.items():
        if value[key] is None:
            raise CheckFailure(f"{name}[{key!r}] is None — looks unfinished")
        if np.shape(value[key]) != shape:
            raise CheckFailure(f"{name}[{key!r}] has shape {np.shape(value[key])}, expected "
                               f"{shape} (a gradient has the shape of what it differentiates)")


def expect_gradient(name, analytic, numeric, indices, hint=""):
    """Your analytic gradient entries agree with central differences (the README's relative error)."""
    errors = relative_error(analytic, numeric)
    worst = int(np.argmax(errors))
    if errors[worst] > GRADIENT_CHECK_LIMIT:
        message = (f"{name}: your backward pass disagrees with central differences of your "
                   f"forward pass\n  relative error {errors[worst]:.3g} at {list(indices[worst])} "
                   f"(a correct gradient gives below {GRADIENT_CHECK_LIMIT:g}); there your "
                   f"gradient is {analytic[worst]:.6g}, the numerical estimate {numeric[worst]:.6g}")
        raise CheckFailure(message + (f"\n  hint: {hint}" if hint else ""))


# ------------------------------------------------------------------ rnn_cell_backward

@pytest.mark.points(2)
def test_rnn_cell_backward_shapes(student, rng):
    n_x, n_a, m = 3, 5, 4
    p = random_parameters(rng, n_x, n_a, 2)
    grads = rnn_cell_backward_of_forward(student, rng.standard_normal((n_x, m)),
                                         rng.standard_normal((n_a, m)), p,
                                         rng.standard_normal((n_a, m)))
    expect_shapes("rnn_cell_backward", grads, {"dxt": (n_x, m), "da_prev": (n_a, m),
                                               "dWax": (n_a, n_x), "dWaa": (n_a, n_a),
                                               "dba": (n_a, 1)})


@pytest.mark.points(3)
def test_rnn_cell_backward_values(student, vectors):
    for case_name in ("cell_backward_small", "cell_backward_float32"):
        case = vectors.case(case_name)
        grads = rnn_cell_backward_of_forward(student, *case.args)
        assert_outputs(grads, case.outputs, f"rnn_cell_backward ({case_name})", inputs=case.args)


@pytest.mark.points(2)
def test_rnn_cell_backward_gradient_check(student, rng):
    n_x, n_a, m = 4, 3, 5
    p = random_parameters(rng, n_x, n_a, 2)
    xt, a_prev, da_next = (rng.standard_normal(s) for s in ((n_x, m), (n_a, m), (n_a, m)))
    grads = rnn_cell_backward_of_forward(student, xt, a_prev, p, da_next)
    expect_shapes("rnn_cell_backward", grads, {"dxt": xt.shape, "da_prev": a_prev.shape,
                                               "dWax": p["Wax"].shape, "dWaa": p["Waa"].shape,
                                               "dba": p["ba"].shape})

    def loss():  # L = Σ da_next ⊙ a_next, with your forward pass
        return float(np.sum(da_next * student.rnn_cell_forward(xt, a_prev, p)[0]))

    for key, array in zip(CELL_KEYS, (xt, a_prev, p["Wax"], p["Waa"], p["ba"])):
        indices = sample_indices(array.shape, 6, rng)
        expect_gradient(f"rnn_cell_backward[{key!r}]", np.array([grads[key][i] for i in indices]),
                        numeric_gradient(loss, array, indices), indices)


# ------------------------------------------------------------------ rnn_backward

@pytest.mark.points(2)
def test_rnn_backward_shapes(student, rng):
    n_x, n_a, m, T_x = 3, 5, 2, 4
    grads = rnn_backward_of_forward(student, rng.standard_normal((n_x, m, T_x)),
                                    rng.standard_normal((n_a, m)),
                                    random_parameters(rng, n_x, n_a, 2),
                                    rng.standard_normal((n_a, m, T_x)))
    expect_shapes("rnn_backward", grads, {"dx": (n_x, m, T_x), "da0": (n_a, m),
                                          "dWax": (n_a, n_x), "dWaa": (n_a, n_a),
                                          "dba": (n_a, 1)})


@pytest.mark.points(3)
def test_rnn_backward_values(student, vectors):
    for case_name in ("backward_small", "backward_float32"):
        case = vectors.case(case_name)
        grads = rnn_backward_of_forward(student, *case.args)
        assert_outputs(grads, case.outputs, f"rnn_backward ({case_name})", inputs=case.args)


@pytest.mark.points(4)
def test_rnn_backward_gradient_check(student, rng):
    n_x, n_a, m, T_x = 3, 4, 2, 5  # T_x ≥ 4: a missing recurrent term is exact at T_x = 1
    p = random_parameters(rng, n_x, n_a, 2)
    x, a0, da = (rng.standard_normal(s) for s in ((n_x, m, T_x), (n_a, m), (n_a, m, T_x)))
    grads = rnn_backward_of_forward(student, x, a0, p, da)
    expect_shapes("rnn_backward", grads, {"dx": x.shape, "da0": a0.shape,
                                          "dWax": p["Wax"].shape, "dWaa": p["Waa"].shape,
                                          "dba": p["ba"].shape})

    def loss():  # L = Σ_t Σ da[:, :, t] ⊙ a[:, :, t], with your forward pass
        return float(np.sum(da * student.rnn_forward(x, a0, p)[0]))

    hint = ("does the gradient reaching step t include what step t+1 sends back (da_prev), and "
            "do the weight gradients add up every step?")
    for key, array in zip(SEQUENCE_KEYS, (x, a0, p["Wax"], p["Waa"], p["ba"])):
        indices = sample_indices(array.shape, 6, rng)
        expect_gradient(f"rnn_backward[{key!r}]", np.array([grads[key][i] for i in indices]),
                        numeric_gradient(loss, array, indices), indices, hint)


# ------------------------------------------------------------------ clipping

@pytest.mark.points(2)
def test_clip(student, vectors):
    for case_name in ("clip_classic_keys", "clip_float32"):  # the lab2 README: the classic keys only
        case = vectors.case(case_name)
        got = student.clip(*case.args)
        assert_outputs(got, case.outputs, f"clip ({case_name})", inputs=case.args)


@pytest.mark.points(2)
def test_clip_by_global_norm(student, vectors):
    for case_name in ("global_norm_clipped", "global_norm_unchanged", "global_norm_float32"):
        case = vectors.case(case_name)
        got = student.clip_by_global_norm(*case.args)
        label = f"clip_by_global_norm ({case_name})"
        assert_outputs(got, case.outputs, label,
                       names=(f"{label} clipped_grads", f"{label} norm"), inputs=case.args)


# ------------------------------------------------------------------ gradient checking tools

@pytest.mark.points(3)
def test_numerical_gradient_known_derivative(student, rng):
    x = rng.standard_normal((3, 4))
    c = rng.standard_normal((3, 3, 4))
    # FunctionRef hands your function an f() that reads the very array x your function gets:
    #   polynomial_of: f() = Σ c1·x + c2·x² + c3·x³, so f' = c1 + 2·c2·x + 3·c3·x²
    #   sin_sum_of:    f() = Σ sin(x)·x,             so f' = cos(x)·x + sin(x)
    functions = {"polynomial_of": (FunctionRef("polynomial_of", (ArgRef(1), c)),
                                   c[0] + 2 * c[1] * x + 3 * c[2] * x**2),
                 "sin_sum_of": (FunctionRef("sin_sum_of", (ArgRef(1),)),
                                np.cos(x) * x + np.sin(x))}
    for name, (f, exact) in functions.items():
        grad = student.numerical_gradient(f, x)
        x_after = student.calls[-1].result.args_after[1]  # x as your function left it
        assert_outputs(grad, exact, f"numerical_gradient of {name}", tol=CENTRAL_DIFFERENCE,
                       inputs=(x,))
        assert_outputs(x_after, x, "x after numerical_gradient (must hold exactly its old values)",
                       tol=EXACT, inputs=(x,))


@pytest.mark.points(2)
def test_relative_error(student, vectors):
    for case_name in ("relative_error_close", "relative_error_with_zeros",
                      "relative_error_all_zero"):
        case = vectors.case(case_name)
        got = student.relative_error(*case.args)
        assert_outputs(got, case.outputs, f"relative_error ({case_name})", inputs=case.args)


# ------------------------------------------------------------------ character-level model

@pytest.mark.points(3)
def test_char_rnn_values(student, vectors):
    for case_name in ("char_rnn_small", "char_rnn_longer", "char_rnn_float32"):
        case = vectors.case(case_name)
        got = student.char_rnn_loss_and_grads(*case.args)
        label = f"char_rnn_loss_and_grads ({case_name})"
        assert_outputs(got, case.outputs, label,
                       names=tuple(f"{label} {n}" for n in ("loss", "grads", "h_last")),
                       inputs=case.args)


@pytest.mark.points(2)
def test_char_rnn_gradient_check(student, rng):
    B, T, V, H = 6, 5, 4, 3  # B > V: streams share characters at the same step
    p = {"W_xh": 0.5 * rng.standard_normal((H, V)), "W_hh": 0.5 * rng.standard_normal((H, H)),
         "b_h": 0.1 * rng.standard_normal(H), "W_hy": 0.5 * rng.standard_normal((V, H)),
         "b_y": 0.1 * rng.standard_normal(V)}
    text = rng.integers(0, V - 1, size=(B, T + 1))  # character V − 1 never occurs
    X, Y, h0 = text[:, :-1], text[:, 1:], 0.5 * rng.standard_normal((H, B))
    result = student.char_rnn_loss_and_grads(p, X, Y, h0)
    if not isinstance(result, tuple) or len(result) != 3:
        raise CheckFailure("char_rnn_loss_and_grads should return (loss, grads, h_last)")
    grads = result[1]
    expect_shapes("char_rnn_loss_and_grads grads", grads, {k: v.shape for k, v in p.items()})

    def loss():
        return float(student.char_rnn_loss_and_grads(p, X, Y, h0)[0])

    for key, array in p.items():
        allowed = np.ones(array.shape, dtype=bool)
        if key == "W_xh":  # only columns of characters that occur in X get a gradient
            allowed[:] = False
            allowed[:, np.unique(X)] = True
        indices = sample_indices(array.shape, 6, rng, allowed)
        expect_gradient(f"grads[{key!r}]", np.array([grads[key][i] for i in indices]),
                        numeric_gradient(loss, array, indices), indices,
                        "the loss is a mean over B·T positions; repeated characters in one step "
                        "must all reach W_xh (np.add.at)")

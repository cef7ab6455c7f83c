"""Public tests for lab 3. Run them with:  pytest assignments/lab3

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab3.npz, computed by the course's reference solution, or from PyTorch's own
nn.LSTMCell / nn.LSTM. The gradient checks compare your backward pass with central differences of
*your own* forward pass, as the grader does.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them.
"""

import numpy as np
import pytest
import torch
from torch import nn
from torch.func import functional_call

from rnngrade.testing import (
    CheckFailure,
    assert_outputs,
    check_on_caches,
    forward_problem,
    numeric_gradient,
    relative_error,
    sample_indices,
)

STUDENT_MODULE = "lstm"

# assignments/lab2/README.md ("How to read it"): a correct backward pass lands at 1e-6…1e-10
# against central differences (ε = 1e-5, float64); above 1e-4 is a bug. 1e-5 sits between the
# two with a 10x margin on either side.
GRADIENT_CHECK_LIMIT = 1e-5

GATES = ("f", "i", "c", "o")
CELL_KEYS = ("dxt", "da_prev", "dc_prev", "dWf", "dWi", "dWc", "dWo", "dbf", "dbi", "dbc", "dbo")
SEQUENCE_KEYS = ("dx", "da0", "dWf", "dWi", "dWc", "dWo", "dbf", "dbi", "dbc", "dbo")
TORCH_ARGS = ("x", "h", "c", "W_ih", "W_hh", "b_ih", "b_hh")


# ------------------------------------------------------------------ helpers (not tests)

def lstm_cell_backward_of_forward(m, xt, a_prev, c_prev, parameters, da_next, dc_next):
    """Your lstm_cell_backward on the cache of your lstm_cell_forward."""
    cache = m.lstm_cell_forward(xt, a_prev, c_prev, parameters)[3]
    return m.lstm_cell_backward(da_next, dc_next, cache)


def lstm_backward_of_forward(m, x, a0, parameters, da):
    """Your lstm_backward on the caches of your lstm_forward."""
    return m.lstm_backward(da, m.lstm_forward(x, a0, parameters)[3])


def random_parameters(rng, n_x, n_a, n_y):
    p = {}
    for gate in GATES:
        p["W" + gate] = 0.6 * rng.standard_normal((n_a, n_a + n_x))
        p["b" + gate] = 0.3 * rng.standard_normal((n_a, 1))
    p["Wy"] = rng.standard_normal((n_y, n_a))
    p["by"] = 0.3 * rng.standard_normal((n_y, 1))
    return p


def expect_shapes(name, value, shapes):
    """``value`` is a tuple (or dict) holding an array of the given shape at each position (key)."""
    if value is None:
        raise CheckFailure(f"{name} returns None — looks unfinished")
    kind = dict if isinstance(shapes, dict) else tuple
    if not isinstance(value, kind):
        raise CheckFailure(f"{name} should return a {kind.__name__}, got a {type(value).__name__}")
    items = shapes.items() if isinstance(shapes, dict) else enumerate(shapes)
    if kind is tuple and len(value) != len(shapes):
        raise CheckFailure(f"{name} returns {len(value)} items, expected {len(shapes)}")
    for key, shape in items:
        if kind is dict and key not in value:
            raise CheckFailure(f"{name}: the returned dict lacks the key {key!r}")
        if value[key] is None:
            raise CheckFailure(f"{name}[{key!r}] is None — looks unfinished")
        if np.shape(value[key]) != shape:
            raise CheckFailure(f"{name}[{key!r}] has shape {np.shape(value[key])}, expected "
                               f"{shape}")


def expect_gradient(name, analytic, numeric, indices, hint=""):
    """Your analytic gradient entries agree with central differences (the relative error of lab 2's README)."""
    errors = relative_error(analytic, numeric)
    worst = int(np.argmax(errors))
    if errors[worst] > GRADIENT_CHECK_LIMIT:
        message = (f"{name}: your backward pass disagrees with central differences of your "
                   f"forward pass\n  relative error {errors[worst]:.3g} at {list(indices[worst])} "
                   f"(a correct gradient gives below {GRADIENT_CHECK_LIMIT:g}); there your "
                   f"gradient is {analytic[worst]:.6g}, the numerical estimate {numeric[worst]:.6g}")
        raise CheckFailure(message + (f"\n  hint: {hint}" if hint else ""))


def torch_weights(rng, d, H, dtype=torch.float64):
    """W_ih (4H, d), W_hh (4H, H), b_ih (4H,), b_hh (4H,) in PyTorch's gate order i, f, g, o."""
    shapes = ((4 * H, d), (4 * H, H), (4 * H,), (4 * H,))
    return tuple(torch.tensor(0.5 * rng.standard_normal(s), dtype=dtype) for s in shapes)


def nn_lstm_cell_gradients(args, upstream):
    """nn.LSTMCell's outputs and the gradients of Σ upstream ⊙ (h_new, c_new) w.r.t. every arg."""
    leaves = [a.detach().clone().requires_grad_(True) for a in args]
    x, h, c, W_ih, W_hh, b_ih, b_hh = leaves
    cell = nn.LSTMCell(x.shape[1], h.shape[1]).double()
    weights = {"weight_ih": W_ih, "weight_hh": W_hh, "bias_ih": b_ih, "bias_hh": b_hh}
    h_new, c_new = functional_call(cell, weights, (x, (h, c)))
    ((upstream[0] * h_new).sum() + (upstream[1] * c_new).sum()).backward()
    return (h_new.detach(), c_new.detach()), [leaf.grad for leaf in leaves]


# ------------------------------------------------------------------ NumPy forward

@pytest.mark.points(2)
def test_lstm_cell_forward_shapes(student, rng):
    n_x, n_a, n_y, m = 3, 5, 2, 4
    out = student.lstm_cell_forward(rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m)),
                                    rng.standard_normal((n_a, m)),
                                    random_parameters(rng, n_x, n_a, n_y))
    if not isinstance(out, tuple) or len(out) != 4:
        raise CheckFailure("lstm_cell_forward should return (a_next, c_next, yt_pred, cache)")
    expect_shapes("lstm_cell_forward", out[:3], ((n_a, m), (n_a, m), (n_y, m)))


@pytest.mark.points(3)
def test_lstm_cell_forward_values(student, vectors):
    for case_name in ("cell_forward_small", "cell_forward_single_example", "cell_forward_float32"):
        case = vectors.case(case_name)
        got = student.lstm_cell_forward(*case.args)[:3]
        label = f"lstm_cell_forward ({case_name})"
        assert_outputs(got, case.outputs, label,
                       names=tuple(f"{label} {n}" for n in ("a_next", "c_next", "yt_pred")),
                       inputs=case.args)


@pytest.mark.points(2)
def test_lstm_forward_shapes(student, rng):
    n_x, n_a, n_y, m, T_x = 3, 5, 2, 4, 6
    out = student.lstm_forward(rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m)),
                               random_parameters(rng, n_x, n_a, n_y))
    if not isinstance(out, tuple) or len(out) != 4:
        raise CheckFailure("lstm_forward should return (a, y, c, caches)")
    expect_shapes("lstm_forward", out[:3], ((n_a, m, T_x), (n_y, m, T_x), (n_a, m, T_x)))


@pytest.mark.points(3)
def test_lstm_forward_values(student, vectors):
    for case_name in ("forward_small", "forward_longer", "forward_float32"):
        case = vectors.case(case_name)
        got = student.lstm_forward(*case.args)[:3]
        label = f"lstm_forward ({case_name})"
        assert_outputs(got, case.outputs, label, names=tuple(f"{label} {n}" for n in "ayc"),
                       inputs=case.args)


# ------------------------------------------------------------------ NumPy backward

@pytest.mark.points(3)
def test_lstm_cell_backward_values(student, vectors):
    """On your lstm_cell_forward's cache, or on the classic one when your forward is wrong."""
    for case_name in ("cell_backward_small", "cell_backward_float32"):
        case = vectors.case(case_name)
        *forward_args, da_next, dc_next = case.args

        def check(cache, case=case, da_next=da_next, dc_next=dc_next, case_name=case_name):
            assert_outputs(student.lstm_cell_backward(da_next, dc_next, cache), case.outputs,
                           f"lstm_cell_backward ({case_name})", inputs=case.args)

        check_on_caches(student, "lstm_cell_forward", tuple(forward_args),
                        vectors.case(f"{case_name}_forward").outputs, 3, check)


@pytest.mark.points(3)
def test_lstm_cell_backward_gradient_check(student, vectors, rng):
    needs_own_forward(student, vectors, "lstm_cell_forward", "cell_backward_small_forward")
    n_x, n_a, m = 3, 4, 5
    p = random_parameters(rng, n_x, n_a, 2)
    xt, a_prev, c_prev, da_next, dc_next = (rng.standard_normal(s) for s in
                                            ((n_x, m), (n_a, m), (n_a, m), (n_a, m), (n_a, m)))
    grads = lstm_cell_backward_of_forward(student, xt, a_prev, c_prev, p, da_next, dc_next)
    shapes = {"dxt": xt.shape, "da_prev": a_prev.shape, "dc_prev": c_prev.shape}
    shapes.update({"dW" + g: p["W" + g].shape for g in GATES})
    shapes.update({"db" + g: p["b" + g].shape for g in GATES})
    expect_shapes("lstm_cell_backward", grads, shapes)

    def loss():  # L = Σ da_next ⊙ a_next + Σ dc_next ⊙ c_next, with your forward pass
        a_next, c_next = student.lstm_cell_forward(xt, a_prev, c_prev, p)[:2]
        return float(np.sum(da_next * a_next) + np.sum(dc_next * c_next))

    arrays = (xt, a_prev, c_prev, *(p["W" + g] for g in GATES), *(p["b" + g] for g in GATES))
    for key, array in zip(CELL_KEYS, arrays):
        indices = sample_indices(array.shape, 5, rng)
        expect_gradient(f"lstm_cell_backward[{key!r}]",
                        np.array([grads[key][i] for i in indices]),
                        numeric_gradient(loss, array, indices), indices,
                        "c_next reaches the loss directly and through a_next = ot ⊙ tanh(c_next)")


@pytest.mark.points(3)
def test_lstm_backward_values(student, vectors):
    """On your lstm_forward's caches, or on the classic ones when your forward is wrong."""
    for case_name in ("backward_small", "backward_float32"):
        case = vectors.case(case_name)
        *forward_args, da = case.args

        def check(caches, case=case, da=da, case_name=case_name):
            assert_outputs(student.lstm_backward(da, caches), case.outputs,
                           f"lstm_backward ({case_name})", inputs=case.args)

        check_on_caches(student, "lstm_forward", tuple(forward_args),
                        vectors.case(f"{case_name}_forward").outputs, 3, check)


def needs_own_forward(student, vectors, forward, case_name, outputs=3):
    """A gradient check ties your backward pass to your own forward pass: skip it, saying why,
    while that forward pass is wrong on the public vectors (the grader then checks your backward
    pass against the course's forward pass instead). An unfinished one fails the check as
    unfinished."""
    case = vectors.case(case_name)
    problem, _ = forward_problem(student, forward, case.args, case.outputs, outputs)
    if problem in ("fails its own checks on these inputs", "raised an error"):
        pytest.skip(f"needs a correct {forward}: yours {problem} ({case_name}); fix it first "
                    "(the grader checks your backward pass against the course's forward pass)")


@pytest.mark.points(4)
def test_lstm_backward_gradient_check(student, vectors, rng):
    needs_own_forward(student, vectors, "lstm_forward", "backward_small_forward")
    n_x, n_a, m, T_x = 3, 4, 2, 5  # T_x ≥ 4: a gradient not carried through time is exact at 1
    p = random_parameters(rng, n_x, n_a, 2)
    x, a0, da = (rng.standard_normal(s) for s in ((n_x, m, T_x), (n_a, m), (n_a, m, T_x)))
    grads = lstm_backward_of_forward(student, x, a0, p, da)
    shapes = {"dx": x.shape, "da0": a0.shape}
    shapes.update({"dW" + g: p["W" + g].shape for g in GATES})
    shapes.update({"db" + g: p["b" + g].shape for g in GATES})
    expect_shapes("lstm_backward", grads, shapes)

    def loss():  # L = Σ_t Σ da[:, :, t] ⊙ a[:, :, t], with your forward pass
        return float(np.sum(da * student.lstm_forward(x, a0, p)[0]))

    arrays = (x, a0, *(p["W" + g] for g in GATES), *(p["b" + g] for g in GATES))
    for key, array in zip(SEQUENCE_KEYS, arrays):
        indices = sample_indices(array.shape, 5, rng)
        expect_gradient(f"lstm_backward[{key!r}]", np.array([grads[key][i] for i in indices]),
                        numeric_gradient(loss, array, indices), indices,
                        "two gradients flow back from step t+1: the hidden state's and the cell "
                        "state's")


# ------------------------------------------------------------------ PyTorch's convention

@pytest.mark.points(3)
def test_lstm_cell_values(student, vectors):
    for case_name in ("lstm_cell_small", "lstm_cell_float32"):
        case = vectors.case(case_name)
        got = student.lstm_cell(*case.args)
        label = f"lstm_cell ({case_name})"
        assert_outputs(got, case.outputs, label, names=(f"{label} h_new", f"{label} c_new"),
                       inputs=case.args)


@pytest.mark.points(3)
def test_lstm_cell_gradients_match_nn_lstmcell(student, rng):
    B, d, H = 3, 4, 5
    args = (*(torch.tensor(rng.standard_normal(s)) for s in ((B, d), (B, H), (B, H))),
            *torch_weights(rng, d, H))
    upstream = [torch.tensor(rng.standard_normal((B, H))) for _ in range(2)]
    student.lstm_cell(*args)  # a plain call first, so an unfinished function says so
    got = student.helper("autograd", "lstm_cell", args, upstream, list(range(7)))
    want_outputs, want_grads = nn_lstm_cell_gradients(args, upstream)
    for name, grad in zip(TORCH_ARGS, got["grads"]):
        if grad is None:
            raise CheckFailure(f"no gradient reaches {name} through your lstm_cell: is it used, "
                               "with torch operations only (no .numpy(), no .detach())?")
    assert_outputs(got["outputs"], want_outputs, "lstm_cell against nn.LSTMCell",
                   names=("lstm_cell against nn.LSTMCell: h_new",
                          "lstm_cell against nn.LSTMCell: c_new"), inputs=args)
    assert_outputs(got["grads"], want_grads, "gradients of lstm_cell against nn.LSTMCell",
                   names=tuple(f"gradient of lstm_cell against nn.LSTMCell: d{name}"
                               for name in TORCH_ARGS), inputs=args)


@pytest.mark.points(4)
def test_lstm_layer_values(student, vectors):
    for case_name in ("lstm_layer_small", "lstm_layer_longer", "lstm_layer_float32"):
        case = vectors.case(case_name)
        got = student.lstm_layer(*case.args)
        label = f"lstm_layer ({case_name})"
        assert_outputs(got, case.outputs, label, names=(f"{label} out", f"{label} (h_n, c_n)"),
                       inputs=case.args)


@pytest.mark.points(2)
def test_to_torch_lstm_weights(student, vectors):
    for case_name in ("to_torch_small", "to_torch_square"):
        case = vectors.case(case_name)
        got = student.to_torch_lstm(*case.args)
        expect_shapes("to_torch_lstm", got, {k: tuple(v.shape) for k, v in case.outputs.items()})
        extra = sorted(set(got) - set(case.outputs))
        if extra:
            raise CheckFailure(f"to_torch_lstm returns extra keys {extra}; nn.LSTM's "
                               "load_state_dict accepts exactly the four of a one-layer LSTM")
        # the weights are unique; of the two bias vectors only their sum matters
        want = case.outputs
        assert_outputs(
            {"weight_ih_l0": got["weight_ih_l0"], "weight_hh_l0": got["weight_hh_l0"],
             "bias_ih_l0 + bias_hh_l0": got["bias_ih_l0"] + got["bias_hh_l0"]},
            {"weight_ih_l0": want["weight_ih_l0"], "weight_hh_l0": want["weight_hh_l0"],
             "bias_ih_l0 + bias_hh_l0": want["bias_ih_l0"] + want["bias_hh_l0"]},
            f"to_torch_lstm ({case_name})", inputs=case.args)


@pytest.mark.points(2)
def test_to_torch_lstm_runs_like_lstm_forward(student, vectors):
    case = vectors.case("forward_small")  # the expected hidden states of lstm_forward
    x, a0, p = case.args
    state = student.to_torch_lstm(p)
    layer = nn.LSTM(x.shape[0], a0.shape[0]).double()
    try:
        layer.load_state_dict(state)
    except (RuntimeError, TypeError, KeyError) as exc:
        raise CheckFailure(f"nn.LSTM could not load to_torch_lstm's result: {exc}") from None
    h0 = torch.tensor(a0.T[None].copy())
    with torch.no_grad():  # nn.LSTM is time-first: (T, m, n_x)
        out, _ = layer(torch.tensor(x.transpose(2, 1, 0).copy()), (h0, torch.zeros_like(h0)))
    assert_outputs(out.numpy().transpose(2, 1, 0), case.outputs[0],
                   "hidden states of nn.LSTM loaded with to_torch_lstm(parameters)", inputs=(x,))


@pytest.mark.points(3)
def test_set_forget_bias(student):
    value = 1.25
    torch.manual_seed(0)
    for kind, init in (("LSTMCell", {"input_size": 3, "hidden_size": 4}),
                       ("LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 3})):
        before = {k: v.double() for k, v in getattr(nn, kind)(**init).state_dict().items()}
        result = student.helper("set_on_module", "set_forget_bias", kind, init, before, (value,))
        label = f"set_forget_bias on nn.{kind}(**{init})"
        if result["returned"] is not None:
            raise CheckFailure(f"{label} returned a value; it should change the module in "
                               "place and return None")
        after, H = result["state"], init["hidden_size"]
        other = torch.cat([torch.arange(0, H), torch.arange(2 * H, 4 * H)])
        for name in before:
            if name.startswith("bias_ih"):
                hh = name.replace("bias_ih", "bias_hh")
                effective = after[name][H:2 * H] + after[hh][H:2 * H]
                assert_outputs(effective, torch.full((H,), value, dtype=torch.float64),
                               f"{label}: forget-gate bias ({name} + {hh})[H:2H]",
                               inputs=(effective,))
            if name.startswith("bias"):
                assert_outputs(after[name][other], before[name][other],
                               f"{label}: {name} outside the forget gate (must stay untouched)",
                               inputs=(after[name],))
            else:
                assert_outputs(after[name], before[name], f"{label}: {name} (must stay untouched)",
                               inputs=(after[name],))

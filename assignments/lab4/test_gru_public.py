"""Public tests for lab 4. Run them with:  pytest assignments/lab4

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab4.npz, computed by the course's reference solution; the PyTorch parts are also
compared with torch.nn.GRUCell / torch.nn.GRU directly. The gradient check compares your
gru_cell_backward with central differences of *your own* gru_cell_forward, as the grader does.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them.
"""

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnngrade.testing import (
    EXCEPTION,
    CheckFailure,
    StudentError,
    assert_outputs,
    numeric_gradient,
    relative_error,
)

STUDENT_MODULE = "gru"

# assignments/lab2/README.md ("How to read it"): a correct backward pass lands at 1e-6…1e-10
# against central differences (ε = 1e-5, float64); above 1e-4 is a bug. 1e-5 sits between the
# two with a 10x margin on either side.
GRADIENT_CHECK_LIMIT = 1e-5

GRADIENT_SHAPES = {  # key -> shape as a function of (n_x, n_a, m)
    "dxt": lambda n_x, n_a, m: (n_x, m),
    "da_prev": lambda n_x, n_a, m: (n_a, m),
    "dWu": lambda n_x, n_a, m: (n_a, n_a + n_x),
    "dbu": lambda n_x, n_a, m: (n_a, 1),
    "dWr": lambda n_x, n_a, m: (n_a, n_a + n_x),
    "dbr": lambda n_x, n_a, m: (n_a, 1),
    "dWc": lambda n_x, n_a, m: (n_a, n_a + n_x),
    "dbc": lambda n_x, n_a, m: (n_a, 1),
}


# ------------------------------------------------------------------ helpers (not tests)

def random_parameters(rng, n_a, n_x):
    """Classic GRU parameters: weights (n_a, n_a + n_x), biases (n_a, 1)."""
    p = {}
    for gate in ("u", "r", "c"):
        p[f"W{gate}"] = 0.6 * rng.standard_normal((n_a, n_a + n_x))
        p[f"b{gate}"] = 0.3 * rng.standard_normal((n_a, 1))
    return p


def random_torch_weights(rng, d, H):
    """W_ih (3H, d), W_hh (3H, H), b_ih, b_hh (3H,): float64 tensors, gate order r, z, n."""
    return tuple(torch.from_numpy(rng.uniform(-0.7, 0.7, shape))
                 for shape in ((3 * H, d), (3 * H, H), (3 * H,), (3 * H,)))


def describe(value):
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def forward_step(m, xt, a_prev, parameters):
    """Your gru_cell_forward, checked to return a pair (a_next, cache)."""
    result = m.gru_cell_forward(xt, a_prev, parameters)
    if result is None:
        raise CheckFailure("gru_cell_forward returns None — looks unfinished")
    if not isinstance(result, tuple) or len(result) != 2:
        raise CheckFailure("gru_cell_forward should return a pair (a_next, cache), got "
                           f"{describe(result)}")
    return result


def gru_cell_backward_of_forward(m, xt, a_prev, parameters, da_next):
    """Your gru_cell_backward on the cache of your gru_cell_forward."""
    _, cache = forward_step(m, xt, a_prev, parameters)
    return m.gru_cell_backward(da_next, cache)


def expect_shape(name, value, shape):
    if value is None:
        raise CheckFailure(f"{name} is None — looks unfinished")
    if tuple(np.shape(value)) != tuple(shape):
        raise CheckFailure(f"{name} has shape {tuple(np.shape(value))}, expected {tuple(shape)}")


def expect_gradient_dict(name, grads, n_x, n_a, m):
    """``grads`` is a dict with every gradient key, each shaped like what it differentiates."""
    if grads is None:
        raise CheckFailure(f"{name} returns None — looks unfinished")
    if not isinstance(grads, dict):
        raise CheckFailure(f"{name} should return a dict of gradients, got {describe(grads)}")
    missing = [key for key in GRADIENT_SHAPES if key not in grads]
    if missing:
        raise CheckFailure(f"{name}: the returned dict lacks the key(s) {missing}")
    for key, shape in GRADIENT_SHAPES.items():
        expect_shape(f"{name}[{key!r}]", grads[key], shape(n_x, n_a, m))


def expect_tensor_gradient(name, got, want):
    """A gradient computed by autograd through your function matches torch's."""
    if got is None:
        raise CheckFailure(f"no gradient reached {name}: autograd cannot follow your computation "
                           "(use torch operations only: no .numpy(), .item(), .detach() or "
                           "torch.tensor(...) of intermediate results)")
    assert_outputs(got, want, f"gradient of {name}", inputs=(want,))


def nn_gru_cell(weights, d, H):
    cell = torch.nn.GRUCell(d, H).double()
    with torch.no_grad():
        for parameter, value in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh),
                                    weights):
            parameter.copy_(value)
    return cell


def nn_gru_packed(x, h0, weights, lengths):
    """torch.nn.GRU on a packed batch: the expected (out, h_n) of gru_layer with lengths."""
    B, T, d = x.shape
    H = h0.shape[1]
    gru = torch.nn.GRU(d, H, batch_first=True).to(x.dtype)
    with torch.no_grad():
        for name, value in zip(("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
                               weights):
            getattr(gru, name).copy_(value)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, h_n = gru(packed, h0.unsqueeze(0))
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
    return out, h_n[0]


def expect_zero_padding(out, lengths):
    """out[b, t] is exactly zero at every padded step t >= lengths[b]."""
    for b, length in enumerate(int(n) for n in lengths):
        tail = out[b, length:]
        if tail.numel() and bool(torch.any(tail != 0)):
            raise CheckFailure(
                f"out[{b}, {length}:] should be exactly 0 (steps past the length {length} of "
                f"sequence {b} are padding), but its largest |entry| is "
                f"{float(tail.abs().max()):.3g}")


def function_of_state_dict(name, state, n_x, n_a):
    """The parts of an nn.GRUCell state dict that decide what the cell computes. Only the sum of
    the two biases matters for r and z; for n, b_in sits outside the reset gate and b_hn inside,
    so those two are compared separately."""
    if state is None:
        raise CheckFailure(f"{name} returns None — looks unfinished")
    if not isinstance(state, dict):
        raise CheckFailure(f"{name} should return a dict (a state dict), got {describe(state)}")
    shapes = {"weight_ih": (3 * n_a, n_x), "weight_hh": (3 * n_a, n_a), "bias_ih": (3 * n_a,),
              "bias_hh": (3 * n_a,)}
    if set(state) != set(shapes):
        raise CheckFailure(f"{name}: the keys are {sorted(state)}, expected {sorted(shapes)} "
                           "(the state dict of nn.GRUCell)")
    for key, shape in shapes.items():
        if not isinstance(state[key], torch.Tensor):
            raise CheckFailure(f"{name}[{key!r}] should be a torch tensor, got "
                               f"{describe(state[key])}")
        expect_shape(f"{name}[{key!r}]", state[key], shape)
    bias_ih, bias_hh = state["bias_ih"], state["bias_hh"]
    return {"weight_ih": state["weight_ih"], "weight_hh": state["weight_hh"],
            "bias_ih + bias_hh for r and z": (bias_ih + bias_hh)[: 2 * n_a],
            "bias_ih for n": bias_ih[2 * n_a:], "bias_hh for n": bias_hh[2 * n_a:]}


# ------------------------------------------------------------------ gru_cell_forward

@pytest.mark.points(1)
def test_gru_cell_forward_shapes(student, rng):
    n_x, n_a, m = 3, 5, 7
    a_next, _ = forward_step(student, rng.standard_normal((n_x, m)),
                             rng.standard_normal((n_a, m)), random_parameters(rng, n_a, n_x))
    expect_shape("a_next", a_next, (n_a, m))


@pytest.mark.points(3)
def test_gru_cell_forward_values(student, vectors):
    for name in ("gru_cell_forward_small", "gru_cell_forward_wide_input",
                 "gru_cell_forward_float32"):
        case = vectors.case(name)
        a_next, _ = forward_step(student, *case.args)
        assert_outputs((a_next,), case.outputs, f"gru_cell_forward ({name})",
                       names=(f"a_next ({name})",), inputs=case.args)


# ------------------------------------------------------------------ gru_cell_backward

@pytest.mark.points(2)
def test_gru_cell_backward_shapes(student, rng):
    n_x, n_a, m = 2, 3, 6
    grads = gru_cell_backward_of_forward(student, rng.standard_normal((n_x, m)),
                                         rng.standard_normal((n_a, m)),
                                         random_parameters(rng, n_a, n_x),
                                         rng.standard_normal((n_a, m)))
    expect_gradient_dict("gru_cell_backward", grads, n_x, n_a, m)


@pytest.mark.points(4)
def test_gru_cell_backward_values(student, vectors):
    for name in ("gru_cell_backward_small", "gru_cell_backward_float32"):
        case = vectors.case(name)
        xt, a_prev = case.args[0], case.args[1]
        grads = gru_cell_backward_of_forward(student, *case.args)
        expect_gradient_dict(f"gru_cell_backward ({name})", grads, xt.shape[0], a_prev.shape[0],
                             xt.shape[1])
        assert_outputs(grads, case.outputs, f"gru_cell_backward ({name})", inputs=case.args)


@pytest.mark.points(4)
def test_gru_cell_backward_gradient_check(student, rng):
    """Every entry of every gradient against central differences of your own forward pass."""
    n_x, n_a, m = 3, 4, 5
    p = random_parameters(rng, n_a, n_x)
    xt, a_prev = rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m))
    da_next = rng.standard_normal((n_a, m))
    grads = gru_cell_backward_of_forward(student, xt, a_prev, p, da_next)
    expect_gradient_dict("gru_cell_backward", grads, n_x, n_a, m)

    def loss():
        a_next, _ = forward_step(student, xt, a_prev, p)
        return float(np.sum(da_next * np.asarray(a_next, dtype=np.float64)))

    targets = {"dxt": xt, "da_prev": a_prev} | {f"d{key}": value for key, value in p.items()}
    for key, target in targets.items():
        indices = list(np.ndindex(target.shape))
        numeric = numeric_gradient(loss, target, indices)
        analytic = np.asarray(grads[key], dtype=np.float64).reshape(-1)
        errors = relative_error(analytic, numeric)
        worst = int(np.argmax(errors))
        if errors[worst] > GRADIENT_CHECK_LIMIT:
            raise CheckFailure(
                f"gru_cell_backward[{key!r}]: your backward pass disagrees with central "
                f"differences of your forward pass\n  relative error {errors[worst]:.3g} at "
                f"{list(indices[worst])} (a correct gradient gives below "
                f"{GRADIENT_CHECK_LIMIT:g}); there your gradient is {analytic[worst]:.6g}, the "
                f"numerical estimate {numeric[worst]:.6g}")


# ------------------------------------------------------------------ gru_cell (PyTorch form)

@pytest.mark.points(3)
def test_gru_cell_values(student, vectors):
    for name in ("gru_cell_small", "gru_cell_single_example", "gru_cell_float32"):
        case = vectors.case(name)
        h_new = student.gru_cell(*case.args)
        assert_outputs(h_new, case.outputs, f"gru_cell ({name}) h_new", inputs=case.args)


@pytest.mark.points(2)
def test_gru_cell_gradients_match_nn_grucell(student, rng):
    B, d, H = 3, 4, 5
    x = torch.from_numpy(rng.standard_normal((B, d)))
    h = torch.from_numpy(rng.standard_normal((B, H)))
    weights = random_torch_weights(rng, d, H)
    upstream = torch.from_numpy(rng.standard_normal((B, H)))
    result = student.helper("autograd", "gru_cell", (x, h, *weights), [upstream],
                            [0, 1, 2, 3, 4, 5])

    cell = nn_gru_cell(weights, d, H)
    x_ref, h_ref = x.clone().requires_grad_(True), h.clone().requires_grad_(True)
    expected = cell(x_ref, h_ref)
    wanted = torch.autograd.grad((expected * upstream).sum(),
                                 [x_ref, h_ref, cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                  cell.bias_hh])
    assert_outputs(result["outputs"], expected.detach(), "gru_cell h_new", inputs=(x,))
    for name, got, want in zip(("x", "h", "W_ih", "W_hh", "b_ih", "b_hh"), result["grads"],
                               wanted):
        expect_tensor_gradient(name, got, want)


# ------------------------------------------------------------------ gru_layer

@pytest.mark.points(3)
def test_gru_layer_full_length(student, vectors):
    case = vectors.case("gru_layer_full_length")
    B, T, _ = case.args[0].shape
    H = case.args[1].shape[1]
    result = student.gru_layer(*case.args)
    if not isinstance(result, tuple) or len(result) != 2:
        raise CheckFailure(f"gru_layer should return a pair (out, h_n), got {describe(result)}")
    expect_shape("out", result[0], (B, T, H))
    expect_shape("h_n", result[1], (B, H))
    assert_outputs(result, case.outputs, "gru_layer", names=("out", "h_n"), inputs=case.args)


@pytest.mark.points(4)
def test_gru_layer_with_lengths(student, vectors):
    """Padded steps leave the state alone and output exact zeros; h_n is the state after the
    last real step; compared with the stored vectors and with nn.GRU on a packed batch."""
    for name in ("gru_layer_with_lengths", "gru_layer_lengths_float32"):
        case = vectors.case(name)
        x, h0, *weights, lengths = case.args
        B, T, _ = x.shape
        H = h0.shape[1]
        result = student.gru_layer(*case.args)
        if not isinstance(result, tuple) or len(result) != 2:
            raise CheckFailure(f"gru_layer should return a pair (out, h_n), got "
                               f"{describe(result)}")
        out, h_n = result
        expect_shape(f"out ({name})", out, (B, T, H))
        expect_shape(f"h_n ({name})", h_n, (B, H))
        expect_zero_padding(out, lengths)
        assert_outputs(result, case.outputs, f"gru_layer ({name})",
                       names=(f"out ({name})", f"h_n ({name})"), inputs=case.args)
        assert_outputs(result, nn_gru_packed(x, h0, weights, lengths),
                       f"gru_layer ({name}) against nn.GRU on a packed batch",
                       names=(f"out ({name}, nn.GRU)", f"h_n ({name}, nn.GRU)"),
                       inputs=case.args)


# ------------------------------------------------------------------ classic_to_torch_gru

@pytest.mark.points(2)
def test_classic_to_torch_gru_values(student, vectors):
    for name in ("classic_to_torch_gru_small", "classic_to_torch_gru_wide_input"):
        case = vectors.case(name)
        n_a = case.args[0]["Wu"].shape[0]
        n_x = case.args[0]["Wu"].shape[1] - n_a
        label = f"classic_to_torch_gru ({name})"
        got = function_of_state_dict(label, student.classic_to_torch_gru(*case.args), n_x, n_a)
        want = function_of_state_dict(label, case.outputs, n_x, n_a)
        assert_outputs(got, want, label, inputs=case.args)


@pytest.mark.points(2)
def test_classic_to_torch_gru_refuses_when_the_reset_gate_matters(student, rng):
    n_x, n_a = 2, 3
    p = random_parameters(rng, n_a, n_x)  # Wc's hidden block is not zero: no exact conversion
    try:
        student.classic_to_torch_gru(p)
    except StudentError as error:  # what your function raised, as "Type: message"
        first_line = error.message.splitlines()[0] if error.message else ""
        kind, _, text = first_line.partition(":")
        if error.kind != EXCEPTION or kind != "ValueError":
            raise
        if not text.strip():
            raise CheckFailure("classic_to_torch_gru raised a ValueError without a message; "
                               "say why there is no conversion") from None
        return
    raise CheckFailure("classic_to_torch_gru returned a result for parameters whose candidate "
                       "reads the state through Wc[:, :n_a]; no nn.GRUCell computes the same "
                       "function, so it should raise ValueError")

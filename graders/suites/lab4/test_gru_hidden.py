"""Hidden suite for lab4: the GRU and masking (contract: assignments/lab4/README.md).

Classic NumPy step against the reference (computed one precision up) and against central
differences of the student's own forward; the PyTorch cell and layer against ``nn.GRUCell`` and
``nn.GRU`` on a packed batch (values and autograd gradients, CPU float64 and CUDA float32);
``classic_to_torch_gru`` exactly where the two forms agree and a ValueError where they do not.
"""

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnngrade.suite import (
    DIRECTIONAL_RTOL,
    DIRECTIONS,
    EXACT,
    EXCEPTION,
    Chain,
    CheckFailure,
    InProcessRunner,
    ModuleProxy,
    OutputLoss,
    StudentError,
    Tolerance,
    central_differences,
    device_params,
    directional_agreement,
    expect_chained,
    locate,
    promoted_oracle,
    random_directions,
    reference_module,
    relative_error,
    run_chained,
    sample_indices,
    to_numpy,
)

CLASSIC_SIZES = [  # (n_x, n_a, m): n_a = 1, m = 1, n_x = 1 and a larger one
    pytest.param(3, 5, 10, id="n_x3-n_a5-m10"),
    pytest.param(4, 1, 6, id="n_a1"),
    pytest.param(2, 4, 1, id="m1"),
    pytest.param(1, 3, 5, id="n_x1"),
    pytest.param(8, 16, 32, id="n_x8-n_a16-m32"),
]

TORCH_SIZES = [  # (B, d, H)
    pytest.param(4, 3, 5, id="B4-d3-H5"),
    pytest.param(1, 2, 3, id="B1"),
    pytest.param(5, 4, 1, id="H1"),
    pytest.param(16, 10, 20, id="B16-d10-H20"),
]

LAYER_CASES = [  # (B, T, d, H, lengths): None = every sequence has all T steps
    pytest.param(3, 6, 4, 5, None, id="no_lengths"),
    pytest.param(5, 7, 3, 4, (3, 7, 1, 5, 2), id="unsorted_with_1_and_T"),
    pytest.param(3, 5, 2, 3, (5, 5, 5), id="all_full_length"),
    pytest.param(4, 6, 3, 2, (1, 1, 6, 2), id="several_length_1"),
    pytest.param(1, 1, 3, 4, (1,), id="B1-T1"),
]

# The gradient check compares the relative error |a − n| / max(|a|, |n|, 1e-12) between the
# analytic gradient a and central differences n (float64, ε = 1e-5) with 0: truncation
# ε²·f'''/6 ≈ 1e-11 and rounding 1e-16·|L|/ε ≈ 1e-11 put a correct gradient at 1e-6…1e-10, every
# real bug lands above 1e-4; 1e-5 sits between them.
RELATIVE_ERROR = Tolerance(1e-5, 0.0, "relative error against central differences, ε = 1e-5: "
                           "a correct gradient gives 1e-6…1e-10")
# float32 on CUDA with TF32 off, against nn.GRUCell / nn.GRU run in float64 (promoted_oracle:
# cuDNN's float32 GRU is itself ~1e-5 off, measured on an H200): each rounding is 6e-8 and a GRU
# step or its backward sums a few dozen O(1) terms, so the student's float32 stays ~1e-6 off on
# O(1) values and gradients. The float32 tolerance (1e-5 abs, 1e-4 rel) keeps 10x above.
# A gradient that agrees along every direction within DIRECTIONAL_RTOL shows its worst
# directional error at this share of RELATIVE_ERROR (≤ 1e-6 × 10 = 1e-5: within it).
DIRECTIONAL_SHARE = RELATIVE_ERROR.atol / DIRECTIONAL_RTOL
CUDA_FLOAT32 = Tolerance(1e-5, 1e-4, "float32 on CUDA (TF32 off) against float64; ~1e-6")


# ------------------------------------------------------------------ inputs

def classic_parameters(rng, n_x, n_a, dtype=np.float64):
    """Classic GRU parameters, weights (n_a, n_a + n_x) and biases (n_a, 1); gates not saturated."""
    scale = 1.0 / np.sqrt(n_a + n_x)
    p = {}
    for gate in ("u", "r", "c"):
        p[f"W{gate}"] = 1.5 * scale * rng.standard_normal((n_a, n_a + n_x))
        p[f"b{gate}"] = 0.5 * rng.standard_normal((n_a, 1))
    return {k: v.astype(dtype) for k, v in p.items()}


def classic_inputs(rng, n_x, n_a, m, dtype=np.float64):
    xt = rng.standard_normal((n_x, m)).astype(dtype)
    a_prev = rng.standard_normal((n_a, m)).astype(dtype)
    da_next = rng.standard_normal((n_a, m)).astype(dtype)
    return xt, a_prev, classic_parameters(rng, n_x, n_a, dtype), da_next


def tensor(rng, shape, device="cpu", dtype=torch.float64, scale=1.0):
    return torch.from_numpy(scale * rng.standard_normal(shape)).to(device=device, dtype=dtype)


def torch_weights(rng, d, H, device="cpu", dtype=torch.float64):
    """W_ih (3H, d), W_hh (3H, H), b_ih, b_hh (3H,), all non-zero: b_hn matters."""
    return (tensor(rng, (3 * H, d), device, dtype, d**-0.5),
            tensor(rng, (3 * H, H), device, dtype, H**-0.5),
            tensor(rng, (3 * H,), device, dtype, 0.5),
            tensor(rng, (3 * H,), device, dtype, 0.5))


def dtype_for(device):
    return torch.float64 if device == "cpu" else torch.float32


def tol_for(device):
    return None if device == "cpu" else CUDA_FLOAT32


# ------------------------------------------------------------------ probes

def step(m, xt, a_prev, p):
    return m.gru_cell_forward(xt, a_prev, p)[0]


# gru_cell_backward reads gru_cell_forward's cache: the submission's own when its forward can feed
# it, else the reference's (grading/chained.py), so the backward never pays for the forward.
CELL = Chain("lab4", "gru_cell_forward", "gru_cell_backward", arity=3, cache=1, outputs=1)
backward_of_forward = CELL.own()  # the module's gru_cell_backward on its own forward's cache
backward_of_reference = CELL.classic()  # ... on the cache of the reference's forward


def gradient_check(m, xt, a_prev, p, da_next, indices, directions, fed_by_reference=False):
    """the relative error between a module's gru_cell_backward (on the cache of its own
    forward, or of the reference's) and central differences of that forward, at the sampled
    entries of each gradient (0 elsewhere). Run on a mutant it gives that mistake's errors, so a
    student whose backward disagrees with their forward in the same way is diagnosed by name.

    First along ``directions`` (per key, unit vectors over the whole array: two loss
    evaluations each, every entry taking part): when every gradient agrees within
    ``DIRECTIONAL_RTOL``, the errors are 0 but the worst directional one, scaled to this check's
    tolerance, at the first sampled entry of each key; otherwise the entry-wise errors above,
    so a failing report and its diagnosis are what the entry-wise check gives."""
    backward = backward_of_reference if fed_by_reference else backward_of_forward
    grads = backward(m, xt, a_prev, p, da_next)
    if not isinstance(grads, dict):
        return grads  # compared as it is: the report says what came back
    args = (xt, a_prev, p)
    targets = {"dxt": xt, "da_prev": a_prev} | {f"d{k}": v for k, v in p.items()}
    values = {}
    for key in indices:
        shape = targets[key].shape
        value = to_numpy(grads.get(key))
        if value is None or value.shape != shape or value.dtype.kind != "f":
            got = "nothing" if value is None else f"shape {value.shape}, dtype {value.dtype}"
            raise CheckFailure(f"gru_cell_backward[{key!r}]: got {got}, expected a float array "
                               f"of shape {shape} (a gradient has the shape of what it "
                               "differentiates)")
        values[key] = value
    # L = Σ da_next ⊙ a_next; every entry's L(θ ± ε) in one call beside the module
    loss = OutputLoss("gru_cell_forward", 3, ((0, da_next),))
    shapes = {key: targets[key].shape for key in indices}
    paths = {key: locate(targets[key], args) for key in indices}
    worst = directional_agreement(m, loss, args, values, shapes, paths, directions,
                                  "lab4" if fed_by_reference else None)
    if worst is not None:
        errors = {key: np.zeros(shape) for key, shape in shapes.items()}
        for key, error in worst.items():
            errors[key][indices[key][0]] = error * DIRECTIONAL_SHARE
        return errors
    source = ModuleProxy(InProcessRunner(reference_module("lab4"))) if fed_by_reference else m
    numeric = central_differences(source, loss, args, [(locate(targets[key], args), entries)
                                                       for key, entries in indices.items()])
    errors = {}
    for (key, entries), numbers in zip(indices.items(), numeric):
        analytic = np.array([values[key][i] for i in entries], dtype=np.float64)
        error = np.zeros(targets[key].shape)
        for index, e in zip(entries, relative_error(analytic, numbers)):
            error[index] = e
        errors[key] = error
    return errors


def autograd_results(result, names):
    """The autograd helper's {"outputs", "grads"} as one tuple: outputs first, then gradients."""
    outputs, grads = result["outputs"], result["grads"]
    outputs = tuple(outputs) if isinstance(outputs, tuple | list) else (outputs,)
    for name, grad in zip(names, grads):
        if grad is None:
            raise CheckFailure(f"no gradient reached {name}: autograd cannot follow the "
                               "computation (torch operations only: no .numpy(), .item(), "
                               ".detach() or new tensors built from intermediate values)")
    return (*outputs, *grads)


def torch_cell(W_ih, W_hh, b_ih, b_hh):
    H, d = W_hh.shape[1], W_ih.shape[1]
    cell = torch.nn.GRUCell(d, H).to(device=W_ih.device, dtype=W_ih.dtype)
    with torch.no_grad():
        for parameter, value in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh),
                                    (W_ih, W_hh, b_ih, b_hh)):
            parameter.copy_(value)
    return cell


def torch_gru(W_ih, W_hh, b_ih, b_hh):
    H, d = W_hh.shape[1], W_ih.shape[1]
    gru = torch.nn.GRU(d, H, batch_first=True).to(device=W_ih.device, dtype=W_ih.dtype)
    with torch.no_grad():
        for parameter, value in zip((gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0,
                                     gru.bias_hh_l0), (W_ih, W_hh, b_ih, b_hh)):
            parameter.copy_(value)
    return gru


def run_torch_gru(gru, x, h0, lengths):
    """nn.GRU's (out, h_n); with lengths, on a pack_padded_sequence input (lengths on the CPU)."""
    if lengths is None:
        out, h_n = gru(x, h0.unsqueeze(0))
        return out, h_n[0]
    packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, h_n = gru(packed, h0.unsqueeze(0))
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out, h_n[0]


def layer_args(rng, device, B, T, d, H, lengths):
    dtype = dtype_for(device)
    args = (tensor(rng, (B, T, d), device, dtype), tensor(rng, (B, H), device, dtype),
            *torch_weights(rng, d, H, device, dtype))
    if lengths is None:
        return args
    return (*args, torch.tensor(lengths, dtype=torch.int64))  # lengths stay on the CPU


def padded_entries(out, lengths):
    """out at the padded steps t >= lengths[b], flattened; the raw value if it is not (B, T, H)."""
    if not isinstance(out, torch.Tensor) or out.dim() != 3 or out.shape[0] != len(lengths):
        return out
    T = out.shape[1]
    padded = torch.arange(T)[None, :] >= lengths[:, None]  # (B, T)
    return out[padded.to(out.device)].reshape(-1)


def state_dict_function(state, n_x, n_a):
    """The parts of an nn.GRUCell state dict that decide what the cell computes: the weights; for
    r and z only the sum of the two biases; for n, b_in (outside the reset gate) and b_hn
    (inside it) separately. A correct conversion may split the r and z biases as it likes."""
    shapes = {"weight_ih": (3 * n_a, n_x), "weight_hh": (3 * n_a, n_a), "bias_ih": (3 * n_a,),
              "bias_hh": (3 * n_a,)}
    if not isinstance(state, dict):
        return state  # compared as it is: the report says what came back
    if set(state) != set(shapes):
        raise CheckFailure(f"classic_to_torch_gru returned the keys {sorted(map(str, state))}; "
                           f"nn.GRUCell's state dict has {sorted(shapes)}")
    for key, shape in shapes.items():
        if not isinstance(state[key], torch.Tensor) or tuple(state[key].shape) != shape:
            got = (f"shape {tuple(state[key].shape)}" if isinstance(state[key], torch.Tensor)
                   else f"a {type(state[key]).__name__}")
            raise CheckFailure(f"classic_to_torch_gru[{key!r}]: got {got}, expected a torch "
                               f"tensor of shape {shape}")
    b_ih, b_hh = state["bias_ih"], state["bias_hh"]
    return {"weight_ih": state["weight_ih"], "weight_hh": state["weight_hh"],
            "bias_ih + bias_hh (r, z)": (b_ih + b_hh)[: 2 * n_a],
            "bias_ih (n)": b_ih[2 * n_a:], "bias_hh (n)": b_hh[2 * n_a:]}


def converted_step(m, p, xt, a_prev):
    """nn.GRUCell loaded with the module's conversion, run on (xt, a_prev) in the classic
    column layout."""
    n_a = p["Wu"].shape[0]
    n_x = p["Wu"].shape[1] - n_a
    state = state_dict_function(m.classic_to_torch_gru(p), n_x, n_a)
    if not isinstance(state, dict):
        raise CheckFailure(f"classic_to_torch_gru returned a {type(state).__name__}, expected "
                           "a state dict")
    b_ih = torch.cat([state["bias_ih + bias_hh (r, z)"], state["bias_ih (n)"]])
    b_hh = torch.cat([torch.zeros(2 * n_a, dtype=b_ih.dtype), state["bias_hh (n)"]])
    cell = torch_cell(state["weight_ih"].double(), state["weight_hh"].double(), b_ih.double(),
                      b_hh.double())
    with torch.no_grad():
        return cell(torch.from_numpy(xt.T.copy()), torch.from_numpy(a_prev.T.copy())).numpy().T


def conversion_outcome(m, p):
    """What classic_to_torch_gru does with parameters that have no PyTorch twin."""
    try:
        m.classic_to_torch_gru(p)
    except StudentError as error:
        if error.kind != EXCEPTION:
            raise  # not implemented, timeout, crash ...: reported as such
        first_line = error.message.splitlines()[0] if error.message else ""
        kind, _, text = first_line.partition(":")
        if kind.strip() != "ValueError":
            return f"raised {kind.strip()} instead of ValueError"
        return "raised ValueError" if text.strip() else "raised ValueError without a message"
    return "returned without raising"


# ------------------------------------------------------------------ gru_cell_forward

@pytest.mark.parametrize("n_x, n_a, m", CLASSIC_SIZES)
def test_gru_cell_forward_random(check, rng, n_x, n_a, m):
    xt, a_prev, p, _ = classic_inputs(rng, n_x, n_a, m)
    check.expect("gru_cell_forward", step, (xt, a_prev, p), names=("a_next",))


@pytest.mark.parametrize("zero", ["a_prev", "xt", "Wc_hidden_block", "Wu", "Wr", "biases"])
def test_gru_cell_forward_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    xt, a_prev, p, _ = classic_inputs(rng, 3, 4, 6)
    if zero == "a_prev":
        a_prev = np.zeros_like(a_prev)
    elif zero == "xt":
        xt = np.zeros_like(xt)
    elif zero == "Wc_hidden_block":
        p["Wc"][:, :4] = 0.0
    elif zero == "biases":
        for key in ("bu", "br", "bc"):
            p[key] = np.zeros_like(p[key])
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"gru_cell_forward with {zero} = 0", step, (xt, a_prev, p), names=("a_next",))


def test_gru_cell_forward_float32(check, rng):
    xt, a_prev, p, _ = classic_inputs(rng, 4, 6, 5, np.float32)
    check.expect("gru_cell_forward (float32 inputs)", step, (xt, a_prev, p), names=("a_next",))


# ------------------------------------------------------------------ gru_cell_backward

@pytest.mark.parametrize("n_x, n_a, m", CLASSIC_SIZES)
def test_gru_cell_backward_random(check, rng, n_x, n_a, m):
    expect_chained(check, CELL, "gru_cell_backward", classic_inputs(rng, n_x, n_a, m))


@pytest.mark.parametrize("zero", ["a_prev", "xt", "Wc_hidden_block", "Wu", "Wr",
                                  "da_next_row"])
def test_gru_cell_backward_term_isolation(check, rng, zero):
    xt, a_prev, p, da_next = classic_inputs(rng, 3, 4, 5)
    if zero == "a_prev":
        a_prev = np.zeros_like(a_prev)
    elif zero == "xt":
        xt = np.zeros_like(xt)
    elif zero == "Wc_hidden_block":
        p["Wc"][:, :4] = 0.0
    elif zero == "da_next_row":
        da_next[1] = 0.0  # unit 1 gets no upstream gradient; others still reach it via the gates
    else:
        p[zero] = np.zeros_like(p[zero])
    expect_chained(check, CELL, f"gru_cell_backward with {zero} = 0", (xt, a_prev, p, da_next))


@pytest.mark.parametrize("n_x, n_a, m", [
    pytest.param(3, 4, 5, id="n_x3-n_a4-m5"),
    pytest.param(2, 1, 3, id="n_a1"),
    pytest.param(1, 3, 1, id="n_x1-m1"),
    pytest.param(6, 8, 7, id="n_x6-n_a8-m7"),
])
def test_gru_cell_backward_central_differences(check, rng, n_x, n_a, m):
    """The student's backward against central differences of the forward that fed it (the
    student's own, or the reference's when the student's cannot)."""
    xt, a_prev, p, da_next = classic_inputs(rng, n_x, n_a, m)
    shapes = {"dxt": xt.shape, "da_prev": a_prev.shape} | {f"d{k}": v.shape for k, v in p.items()}
    indices = {key: sample_indices(shape, 6, rng) for key, shape in shapes.items()}
    directions = {key: random_directions(shape, DIRECTIONS, rng) for key, shape in shapes.items()}

    def own(mod, *a):
        return gradient_check(mod, *a, indices, directions)

    def fed_by_reference(mod, *a):
        return gradient_check(mod, *a, indices, directions, fed_by_reference=True)

    def run(probe):
        whose = "the course's" if probe is fed_by_reference else "your"
        check.expect(f"gru_cell_backward vs central differences of {whose} forward (relative "
                     "error)", probe, (xt, a_prev, p, da_next),
                     oracle=lambda *a: {key: np.zeros(shape) for key, shape in shapes.items()},
                     tol=RELATIVE_ERROR)

    run_chained(check.student, CELL, (xt, a_prev, p, da_next), run, own=own,
                classic=fed_by_reference)


def test_gru_cell_backward_float32(check, rng):
    expect_chained(check, CELL, "gru_cell_backward (float32 inputs)",
                   classic_inputs(rng, 3, 5, 4, np.float32))


# ------------------------------------------------------------------ gru_cell (PyTorch form)

def torch_cell_value(x, h, W_ih, W_hh, b_ih, b_hh):
    with torch.no_grad():
        return torch_cell(W_ih, W_hh, b_ih, b_hh)(x, h)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, d, H", TORCH_SIZES)
def test_gru_cell_vs_torch(check, rng, device, B, d, H):
    dtype = dtype_for(device)
    args = (tensor(rng, (B, d), device, dtype), tensor(rng, (B, H), device, dtype),
            *torch_weights(rng, d, H, device, dtype))
    check.expect(f"gru_cell against nn.GRUCell on {device}", lambda m, *a: m.gru_cell(*a), args,
                 oracle=promoted_oracle(torch_cell_value), tol=tol_for(device), names=("h_new",))


CELL_GRAD_NAMES = ("x", "h", "W_ih", "W_hh", "b_ih", "b_hh")


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, d, H", TORCH_SIZES[:3])
def test_gru_cell_gradients_vs_torch(check, rng, device, B, d, H):
    """Autograd through the student's gru_cell against autograd through nn.GRUCell."""
    dtype = dtype_for(device)
    args = (tensor(rng, (B, d), device, dtype), tensor(rng, (B, H), device, dtype),
            *torch_weights(rng, d, H, device, dtype))
    upstream = tensor(rng, (B, H), device, dtype)

    def probe(m, *a):
        result = m.helper("autograd", "gru_cell", a, [upstream], list(range(6)))
        return autograd_results(result, CELL_GRAD_NAMES)

    def oracle(x, h, *weights):
        cell = torch_cell(*weights)
        x, h = x.clone().requires_grad_(True), h.clone().requires_grad_(True)
        out = cell(x, h)
        grads = torch.autograd.grad((out * upstream).sum(),
                                    [x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                     cell.bias_hh])
        return (out.detach(), *grads)

    check.expect(f"gru_cell gradients against nn.GRUCell on {device}", probe, args,
                 oracle=promoted_oracle(oracle), tol=tol_for(device),
                 names=("h_new", *(f"gradient of {n}" for n in CELL_GRAD_NAMES)))


@pytest.mark.parametrize("zero", ["h", "x", "W_hh", "b_hh", "b_ih"])
def test_gru_cell_term_isolation(check, rng, zero):
    names = ("x", "h", "W_ih", "W_hh", "b_ih", "b_hh")
    args = dict(zip(names, (tensor(rng, (4, 3)), tensor(rng, (4, 5)), *torch_weights(rng, 3, 5))))
    args[zero] = torch.zeros_like(args[zero])
    check.expect(f"gru_cell with {zero} = 0", lambda m, *a: m.gru_cell(*a),
                 tuple(args[n] for n in names), oracle=torch_cell_value, names=("h_new",))


def test_gru_cell_float32(check, rng):
    args = (tensor(rng, (3, 4), dtype=torch.float32), tensor(rng, (3, 6), dtype=torch.float32),
            *torch_weights(rng, 4, 6, dtype=torch.float32))
    check.expect("gru_cell (float32 inputs)", lambda m, *a: m.gru_cell(*a), args,
                 names=("h_new",))


# ------------------------------------------------------------------ gru_layer

def torch_layer_value(x, h0, W_ih, W_hh, b_ih, b_hh, lengths=None):
    with torch.no_grad():
        return run_torch_gru(torch_gru(W_ih, W_hh, b_ih, b_hh), x, h0, lengths)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, T, d, H, lengths", LAYER_CASES)
def test_gru_layer_vs_torch(check, rng, device, B, T, d, H, lengths):
    """out and h_n against nn.GRU on a pack_padded_sequence input: h_n is the state after each
    sequence's last real step, padded outputs are zero."""
    args = layer_args(rng, device, B, T, d, H, lengths)
    check.expect(f"gru_layer against nn.GRU on {device}", lambda m, *a: m.gru_layer(*a), args,
                 oracle=promoted_oracle(torch_layer_value), tol=tol_for(device),
                 names=("out", "h_n"),
                 time_axis=1)


@pytest.mark.parametrize("B, T, d, H, lengths", [c for c in LAYER_CASES if c.values[4]])
def test_gru_layer_padded_outputs_exactly_zero(check, rng, B, T, d, H, lengths):
    """out[b, t] for t >= lengths[b] is exactly 0, not merely small."""
    args = layer_args(rng, "cpu", B, T, d, H, lengths)
    lengths_tensor = args[-1]
    check.expect("gru_layer outputs at padded steps",
                 lambda m, *a: padded_entries(m.gru_layer(*a)[0], lengths_tensor), args,
                 oracle=lambda *a: padded_entries(torch.zeros(B, T, H, dtype=torch.float64),
                                                  lengths_tensor),
                 tol=EXACT, names=("out at padded steps",))


LAYER_GRAD_NAMES = ("x", "h0", "W_ih", "W_hh", "b_ih", "b_hh")


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, T, d, H, lengths", [LAYER_CASES[0], LAYER_CASES[1]])
def test_gru_layer_gradients_vs_torch(check, rng, device, B, T, d, H, lengths):
    """Autograd through the student's gru_layer against autograd through nn.GRU (packed)."""
    args = layer_args(rng, device, B, T, d, H, lengths)
    dtype = dtype_for(device)
    up_out, up_h = tensor(rng, (B, T, H), device, dtype), tensor(rng, (B, H), device, dtype)

    def probe(m, *a):
        result = m.helper("autograd", "gru_layer", a, [up_out, up_h], list(range(6)))
        return autograd_results(result, LAYER_GRAD_NAMES)

    def oracle(x, h0, *rest):
        weights, lengths_arg = rest[:4], (rest[4] if len(rest) > 4 else None)
        gru = torch_gru(*weights)
        x, h0 = x.clone().requires_grad_(True), h0.clone().requires_grad_(True)
        out, h_n = run_torch_gru(gru, x, h0, lengths_arg)
        loss = (out * up_out).sum() + (h_n * up_h).sum()
        grads = torch.autograd.grad(loss, [x, h0, gru.weight_ih_l0, gru.weight_hh_l0,
                                           gru.bias_ih_l0, gru.bias_hh_l0])
        return (out.detach(), h_n.detach(), *grads)

    check.expect(f"gru_layer gradients against nn.GRU on {device}", probe, args,
                 oracle=promoted_oracle(oracle),
                 tol=tol_for(device),
                 names=("out", "h_n", *(f"gradient of {n}" for n in LAYER_GRAD_NAMES)))


# ------------------------------------------------------------------ classic_to_torch_gru

CONVERSION_SIZES = [  # (n_x, n_a)
    pytest.param(2, 3, id="n_x2-n_a3"),
    pytest.param(5, 2, id="n_x5-n_a2"),
    pytest.param(3, 1, id="n_a1"),
    pytest.param(6, 8, id="n_x6-n_a8"),
]


def convertible_parameters(rng, n_x, n_a):
    p = classic_parameters(rng, n_x, n_a)
    p["Wc"][:, :n_a] = 0.0  # the reset gate has no effect: the two forms agree
    return p


@pytest.mark.parametrize("n_x, n_a", CONVERSION_SIZES)
def test_classic_to_torch_gru_state_dict(check, rng, n_x, n_a):
    """Weights and the biases that matter, against the reference (negation and stacking are
    exact; the r and z biases may be split between bias_ih and bias_hh freely)."""
    p = convertible_parameters(rng, n_x, n_a)
    check.expect("classic_to_torch_gru",
                 lambda m, p: state_dict_function(m.classic_to_torch_gru(p), n_x, n_a), (p,),
                 promote=False)


@pytest.mark.parametrize("n_x, n_a", CONVERSION_SIZES)
def test_classic_to_torch_gru_runs_like_the_classic_step(check, reference, rng, n_x, n_a):
    """nn.GRUCell loaded with the conversion computes what gru_cell_forward computes."""
    p = convertible_parameters(rng, n_x, n_a)
    xt, a_prev = rng.standard_normal((n_x, 7)), rng.standard_normal((n_a, 7))
    check.expect("nn.GRUCell loaded with classic_to_torch_gru", converted_step, (p, xt, a_prev),
                 oracle=lambda p, xt, a_prev: reference.gru_cell_forward(xt, a_prev, p)[0],
                 names=("a_next",))


@pytest.mark.parametrize("hidden_block", ["random", "one_off_diagonal_entry"])
def test_classic_to_torch_gru_refuses(check, rng, hidden_block):
    """When the reset gate matters there is no nn.GRUCell twin: a ValueError with a message.
    (n_a ≥ 2 and an off-diagonal hidden weight: with n_a = 1 or a diagonal Wc[:, :n_a] the two
    forms would still agree.)"""
    n_x, n_a = 3, 4
    p = classic_parameters(rng, n_x, n_a)
    if hidden_block == "one_off_diagonal_entry":
        p["Wc"][:, :n_a] = 0.0
        p["Wc"][2, 0] = 0.3
    check.expect("classic_to_torch_gru with a non-zero Wc[:, :n_a]", conversion_outcome, (p,),
                 oracle=lambda p: "raised ValueError", names=("outcome",))

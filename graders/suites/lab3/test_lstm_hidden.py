"""Hidden suite for lab 3: the LSTM (contract: assignments/lab3/README.md).

NumPy part: forward and backward against the reference, backward also against central differences
of the forward pass that fed it: the submission's own, unless it cannot feed the backward pass,
then the reference's classic-layout caches (``grading/chained.py``).
PyTorch part: ``lstm_cell`` and ``lstm_layer`` against ``nn.LSTMCell`` and
``nn.LSTM(batch_first=True)``, values and autograd gradients of every input and weight, on CPU
(float64) and CUDA (float32, TF32 off); ``to_torch_lstm`` through a real ``nn.LSTM``;
``set_forget_bias`` on modules built beside the submission.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import nn
from torch.func import functional_call

from rnngrade.suite import (
    Chain,
    CheckFailure,
    OutputLoss,
    Tolerance,
    device_params,
    expect_chained,
    expect_distinct_caches,
    expect_gradient_check,
)

GATES = ("f", "i", "c", "o")

# Gradient checks compare 1 + the relative error |a − n| / max(|a|, |n|, 1e-12) with 1.
# Central differences with ε = 1e-5 in float64 are accurate to ~1e-10 absolute (truncation
# ε²·f‴/6, rounding 1e-16·|L|/ε), and the checked entries are at least 1e-2 of the largest
# gradient, so a correct backward pass lands at 1e-6 or better (the reference: ~1e-9); the
# README calls anything above 1e-4 a bug, and real mistakes land above 1e-2.
GRADIENT_CHECK = Tolerance(0.0, 1e-5, "relative error against central differences (ε = 1e-5, "
                           "float64) must stay below 1e-5; a correct gradient gives ~1e-8")
# float32 on CUDA with TF32 off, against nn.LSTM run in float64 (nn_autograd: cuDNN's float32
# LSTM is itself up to ~2e-5 off, measured on an H200): the student's float32 rounds at 6e-8 per
# operation; outputs stay ~1e-6 off and weight gradients (sums over B·T steps) a few 1e-6, so
# 2e-5 absolute / 1e-4 relative keeps a 10x margin.
CUDA_FLOAT32 = Tolerance(2e-5, 1e-4, "float32 on CUDA (TF32 off) against float64: ~1e-6 on O(1) "
                         "values")

SIZES = [  # (n_x, n_a, n_y, m, T_x): edge sizes n_a = 1, m = 1, T_x = 1 and larger ones
    pytest.param(3, 5, 2, 4, 6, id="n_x3-n_a5-m4-T6"),
    pytest.param(4, 1, 3, 3, 5, id="n_a1"),
    pytest.param(2, 4, 3, 1, 5, id="m1"),
    pytest.param(3, 4, 2, 5, 1, id="T1"),
    pytest.param(4, 4, 3, 3, 4, id="square-n_x4-n_a4"),
    pytest.param(6, 10, 5, 16, 12, id="n_x6-n_a10-m16-T12"),
    pytest.param(3, 5, 2, 10, 7, id="classic-n_x3-n_a5-m10-T7"),  # the classic notebook's example
    pytest.param(None, None, None, None, None, id="drawn-sizes"),
]


def sizes_or_drawn(rng: np.random.Generator, *sizes: int | None) -> tuple[int, ...]:
    """The given sizes, or (for the "drawn-sizes" case) sizes drawn from the test's rng."""
    if sizes[0] is not None:
        return tuple(int(s) for s in sizes)  # type: ignore[arg-type]
    return tuple(int(v) for v in rng.integers([1, 1, 1, 1, 4], [7, 8, 6, 8, 9]))


def make_parameters(rng: np.random.Generator, n_x: int, n_a: int, n_y: int = 3,
                    dtype: type = np.float64) -> dict:
    """Classic LSTM parameters, scaled so the gates stay in their sensitive range."""
    p = {}
    for gate in GATES:
        p["W" + gate] = rng.standard_normal((n_a, n_a + n_x)) / np.sqrt(n_a + n_x)
        p["b" + gate] = 0.3 * rng.standard_normal((n_a, 1))
    p["Wy"] = rng.standard_normal((n_y, n_a))
    p["by"] = 0.3 * rng.standard_normal((n_y, 1))
    return {k: v.astype(dtype) for k, v in p.items()}


# ------------------------------------------------------------------ NumPy probes

def cell_forward(m, xt, a_prev, c_prev, p):
    return m.head("lstm_cell_forward", 3, xt, a_prev, c_prev, p)  # the cache is not checked


def sequence_forward(m, x, a0, p):
    return m.head("lstm_forward", 3, x, a0, p)


def sequence_forward_caches(m, x, a0, p):
    """lstm_forward's outputs, failing when its caches hold one array where the course's hold
    distinct ones (every step's `c_prev` in one buffer): the backward pass reads them."""
    result = m.lstm_forward(x, a0, p)
    expect_distinct_caches("lab3", "lstm_forward", result, 3, (x, a0, p), "lstm_cell_forward")
    return result[:3] if isinstance(result, tuple | list) else result


# The backward passes read their forward pass's cache: the submission's own when its forward
# pass can feed them, else the classic ten-tuple from the reference (grading/chained.py).
CELL = Chain("lab3", "lstm_cell_forward", "lstm_cell_backward", arity=4, cache=3, outputs=3)
SEQUENCE = Chain("lab3", "lstm_forward", "lstm_backward", arity=3, cache=3, outputs=3)


CELL_NAMES = ("a_next", "c_next", "yt_pred")
SEQUENCE_NAMES = ("a", "y", "c")


# ------------------------------------------------------------------ lstm_cell_forward

@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_lstm_cell_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    n_x, n_a, n_y, m, _ = sizes_or_drawn(rng, n_x, n_a, n_y, m, T_x)
    args = (rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m)),
            rng.standard_normal((n_a, m)), make_parameters(rng, n_x, n_a, n_y))
    check.expect("lstm_cell_forward", cell_forward, args, names=CELL_NAMES)


@pytest.mark.parametrize("zero", ["a_prev", "xt", "c_prev", "Wf", "Wi", "Wc", "Wo"])
def test_lstm_cell_forward_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    p = make_parameters(rng, 3, 4)
    xt, a_prev, c_prev = (rng.standard_normal(s) for s in ((3, 5), (4, 5), (4, 5)))
    inputs = {"xt": xt, "a_prev": a_prev, "c_prev": c_prev}
    if zero in inputs:
        inputs[zero] = np.zeros_like(inputs[zero])
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"lstm_cell_forward with {zero} = 0", cell_forward,
                 (inputs["xt"], inputs["a_prev"], inputs["c_prev"], p), names=CELL_NAMES)


def test_lstm_cell_forward_float32(check, rng):
    p = make_parameters(rng, 4, 6, dtype=np.float32)
    args = tuple(rng.standard_normal(s).astype(np.float32) for s in ((4, 5), (6, 5), (6, 5)))
    check.expect("lstm_cell_forward (float32 inputs)", cell_forward, (*args, p), names=CELL_NAMES)


# ------------------------------------------------------------------ lstm_forward

@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_lstm_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    n_x, n_a, n_y, m, T_x = sizes_or_drawn(rng, n_x, n_a, n_y, m, T_x)
    args = (rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m)),
            make_parameters(rng, n_x, n_a, n_y))
    check.expect("lstm_forward", sequence_forward_caches, args, names=SEQUENCE_NAMES,
                 time_axis=2)


@pytest.mark.parametrize("zero", ["a0", "x", "Wf"])
def test_lstm_forward_term_isolation(check, rng, zero):
    p = make_parameters(rng, 3, 4)
    x, a0 = rng.standard_normal((3, 5, 6)), rng.standard_normal((4, 5))
    if zero == "a0":
        a0 = np.zeros_like(a0)
    elif zero == "x":
        x = np.zeros_like(x)
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"lstm_forward with {zero} = 0", sequence_forward, (x, a0, p),
                 names=SEQUENCE_NAMES, time_axis=2)


def test_lstm_forward_float32(check, rng):
    p = make_parameters(rng, 3, 5, dtype=np.float32)
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    a0 = rng.standard_normal((5, 4)).astype(np.float32)
    check.expect("lstm_forward (float32 inputs)", sequence_forward, (x, a0, p),
                 names=SEQUENCE_NAMES, time_axis=2)


def test_lstm_forward_long_sequence(check, rng):
    args = (rng.standard_normal((4, 3, 150)), rng.standard_normal((6, 3)),
            make_parameters(rng, 4, 6))
    check.expect("lstm_forward (T_x = 150)", sequence_forward, args, names=SEQUENCE_NAMES,
                 time_axis=2)


# ------------------------------------------------------------------ lstm_cell_backward

@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_lstm_cell_backward_random(check, rng, n_x, n_a, n_y, m, T_x):
    n_x, n_a, n_y, m, _ = sizes_or_drawn(rng, n_x, n_a, n_y, m, T_x)
    args = (rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m)),
            rng.standard_normal((n_a, m)), make_parameters(rng, n_x, n_a, n_y),
            rng.standard_normal((n_a, m)), rng.standard_normal((n_a, m)))
    expect_chained(check, CELL, "lstm_cell_backward", args)


@pytest.mark.parametrize("zero", ["da_next", "dc_next", "c_prev", "a_prev"])
def test_lstm_cell_backward_term_isolation(check, rng, zero):
    p = make_parameters(rng, 3, 4)
    values = {k: rng.standard_normal(s) for k, s in
              (("xt", (3, 5)), ("a_prev", (4, 5)), ("c_prev", (4, 5)), ("da_next", (4, 5)),
               ("dc_next", (4, 5)))}
    values[zero] = np.zeros_like(values[zero])
    expect_chained(check, CELL, f"lstm_cell_backward with {zero} = 0",
                 (values["xt"], values["a_prev"], values["c_prev"], p, values["da_next"],
                  values["dc_next"]))


def test_lstm_cell_backward_float32(check, rng):
    p = make_parameters(rng, 4, 6, dtype=np.float32)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ((4, 5), (6, 5), (6, 5), (6, 5), (6, 5))]
    expect_chained(check, CELL, "lstm_cell_backward (float32 inputs)",
                   (*arrays[:3], p, *arrays[3:]))


@pytest.mark.parametrize("n_x, n_a, m", [(3, 4, 5), (2, 1, 3), (3, 3, 1)],
                         ids=["n_x3-n_a4-m5", "n_a1", "m1"])
def test_lstm_cell_backward_gradient_check(check, reference, rng, n_x, n_a, m):
    p = make_parameters(rng, n_x, n_a)
    xt, a_prev, c_prev, da_next, dc_next = (rng.standard_normal(s) for s in
                                            ((n_x, m), (n_a, m), (n_a, m), (n_a, m), (n_a, m)))

    # L = Σ da_next ⊙ a_next + Σ dc_next ⊙ c_next through the module's forward pass
    loss = OutputLoss("lstm_cell_forward", 4, ((0, da_next), (1, dc_next)))
    targets = {"dxt": (xt, None), "da_prev": (a_prev, None), "dc_prev": (c_prev, None)}
    targets.update({"dW" + g: (p["W" + g], None) for g in GATES})
    targets.update({"db" + g: (p["b" + g], None) for g in GATES})
    expect_gradient_check(check, reference, "lstm_cell_backward", CELL.own(), loss,
                          (xt, a_prev, c_prev, p, da_next, dc_next), targets, rng,
                          GRADIENT_CHECK, count=5, chain=CELL)


# ------------------------------------------------------------------ lstm_backward

@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_lstm_backward_random(check, rng, n_x, n_a, n_y, m, T_x):
    n_x, n_a, n_y, m, T_x = sizes_or_drawn(rng, n_x, n_a, n_y, m, T_x)
    args = (rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m)),
            make_parameters(rng, n_x, n_a, n_y), rng.standard_normal((n_a, m, T_x)))
    expect_chained(check, SEQUENCE, "lstm_backward", args, time_axis=2)


@pytest.mark.parametrize("zero", ["a0", "x", "da_before_last"])
def test_lstm_backward_term_isolation(check, rng, zero):
    """With da = 0 before the last step, every earlier gradient flows back through time."""
    p = make_parameters(rng, 3, 4)
    x, a0, da = (rng.standard_normal(s) for s in ((3, 5, 6), (4, 5), (4, 5, 6)))
    if zero == "a0":
        a0 = np.zeros_like(a0)
    elif zero == "x":
        x = np.zeros_like(x)
    else:
        da[:, :, :-1] = 0.0
    expect_chained(check, SEQUENCE, f"lstm_backward with {zero} = 0", (x, a0, p, da),
                 time_axis=2)


def test_lstm_backward_float32(check, rng):
    p = make_parameters(rng, 3, 5, dtype=np.float32)
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    a0 = rng.standard_normal((5, 4)).astype(np.float32)
    da = rng.standard_normal((5, 4, 7)).astype(np.float32)
    expect_chained(check, SEQUENCE, "lstm_backward (float32 inputs)", (x, a0, p, da),
                 time_axis=2)


def test_lstm_backward_long_sequence(check, rng):
    args = (rng.standard_normal((4, 3, 80)), rng.standard_normal((6, 3)),
            make_parameters(rng, 4, 6), rng.standard_normal((6, 3, 80)))
    expect_chained(check, SEQUENCE, "lstm_backward (T_x = 80)", args, time_axis=2)


@pytest.mark.parametrize("n_x, n_a, m, T_x", [(3, 4, 2, 5), (2, 1, 3, 6), (3, 3, 1, 4)],
                         ids=["n_x3-n_a4-m2-T5", "n_a1-T6", "m1-T4"])
def test_lstm_backward_gradient_check(check, reference, rng, n_x, n_a, m, T_x):
    """T_x ≥ 4: a gradient that is not carried through time is exact at T_x = 1."""
    p = make_parameters(rng, n_x, n_a)
    x, a0, da = (rng.standard_normal(s) for s in ((n_x, m, T_x), (n_a, m), (n_a, m, T_x)))

    loss = OutputLoss("lstm_forward", 3, ((0, da),))  # L = Σ_t Σ da[:, :, t] ⊙ a[:, :, t]
    targets = {"dx": (x, None), "da0": (a0, None)}
    targets.update({"dW" + g: (p["W" + g], None) for g in GATES})
    targets.update({"db" + g: (p["b" + g], None) for g in GATES})
    expect_gradient_check(check, reference, "lstm_backward", SEQUENCE.own(), loss,
                          (x, a0, p, da), targets, rng, GRADIENT_CHECK, count=5, chain=SEQUENCE)


# ------------------------------------------------------------------ PyTorch: lstm_cell, lstm_layer

CELL_ARGS = ("x", "h", "c", "W_ih", "W_hh", "b_ih", "b_hh")
LAYER_ARGS = ("x", "h0", "c0", "W_ih", "W_hh", "b_ih", "b_hh")


def torch_case(seed: int, device: str, dtype: torch.dtype, *shapes: tuple[int, ...],
               d: int, H: int) -> tuple[torch.Tensor, ...]:
    """Inputs of the given shapes, then W_ih, W_hh, b_ih, b_hh, generated in float64 on the CPU
    (the same numbers on every device) and moved to ``device``/``dtype``."""
    g = torch.Generator().manual_seed(seed)
    weights = ((4 * H, d), (4 * H, H), (4 * H,), (4 * H,))
    scales = [1.0] * len(shapes) + [d**-0.5, H**-0.5, 0.5, 0.5]
    return tuple((torch.randn(*s, generator=g, dtype=torch.float64) * k).to(device, dtype)
                 for s, k in zip((*shapes, *weights), scales))


def upstream_for(seed: int, like: list[torch.Tensor]) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed + 1)
    return [torch.randn(*t.shape, generator=g, dtype=torch.float64).to(t.device, t.dtype)
            for t in like]


def autograd_probe(function: str, upstream: list[torch.Tensor], outputs: tuple[str, ...],
                   arg_names: tuple[str, ...]) -> Callable:
    """A probe: run ``function`` with autograd beside the module (worker helper "autograd") and
    return its outputs and the gradient of Σ upstream ⊙ outputs w.r.t. every argument."""

    def probe(m, *args):
        result = m.helper("autograd", function, args, upstream, list(range(len(args))))
        flat = result["outputs"]
        if function == "lstm_layer" and isinstance(flat, tuple | list) and len(flat) == 2 \
                and isinstance(flat[1], tuple | list):
            flat = (flat[0], *flat[1])
        named = dict(zip(outputs, flat)) if isinstance(flat, tuple | list) else {"out": flat}
        for name, arg, grad in zip(arg_names, args, result["grads"]):
            # no gradient reached this argument: it does not influence the outputs at all
            named[f"d{name}"] = torch.zeros_like(arg) if grad is None else grad
        return named

    return probe


def nn_autograd(kind: str, args: tuple, upstream: list[torch.Tensor], outputs: tuple[str, ...],
                arg_names: tuple[str, ...]) -> dict:
    """What nn.LSTMCell / nn.LSTM(batch_first=True) computes, with autograd, in float64 on the
    inputs' device (float32 inputs are promoted: the expected value is then the exact one, and
    cuDNN's own float32 error never counts against the student)."""
    device = args[0].device
    dtype = torch.float64
    leaves = [a.detach().to(dtype).clone().requires_grad_(True) for a in args]
    x, h, c, W_ih, W_hh, b_ih, b_hh = leaves
    d, H = x.shape[-1], h.shape[-1]
    if kind == "LSTMCell":
        module = nn.LSTMCell(d, H).to(device, dtype)
        params = {"weight_ih": W_ih, "weight_hh": W_hh, "bias_ih": b_ih, "bias_hh": b_hh}
        values = functional_call(module, params, (x, (h, c)))
    else:
        module = nn.LSTM(d, H, batch_first=True).to(device, dtype)
        params = {"weight_ih_l0": W_ih, "weight_hh_l0": W_hh, "bias_ih_l0": b_ih,
                  "bias_hh_l0": b_hh}
        out, (h_n, c_n) = functional_call(module, params, (x, (h[None], c[None])))
        values = (out, h_n[0], c_n[0])
    total = sum((v * u.to(dtype)).sum() for v, u in zip(values, upstream))
    total.backward()
    expected = {name: v.detach() for name, v in zip(outputs, values)}
    expected.update({f"d{name}": leaf.grad for name, leaf in zip(arg_names, leaves)})
    return expected


def expect_torch(check, kind: str, args: tuple, label: str, seed: int) -> None:
    """lstm_cell or lstm_layer against nn.LSTMCell / nn.LSTM: values and every gradient."""
    function, outputs, arg_names = {
        "LSTMCell": ("lstm_cell", ("h_new", "c_new"), CELL_ARGS),
        "LSTM": ("lstm_layer", ("out", "h_n", "c_n"), LAYER_ARGS),
    }[kind]
    B, H = args[1].shape
    shapes = [(B, H), (B, H)] if kind == "LSTMCell" else [(B, args[0].shape[1], H), (B, H), (B, H)]
    upstream = upstream_for(seed, [torch.empty(s, device=args[0].device, dtype=args[0].dtype)
                                   for s in shapes])
    tol = CUDA_FLOAT32 if args[0].device.type == "cuda" else None
    check.expect(label, autograd_probe(function, upstream, outputs, arg_names), args,
                 oracle=lambda *a: nn_autograd(kind, a, upstream, outputs, arg_names), tol=tol,
                 promote=False)


def dtype_for(device: str) -> torch.dtype:
    return torch.float64 if device == "cpu" else torch.float32


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, d, H", [(4, 3, 5), (1, 2, 3), (3, 4, 1), (8, 10, 16)],
                         ids=["B4-d3-H5", "B1", "H1", "B8-d10-H16"])
def test_lstm_cell_vs_nn_lstmcell(check, device, B, d, H):
    seed = 100 * B + 10 * d + H
    args = torch_case(seed, device, dtype_for(device), (B, d), (B, H), (B, H), d=d, H=H)
    expect_torch(check, "LSTMCell", args, f"lstm_cell against nn.LSTMCell on {device}", seed)


@pytest.mark.parametrize("zero", ["x", "h", "c", "W_hh", "b_ih", "b_hh"])
def test_lstm_cell_term_isolation(check, zero):
    args = list(torch_case(7, "cpu", torch.float64, (3, 4), (3, 5), (3, 5), d=4, H=5))
    position = CELL_ARGS.index(zero)
    args[position] = torch.zeros_like(args[position])
    expect_torch(check, "LSTMCell", tuple(args), f"lstm_cell with {zero} = 0", 7)


def test_lstm_cell_float32(check):
    args = torch_case(8, "cpu", torch.float32, (3, 4), (3, 5), (3, 5), d=4, H=5)
    expect_torch(check, "LSTMCell", args, "lstm_cell (float32 inputs)", 8)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, T, d, H", [(3, 6, 4, 5), (1, 1, 2, 3), (2, 5, 3, 1), (4, 20, 8, 16)],
                         ids=["B3-T6", "B1-T1", "H1", "B4-T20-H16"])
def test_lstm_layer_vs_nn_lstm(check, device, B, T, d, H):
    seed = 1000 * B + 10 * T + H
    args = torch_case(seed, device, dtype_for(device), (B, T, d), (B, H), (B, H), d=d, H=H)
    expect_torch(check, "LSTM", args, f"lstm_layer against nn.LSTM on {device}", seed)


@pytest.mark.parametrize("zero", ["h0", "c0", "W_hh"])
def test_lstm_layer_term_isolation(check, zero):
    args = list(torch_case(9, "cpu", torch.float64, (3, 5, 4), (3, 5), (3, 5), d=4, H=5))
    position = LAYER_ARGS.index(zero)
    args[position] = torch.zeros_like(args[position])
    expect_torch(check, "LSTM", tuple(args), f"lstm_layer with {zero} = 0", 9)


def test_lstm_layer_float32(check):
    args = torch_case(10, "cpu", torch.float32, (2, 7, 3), (2, 4), (2, 4), d=3, H=4)
    expect_torch(check, "LSTM", args, "lstm_layer (float32 inputs)", 10)


def test_lstm_layer_long_sequence(check):
    args = torch_case(11, "cpu", torch.float64, (2, 100, 3), (2, 6), (2, 6), d=3, H=6)
    expect_torch(check, "LSTM", args, "lstm_layer (T = 100)", 11)


# ------------------------------------------------------------------ to_torch_lstm

def state_summary(m, p):
    """The parts of to_torch_lstm's state dict that are unique: both weights and the bias sum."""
    state = m.to_torch_lstm(p)
    if not isinstance(state, dict):
        return state
    summary = {k: state.get(k) for k in ("weight_ih_l0", "weight_hh_l0")}
    ih, hh = state.get("bias_ih_l0"), state.get("bias_hh_l0")
    same_shape = ih is not None and hh is not None and getattr(ih, "shape", 0) == hh.shape
    summary["bias_ih_l0 + bias_hh_l0"] = ih + hh if same_shape else ih
    return summary


def run_loaded_lstm(m, p, x, a0):
    """Load to_torch_lstm(p) into nn.LSTM(n_x, n_a) and run it on x from (a0, 0); return the
    hidden states in the column layout of lstm_forward, (n_a, m, T_x)."""
    state = m.to_torch_lstm(p)
    layer = nn.LSTM(x.shape[0], a0.shape[0]).double()
    try:
        layer.load_state_dict(state)
    except (RuntimeError, TypeError, KeyError, AttributeError) as exc:
        raise CheckFailure(f"nn.LSTM cannot load the result of to_torch_lstm: "
                           f"{str(exc).splitlines()[0][:200]}") from None
    h0 = torch.tensor(a0.T[None].copy())
    with torch.no_grad():
        out, _ = layer(torch.tensor(x.transpose(2, 1, 0).copy()), (h0, torch.zeros_like(h0)))
    return out.numpy().transpose(2, 1, 0)


@pytest.mark.parametrize("n_x, n_a, m, T_x", [(3, 5, 4, 6), (4, 4, 2, 5), (1, 3, 3, 4),
                                              (5, 1, 2, 7)],
                         ids=["n_x3-n_a5", "square", "n_x1", "n_a1"])
def test_to_torch_lstm_reproduces_lstm_forward(check, reference, rng, n_x, n_a, m, T_x):
    p = make_parameters(rng, n_x, n_a)
    # promote=False: the reference builds torch tensors, which have no longdouble
    check.expect("to_torch_lstm: weights and bias_ih + bias_hh", state_summary, (p,),
                 promote=False)
    x, a0 = rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m))
    check.expect("hidden states of nn.LSTM loaded with to_torch_lstm", run_loaded_lstm,
                 (p, x, a0), oracle=lambda p, x, a0: reference.lstm_forward(x, a0, p)[0],
                 time_axis=2)


# ------------------------------------------------------------------ set_forget_bias

MODULES = [
    pytest.param("LSTMCell", {"input_size": 3, "hidden_size": 4}, id="LSTMCell"),
    pytest.param("LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 3}, id="LSTM-3-layers"),
    pytest.param("LSTM", {"input_size": 5, "hidden_size": 2}, id="LSTM-1-layer"),
]


def forget_bias_view(returned, before: dict, after: dict, H: int) -> dict:
    """What set_forget_bias must get right: the effective forget bias of every layer, every other
    bias entry and every weight, and the return value.

    The forget biases of all layers form one value (rows = layers), so a submission that changes
    only the first layer is told apart from one that changes the wrong block in every layer."""
    other = torch.cat([torch.arange(0, H), torch.arange(2 * H, 4 * H)])
    view: dict = {"returned": returned}
    forget = []
    for name in before:
        if name.startswith("bias_ih"):
            ih, hh = after.get(name), after.get(name.replace("bias_ih", "bias_hh"))
            forget.append(ih[H:2 * H] + hh[H:2 * H] if ih is not None and hh is not None
                          else torch.full((H,), float("nan"), dtype=torch.float64))
    view["forget-gate bias (bias_ih + bias_hh)[H:2H] of every layer"] = torch.stack(forget)
    for name in before:
        value = after.get(name)
        if name.startswith("bias"):
            view[f"{name} outside [H:2H]"] = value[other] if value is not None else None
        else:
            view[name] = value
    return view


@pytest.mark.parametrize("kind, init", MODULES)
@pytest.mark.parametrize("value", [1.0, -0.5])
def test_set_forget_bias(check, kind, init, value):
    torch.manual_seed(21)
    before = {k: v.detach().double().clone()
              for k, v in getattr(nn, kind)(**init).state_dict().items()}
    H = init["hidden_size"]

    def probe(m, kind, init, state, value):
        result = m.helper("set_on_module", "set_forget_bias", kind, init, state, (value,))
        return forget_bias_view(result["returned"], state, result["state"], H)

    def expected(kind, init, state, value):
        after = {k: v.clone() for k, v in state.items()}
        for name in after:
            if name.startswith("bias_ih"):
                after[name][H:2 * H] = value
                after[name.replace("bias_ih", "bias_hh")][H:2 * H] = 0.0
        return forget_bias_view(None, state, after, H)

    check.expect(f"set_forget_bias({value}) on nn.{kind}", probe, (kind, init, before, value),
                 oracle=expected)

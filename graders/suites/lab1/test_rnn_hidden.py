"""Hidden suite for lab1: the RNN forward pass (contract: assignments/lab1/README.md)."""

import numpy as np
import pytest
import torch

from rnngrade.grading.precision import promoted_oracle
from rnngrade.harness.checks.devices import device_params
from rnngrade.harness.checks.tolerance import Tolerance

SIZES = [  # (n_x, n_a, n_y, m, T_x): edge sizes m = 1, T_x = 1, n_a = 1 and a larger one
    pytest.param(3, 5, 2, 10, 4, id="n_x3-n_a5-n_y2-m10-T4"),
    pytest.param(4, 1, 3, 6, 5, id="n_a1"),
    pytest.param(2, 4, 3, 1, 6, id="m1"),
    pytest.param(5, 3, 4, 7, 1, id="T1"),
    pytest.param(8, 16, 10, 32, 12, id="n_x8-n_a16-n_y10-m32-T12"),
]

# The student's float32 on CUDA (TF32 off) against nn.RNN run in float64 (promoted_oracle: cuDNN's
# float32 kernels are themselves ~1e-5 off); a float32 loop of matrix products stays ~1e-6.
CUDA_FLOAT32 = Tolerance(1e-5, 1e-4, "float32 on CUDA (TF32 off) against float64; sums ~1e-6")


def make_parameters(rng, n_x, n_a, n_y, dtype=np.float64):
    p = {
        "Wax": rng.standard_normal((n_a, n_x)),
        "Waa": rng.standard_normal((n_a, n_a)) / np.sqrt(n_a),
        "Wya": rng.standard_normal((n_y, n_a)),
        "ba": rng.standard_normal((n_a, 1)),
        "by": rng.standard_normal((n_y, 1)),
    }
    return {k: v.astype(dtype) for k, v in p.items()}


def cell(m, xt, a_prev, p):
    return m.head("rnn_cell_forward", 2, xt, a_prev, p)  # the cache is not checked here


def sequence(m, x, a0, p):
    return m.head("rnn_forward", 2, x, a0, p)


@pytest.mark.parametrize("shape", [(4, 3), (10, 1), (1, 5), (7, 20)], ids=str)
def test_softmax_random(check, rng, shape):
    x = rng.standard_normal(shape) * 3
    check.expect("softmax(x)", lambda m, x: m.softmax(x), (x,))


@pytest.mark.parametrize("scale", [1000.0, -1000.0, 500.0], ids=lambda s: f"logits{s:+g}")
def test_softmax_extreme_logits(check, rng, scale):
    x = scale + rng.standard_normal((5, 4))
    x[0, :] = scale  # ties at the maximum as well
    check.expect("softmax(x) at large logits", lambda m, x: m.softmax(x), (x,))


def test_softmax_extreme_logits_per_column(check, rng):
    """Stable per column. Columns around +1000, -1000 and 0 in one batch: one maximum for
    the whole batch leaves exp(-2000) = 0 in the low column, and 0/0 = NaN."""
    x = rng.standard_normal((5, 3))
    x[:, 0] += 1000.0
    x[:, 1] -= 1000.0
    check.expect("softmax(x) with columns of very different scales", lambda m, x: m.softmax(x),
                 (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_softmax_dtype(check, rng, dtype):
    x = rng.standard_normal((6, 5)).astype(dtype)
    check.expect("softmax(x)", lambda m, x: m.softmax(x), (x,))


@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_rnn_cell_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    p = make_parameters(rng, n_x, n_a, n_y)
    xt, a_prev = rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m))
    check.expect("rnn_cell_forward", cell, (xt, a_prev, p), names=("a_next", "yt_pred"))


@pytest.mark.parametrize("zero", ["a_prev", "xt", "Wya", "Waa", "ba"])
def test_rnn_cell_forward_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    p = make_parameters(rng, 3, 5, 4)
    xt, a_prev = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    if zero == "a_prev":
        a_prev = np.zeros_like(a_prev)
    elif zero == "xt":
        xt = np.zeros_like(xt)
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"rnn_cell_forward with {zero} = 0", cell, (xt, a_prev, p),
                 names=("a_next", "yt_pred"))


def test_rnn_cell_forward_float32(check, rng):
    p = make_parameters(rng, 4, 6, 3, np.float32)
    xt = rng.standard_normal((4, 5)).astype(np.float32)
    a_prev = rng.standard_normal((6, 5)).astype(np.float32)
    check.expect("rnn_cell_forward (float32 inputs)", cell, (xt, a_prev, p),
                 names=("a_next", "yt_pred"))


@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_rnn_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    p = make_parameters(rng, n_x, n_a, n_y)
    x, a0 = rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m))
    check.expect("rnn_forward", sequence, (x, a0, p), names=("a", "y_pred"), time_axis=2)


@pytest.mark.parametrize("zero", ["a0", "x", "Waa"])
def test_rnn_forward_term_isolation(check, rng, zero):
    p = make_parameters(rng, 3, 4, 2)
    x, a0 = rng.standard_normal((3, 5, 6)), rng.standard_normal((4, 5))
    if zero == "a0":
        a0 = np.zeros_like(a0)
    elif zero == "x":
        x = np.zeros_like(x)
    else:
        p["Waa"] = np.zeros_like(p["Waa"])
    check.expect(f"rnn_forward with {zero} = 0", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


def test_rnn_forward_long_sequence(check, rng):
    p = make_parameters(rng, 5, 8, 4)
    x, a0 = rng.standard_normal((5, 3, 200)), rng.standard_normal((8, 3))
    check.expect("rnn_forward (T_x = 200)", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


def test_rnn_forward_float32(check, rng):
    p = make_parameters(rng, 3, 5, 4, np.float32)
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    a0 = rng.standard_normal((5, 4)).astype(np.float32)
    check.expect("rnn_forward (float32 inputs)", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


def torch_rnn(X, W_h, W_x, b, h0):
    """The expected states from torch.nn.RNN(batch_first=True): bias_ih = b, bias_hh = 0."""
    layer = torch.nn.RNN(W_x.shape[1], W_x.shape[0], batch_first=True)
    layer = layer.to(device=X.device, dtype=X.dtype)
    with torch.no_grad():
        layer.weight_ih_l0.copy_(W_x)
        layer.weight_hh_l0.copy_(W_h)
        layer.bias_ih_l0.copy_(b)
        layer.bias_hh_l0.zero_()
        out, _ = layer(X, h0.unsqueeze(0))
    return out


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, T, d, H", [(4, 6, 3, 5), (1, 1, 2, 3), (8, 30, 10, 16)],
                         ids=["B4-T6", "B1-T1", "B8-T30"])
def test_rnn_forward_batch_vs_torch(check, device, B, T, d, H):
    dtype = torch.float64 if device == "cpu" else torch.float32
    g = torch.Generator().manual_seed(B * 1000 + T)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(device, dtype)

    args = (randn(B, T, d), randn(H, H, scale=H**-0.5), randn(H, d), randn(H), randn(B, H))
    tol = None if device == "cpu" else CUDA_FLOAT32
    check.expect(f"rnn_forward_batch on {device}", lambda m, *a: m.rnn_forward_batch(*a), args,
                 oracle=promoted_oracle(torch_rnn), tol=tol, time_axis=1)


@pytest.mark.parametrize("zero", ["h0", "W_h", "b"])
def test_rnn_forward_batch_term_isolation(check, zero):
    g = torch.Generator().manual_seed(7)
    X, W_h, W_x = (torch.randn(3, 5, 4, generator=g, dtype=torch.float64),
                   torch.randn(6, 6, generator=g, dtype=torch.float64) / 6**0.5,
                   torch.randn(6, 4, generator=g, dtype=torch.float64))
    b, h0 = torch.randn(6, generator=g, dtype=torch.float64), torch.randn(3, 6, generator=g,
                                                                          dtype=torch.float64)
    args = {"h0": h0, "W_h": W_h, "b": b}
    args[zero] = torch.zeros_like(args[zero])
    check.expect(f"rnn_forward_batch with {zero} = 0", lambda m, *a: m.rnn_forward_batch(*a),
                 (X, args["W_h"], W_x, args["b"], args["h0"]), oracle=torch_rnn, time_axis=1)

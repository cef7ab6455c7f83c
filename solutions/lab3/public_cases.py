"""Inputs of the lab 3 public test vectors (outputs are computed by the reference).

``lstm_cell_backward`` and ``lstm_backward`` take a cache that only a forward pass can make, so
their cases are *chains* (docs/AUTHORING.md): a function of the module and plain arguments that
runs the forward pass and feeds its cache to the backward pass; the public tests define the same
chains and run them on the student's module. ``set_forget_bias`` takes a module, so its public test
checks the module it changed directly. The forward functions also return a cache: only their other
outputs are stored (the third element of a case), except in the ``*_forward`` companions of the
backward cases, which keep the classic cache the public tests fall back on.
"""

import numpy as np
import torch


def _params(rng: np.random.Generator, n_x: int, n_a: int, n_y: int, dtype=np.float64) -> dict:
    """Classic LSTM parameters: gate weights (n_a, n_a + n_x), biases (n_a, 1), Wy, by."""
    p = {}
    for gate in ("f", "i", "c", "o"):
        p["W" + gate] = 0.6 * rng.standard_normal((n_a, n_a + n_x))
        p["b" + gate] = 0.3 * rng.standard_normal((n_a, 1))
    p["Wy"] = rng.standard_normal((n_y, n_a))
    p["by"] = 0.3 * rng.standard_normal((n_y, 1))
    return {k: v.astype(dtype) for k, v in p.items()}


def _cell_step(seed: int, n_x: int, n_a: int, n_y: int, m: int, dtype=np.float64) -> tuple:
    rng = np.random.default_rng(seed)
    p = _params(rng, n_x, n_a, n_y, dtype)
    shapes = ((n_x, m), (n_a, m), (n_a, m))
    xt, a_prev, c_prev = (rng.standard_normal(s).astype(dtype) for s in shapes)
    return xt, a_prev, c_prev, p


def _sequence(seed: int, n_x: int, n_a: int, n_y: int, m: int, T_x: int, dtype=np.float64) -> tuple:
    rng = np.random.default_rng(seed)
    p = _params(rng, n_x, n_a, n_y, dtype)
    x = rng.standard_normal((n_x, m, T_x)).astype(dtype)
    a0 = rng.standard_normal((n_a, m)).astype(dtype)
    return x, a0, p


def _torch_weights(rng: np.random.Generator, d: int, H: int, dtype: torch.dtype) -> tuple:
    """W_ih (4H, d), W_hh (4H, H), b_ih (4H,), b_hh (4H,), gate order i, f, g, o."""
    shapes = ((4 * H, d), (4 * H, H), (4 * H,), (4 * H,))
    return tuple(torch.tensor(0.5 * rng.standard_normal(s), dtype=dtype) for s in shapes)


def _torch_cell(seed: int, B: int, d: int, H: int, dtype=torch.float64) -> tuple:
    rng = np.random.default_rng(seed)
    x, h, c = (torch.tensor(rng.standard_normal(s), dtype=dtype) for s in ((B, d), (B, H), (B, H)))
    return (x, h, c, *_torch_weights(rng, d, H, dtype))


def _torch_layer(seed: int, B: int, T: int, d: int, H: int, dtype=torch.float64) -> tuple:
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((B, T, d)), dtype=dtype)
    h0, c0 = (torch.tensor(rng.standard_normal((B, H)), dtype=dtype) for _ in range(2))
    return (x, h0, c0, *_torch_weights(rng, d, H, dtype))


def lstm_cell_backward_of_forward(m, xt, a_prev, c_prev, parameters, da_next, dc_next):
    """``lstm_cell_backward`` on the cache of ``lstm_cell_forward`` (same in the public test)."""
    cache = m.lstm_cell_forward(xt, a_prev, c_prev, parameters)[3]
    return m.lstm_cell_backward(da_next, dc_next, cache)


def lstm_backward_of_forward(m, x, a0, parameters, da):
    """``lstm_backward`` on the caches of ``lstm_forward`` (same in the public test)."""
    return m.lstm_backward(da, m.lstm_forward(x, a0, parameters)[3])


def _cell_backward(seed: int, n_x: int, n_a: int, m: int, dtype=np.float64) -> tuple:
    xt, a_prev, c_prev, p = _cell_step(seed, n_x, n_a, 2, m, dtype)
    rng = np.random.default_rng(seed + 100)
    da_next, dc_next = (rng.standard_normal((n_a, m)).astype(dtype) for _ in range(2))
    return xt, a_prev, c_prev, p, da_next, dc_next


def _backward(seed: int, n_x: int, n_a: int, m: int, T_x: int, dtype=np.float64) -> tuple:
    x, a0, p = _sequence(seed, n_x, n_a, 2, m, T_x, dtype)
    da = np.random.default_rng(seed + 100).standard_normal((n_a, m, T_x)).astype(dtype)
    return x, a0, p, da


CASES: dict[str, tuple] = {
    # lstm_cell_forward → (a_next, c_next, yt_pred); the cache is not stored
    "cell_forward_small": ("lstm_cell_forward", _cell_step(0, n_x=3, n_a=5, n_y=2, m=4), (0, 1, 2)),
    "cell_forward_single_example": (
        "lstm_cell_forward", _cell_step(1, n_x=4, n_a=3, n_y=3, m=1), (0, 1, 2),
    ),
    "cell_forward_float32": (
        "lstm_cell_forward", _cell_step(2, n_x=2, n_a=4, n_y=3, m=3, dtype=np.float32), (0, 1, 2),
    ),
    # lstm_forward → (a, y, c)
    "forward_small": ("lstm_forward", _sequence(3, n_x=3, n_a=5, n_y=2, m=4, T_x=5), (0, 1, 2)),
    "forward_longer": ("lstm_forward", _sequence(4, n_x=2, n_a=3, n_y=4, m=2, T_x=9), (0, 1, 2)),
    "forward_float32": (
        "lstm_forward", _sequence(5, n_x=3, n_a=4, n_y=2, m=3, T_x=6, dtype=np.float32), (0, 1, 2),
    ),
    # lstm_cell_backward after lstm_cell_forward; n_x != n_a, so a wrong split of dconcat shows
    "cell_backward_small": (lstm_cell_backward_of_forward, _cell_backward(13, n_x=3, n_a=5, m=4)),
    "cell_backward_float32": (
        lstm_cell_backward_of_forward, _cell_backward(14, n_x=2, n_a=3, m=2, dtype=np.float32),
    ),
    # lstm_backward after lstm_forward; T_x = 6, so both gradients carried through time matter
    "backward_small": (lstm_backward_of_forward, _backward(15, n_x=3, n_a=4, m=3, T_x=6)),
    "backward_float32": (
        lstm_backward_of_forward, _backward(16, n_x=2, n_a=3, m=2, T_x=5, dtype=np.float32),
    ),
    # the forward passes on the backward cases' inputs, caches included: a public backward test
    # feeds the backward pass these classic caches when the student's forward pass is wrong
    "cell_backward_small_forward": ("lstm_cell_forward", _cell_backward(13, n_x=3, n_a=5, m=4)[:4]),
    "cell_backward_float32_forward": (
        "lstm_cell_forward", _cell_backward(14, n_x=2, n_a=3, m=2, dtype=np.float32)[:4],
    ),
    "backward_small_forward": ("lstm_forward", _backward(15, n_x=3, n_a=4, m=3, T_x=6)[:3]),
    "backward_float32_forward": (
        "lstm_forward", _backward(16, n_x=2, n_a=3, m=2, T_x=5, dtype=np.float32)[:3],
    ),
    # lstm_cell (PyTorch layout)
    "lstm_cell_small": ("lstm_cell", _torch_cell(6, B=3, d=4, H=5)),
    "lstm_cell_float32": ("lstm_cell", _torch_cell(7, B=2, d=3, H=6, dtype=torch.float32)),
    # lstm_layer (batch-first)
    "lstm_layer_small": ("lstm_layer", _torch_layer(8, B=3, T=5, d=4, H=5)),
    "lstm_layer_longer": ("lstm_layer", _torch_layer(9, B=2, T=10, d=3, H=4)),
    "lstm_layer_float32": ("lstm_layer", _torch_layer(10, B=4, T=6, d=2, H=3, dtype=torch.float32)),
    # to_torch_lstm (n_x != n_a, so a mix-up of the two weight blocks changes shapes or values)
    "to_torch_small": ("to_torch_lstm", (_params(np.random.default_rng(11), 3, 5, 2),)),
    "to_torch_square": ("to_torch_lstm", (_params(np.random.default_rng(12), 4, 4, 3),)),
}

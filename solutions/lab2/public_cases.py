"""Inputs of the lab 2 public test vectors (outputs are computed by the reference).

``rnn_cell_backward`` and ``rnn_backward`` take a cache that only a forward pass can make, so their
cases are *chains* (docs/AUTHORING.md): a function of the module and plain arguments that runs the
forward pass and feeds its cache to the backward pass. The public tests define the same chains and
run them on the student's module. ``numerical_gradient`` takes a function, so its public test
checks it on functions with known derivatives instead of stored vectors.
"""

import numpy as np


def _grads(seed: int, scale: float, dtype=np.float64) -> dict:
    """A gradient dict with the classic keys of the character model."""
    rng = np.random.default_rng(seed)
    shapes = {"dWaa": (5, 5), "dWax": (5, 3), "dWya": (2, 5), "db": (5, 1), "dby": (2, 1)}
    return {k: (scale * rng.standard_normal(s)).astype(dtype) for k, s in shapes.items()}


def _pair(seed: int, shape: tuple, noise: float, zeros: bool = False) -> tuple:
    """Two arrays that agree up to a relative perturbation ``noise``."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    b = a * (1 + noise * rng.standard_normal(shape))
    if zeros:  # entries that are zero in both, like the gradient of an unused parameter
        a[0] = 0.0
        b[0] = 0.0
    return a, b


def _char_rnn(seed: int, B: int, T: int, V: int, H: int, dtype=np.float64) -> tuple:
    rng = np.random.default_rng(seed)
    p = {
        "W_xh": 0.5 * rng.standard_normal((H, V)),
        "W_hh": 0.5 * rng.standard_normal((H, H)),
        "b_h": 0.1 * rng.standard_normal(H),
        "W_hy": 0.5 * rng.standard_normal((V, H)),
        "b_y": 0.1 * rng.standard_normal(V),
    }
    p = {k: v.astype(dtype) for k, v in p.items()}
    text = rng.integers(0, V, size=(B, T + 1))
    h0 = (0.5 * rng.standard_normal((H, B))).astype(dtype)
    return p, text[:, :-1], text[:, 1:], h0


def rnn_cell_backward_of_forward(m, xt, a_prev, parameters, da_next):
    """``rnn_cell_backward`` on the cache of ``rnn_cell_forward`` (same in the public test)."""
    return m.rnn_cell_backward(da_next, m.rnn_cell_forward(xt, a_prev, parameters)[2])


def rnn_backward_of_forward(m, x, a0, parameters, da):
    """``rnn_backward`` on the caches of ``rnn_forward`` (same in the public test)."""
    return m.rnn_backward(da, m.rnn_forward(x, a0, parameters)[2])


def _rnn_parameters(rng: np.random.Generator, n_x: int, n_a: int, n_y: int, dtype=np.float64):
    shapes = {"Wax": (n_a, n_x), "Waa": (n_a, n_a), "Wya": (n_y, n_a), "ba": (n_a, 1),
              "by": (n_y, 1)}
    return {k: (0.7 * rng.standard_normal(s)).astype(dtype) for k, s in shapes.items()}


def _cell_backward(seed: int, n_x: int, n_a: int, m: int, dtype=np.float64) -> tuple:
    rng = np.random.default_rng(seed)
    p = _rnn_parameters(rng, n_x, n_a, 2, dtype)
    xt, a_prev, da_next = (rng.standard_normal(s).astype(dtype)
                           for s in ((n_x, m), (n_a, m), (n_a, m)))
    return xt, a_prev, p, da_next


def _backward(seed: int, n_x: int, n_a: int, m: int, T_x: int, dtype=np.float64) -> tuple:
    rng = np.random.default_rng(seed)
    p = _rnn_parameters(rng, n_x, n_a, 2, dtype)
    x, a0, da = (rng.standard_normal(s).astype(dtype)
                 for s in ((n_x, m, T_x), (n_a, m), (n_a, m, T_x)))
    return x, a0, p, da


CASES: dict[str, tuple] = {
    # rnn_cell_backward after rnn_cell_forward; n_x, n_a and m all differ, so a transposed
    # product shows up as a shape error
    "cell_backward_small": (rnn_cell_backward_of_forward, _cell_backward(10, n_x=3, n_a=5, m=4)),
    "cell_backward_float32": (
        rnn_cell_backward_of_forward, _cell_backward(11, n_x=4, n_a=3, m=2, dtype=np.float32),
    ),
    # rnn_backward after rnn_forward; T_x = 6, so the gradient flowing back through time matters
    "backward_small": (rnn_backward_of_forward, _backward(12, n_x=3, n_a=5, m=4, T_x=6)),
    "backward_float32": (
        rnn_backward_of_forward, _backward(13, n_x=2, n_a=4, m=3, T_x=5, dtype=np.float32),
    ),
    # clip: some entries above, some below, some inside the interval
    "clip_classic_keys": ("clip", (_grads(0, 5.0), 3.0)),
    "clip_any_keys": (
        "clip",
        ({"W": np.linspace(-4.0, 4.0, 12).reshape(3, 4), "bias": np.array([0.5, -7.0, 7.0])}, 2.0),
    ),
    "clip_float32": ("clip", (_grads(1, 10.0, np.float32), 1.0)),
    # clip_by_global_norm: above the threshold, below it, float32
    "global_norm_clipped": ("clip_by_global_norm", (_grads(2, 3.0), 5.0)),
    "global_norm_unchanged": ("clip_by_global_norm", (_grads(3, 0.1), 5.0)),
    "global_norm_float32": ("clip_by_global_norm", (_grads(4, 2.0, np.float32), 1.0)),
    # relative_error: close arrays, arrays sharing exact zeros, all zeros
    "relative_error_close": ("relative_error", _pair(5, (4, 3), 1e-6)),
    "relative_error_with_zeros": ("relative_error", _pair(6, (3, 5), 1e-3, zeros=True)),
    "relative_error_all_zero": ("relative_error", (np.zeros((2, 3)), np.zeros((2, 3)))),
    # char_rnn_loss_and_grads: B > V in the first case, so streams share characters at every step
    "char_rnn_small": ("char_rnn_loss_and_grads", _char_rnn(7, B=5, T=4, V=4, H=6)),
    "char_rnn_longer": ("char_rnn_loss_and_grads", _char_rnn(8, B=3, T=8, V=7, H=5)),
    "char_rnn_float32": (
        "char_rnn_loss_and_grads", _char_rnn(9, B=4, T=5, V=6, H=8, dtype=np.float32),
    ),
}

"""Inputs of lab4's public test vectors (the generator computes the outputs with the reference).

gru_cell_backward takes a cache, which is the submission's own business, so its vectors are stored
for a chain: ``gru_cell_backward_of_forward`` runs a module's own gru_cell_forward and feeds the
cache to its gru_cell_backward. The public test runs the same chain on the submission.
"""

from __future__ import annotations

import numpy as np
import torch


def _classic_parameters(
    rng: np.random.Generator, n_a: int, n_x: int, dtype=np.float64, hidden_candidate: bool = True
) -> dict[str, np.ndarray]:
    """Classic GRU parameters (n_a, n_a + n_x) / (n_a, 1); Wc's hidden block zero if asked."""
    params = {}
    for gate in ("u", "r", "c"):
        params[f"W{gate}"] = (0.5 * rng.standard_normal((n_a, n_a + n_x))).astype(dtype)
        params[f"b{gate}"] = (0.1 * rng.standard_normal((n_a, 1))).astype(dtype)
    if not hidden_candidate:
        params["Wc"][:, :n_a] = 0.0
    return params


def _torch_weights(
    rng: np.random.Generator, d: int, H: int, dtype=np.float64
) -> tuple[torch.Tensor, ...]:
    """W_ih (3H, d), W_hh (3H, H), b_ih, b_hh (3H,) as torch tensors, gate order r, z, n."""
    scale = 1.0 / np.sqrt(H)
    shapes = ((3 * H, d), (3 * H, H), (3 * H,), (3 * H,))
    return tuple(torch.from_numpy(rng.uniform(-scale, scale, s).astype(dtype)) for s in shapes)


def _tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float64) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape).astype(dtype))


def gru_cell_backward_of_forward(m, xt, a_prev, parameters, da_next):
    """The gradients of Σ da_next⊙a_next for one step, through the module's own cache."""
    _, cache = m.gru_cell_forward(xt, a_prev, parameters)
    return m.gru_cell_backward(da_next, cache)


def _cases() -> dict[str, tuple]:
    rng = np.random.default_rng(404)
    cases: dict[str, tuple] = {}

    # gru_cell_forward(xt, a_prev, parameters) -> (a_next, cache): store a_next only
    for name, (n_x, n_a, m, dtype) in {
        "gru_cell_forward_small": (3, 5, 4, np.float64),
        "gru_cell_forward_wide_input": (6, 2, 3, np.float64),
        "gru_cell_forward_float32": (3, 4, 2, np.float32),
    }.items():
        xt = rng.standard_normal((n_x, m)).astype(dtype)
        a_prev = rng.standard_normal((n_a, m)).astype(dtype)
        cases[name] = (
            "gru_cell_forward",
            (xt, a_prev, _classic_parameters(rng, n_a, n_x, dtype)),
            (0,),
        )

    # gru_cell_backward(da_next, cache) through the module's own forward -> dict of gradients
    for name, (n_x, n_a, m, dtype) in {
        "gru_cell_backward_small": (3, 4, 5, np.float64),
        "gru_cell_backward_float32": (2, 3, 4, np.float32),
    }.items():
        xt = rng.standard_normal((n_x, m)).astype(dtype)
        a_prev = rng.standard_normal((n_a, m)).astype(dtype)
        params = _classic_parameters(rng, n_a, n_x, dtype)
        da_next = rng.standard_normal((n_a, m)).astype(dtype)
        cases[name] = (gru_cell_backward_of_forward, (xt, a_prev, params, da_next))

    # gru_cell(x, h, W_ih, W_hh, b_ih, b_hh) -> h_new
    for name, (B, d, H, dtype) in {
        "gru_cell_small": (3, 4, 5, np.float64),
        "gru_cell_single_example": (1, 2, 3, np.float64),
        "gru_cell_float32": (4, 3, 2, np.float32),
    }.items():
        x = _tensor(rng, (B, d), dtype)
        h = _tensor(rng, (B, H), dtype)
        cases[name] = ("gru_cell", (x, h, *_torch_weights(rng, d, H, dtype)))

    # gru_layer(x, h0, W_ih, W_hh, b_ih, b_hh, lengths=None) -> (out, h_n)
    B, T, d, H = 3, 5, 4, 3
    x = _tensor(rng, (B, T, d))
    h0 = _tensor(rng, (B, H))
    cases["gru_layer_full_length"] = ("gru_layer", (x, h0, *_torch_weights(rng, d, H)))
    B, T, d, H = 4, 6, 3, 4
    x = _tensor(rng, (B, T, d))
    h0 = _tensor(rng, (B, H))
    lengths = torch.tensor([6, 2, 4, 1], dtype=torch.int64)  # unsorted, one full, one of length 1
    cases["gru_layer_with_lengths"] = ("gru_layer", (x, h0, *_torch_weights(rng, d, H), lengths))
    B, T, d, H = 2, 4, 2, 3
    x = _tensor(rng, (B, T, d), np.float32)
    h0 = _tensor(rng, (B, H), np.float32)
    lengths = torch.tensor([3, 4], dtype=torch.int64)
    cases["gru_layer_lengths_float32"] = (
        "gru_layer",
        (x, h0, *_torch_weights(rng, d, H, np.float32), lengths),
    )

    # classic_to_torch_gru(parameters) -> state dict; only convertible parameters (Wc's hidden
    # block zero) have stored vectors: the ValueError case is a test of its own
    cases["classic_to_torch_gru_small"] = (
        "classic_to_torch_gru",
        (_classic_parameters(rng, 3, 2, hidden_candidate=False),),
    )
    cases["classic_to_torch_gru_wide_input"] = (
        "classic_to_torch_gru",
        (_classic_parameters(rng, 2, 5, hidden_candidate=False),),
    )
    return cases


CASES: dict[str, tuple] = _cases()

"""Inputs of lab5's public test vectors (the generator computes the outputs with the reference)."""

from __future__ import annotations

import numpy as np
import torch


def _tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float64) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape).astype(dtype))


def _mask(lengths: list[int], S: int) -> torch.Tensor:
    """bool (B, S), True on the first lengths[b] positions of row b."""
    return torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]


def _cases() -> dict[str, tuple]:
    rng = np.random.default_rng(505)
    cases: dict[str, tuple] = {}

    # masked_softmax(scores, mask) -> weights
    cases["masked_softmax_padding"] = (
        "masked_softmax",
        (_tensor(rng, (3, 5)), _mask([5, 3, 1], 5)),
    )
    scattered = torch.tensor([[True, False, True, False], [False, False, False, False]])
    cases["masked_softmax_empty_row"] = ("masked_softmax", (_tensor(rng, (2, 4)), scattered))
    cases["masked_softmax_float32"] = (
        "masked_softmax",
        (_tensor(rng, (2, 6), np.float32), _mask([4, 6], 6)),
    )

    # additive_attention(s, H, W_a, U_a, v_a, mask) -> (context, alpha)
    for name, (B, S, Hd, He, da, lengths) in {
        "additive_attention_small": (2, 5, 3, 4, 6, [5, 3]),
        "additive_attention_single": (1, 4, 2, 2, 3, [2]),
    }.items():
        args = (
            _tensor(rng, (B, Hd)),
            _tensor(rng, (B, S, He)),
            _tensor(rng, (da, Hd)),
            _tensor(rng, (da, He)),
            _tensor(rng, (da,)),
            _mask(lengths, S),
        )
        cases[name] = ("additive_attention", args)

    # dot_attention(s, H, mask) -> (context, alpha)
    for name, (B, S, Hd, lengths) in {
        "dot_attention_small": (3, 4, 3, [4, 2, 3]),
        "dot_attention_single": (1, 6, 2, [5]),
    }.items():
        args = (_tensor(rng, (B, Hd)), _tensor(rng, (B, S, Hd)), _mask(lengths, S))
        cases[name] = ("dot_attention", args)

    # general_attention(s, H, W, mask) -> (context, alpha)
    for name, (B, S, Hd, He, lengths) in {
        "general_attention_small": (2, 5, 3, 4, [2, 5]),
        "general_attention_square": (2, 3, 3, 3, [3, 1]),
    }.items():
        args = (
            _tensor(rng, (B, Hd)),
            _tensor(rng, (B, S, He)),
            _tensor(rng, (Hd, He)),
            _mask(lengths, S),
        )
        cases[name] = ("general_attention", args)

    # scaled_dot_product_attention(Q, K, V, mask=None, causal=False) -> (out, weights)
    B, T, dk, dv = 2, 5, 4, 3
    Q, K, V = _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dv))
    cases["sdpa_plain"] = ("scaled_dot_product_attention", (Q, K, V))
    B, Tq, Tk = 2, 3, 6
    Q, K, V = _tensor(rng, (B, Tq, dk)), _tensor(rng, (B, Tk, dk)), _tensor(rng, (B, Tk, dv))
    cases["sdpa_cross_with_mask"] = (
        "scaled_dot_product_attention",
        (Q, K, V, _mask([6, 4], Tk)),
    )
    B, T = 2, 5
    Q, K, V = _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dv))
    cases["sdpa_causal"] = (
        "scaled_dot_product_attention",
        (Q, K, V, _mask([5, 5], T), True),
    )
    Q, K, V = (_tensor(rng, (B, T, d), np.float32) for d in (dk, dk, dv))
    cases["sdpa_causal_padded_float32"] = (
        "scaled_dot_product_attention",
        (Q, K, V, _mask([5, 3], T), True),
    )

    # causal_linear_attention(Q, K, V, eps=1e-6) -> out
    B, T, dk, dv = 2, 6, 3, 4
    Q, K, V = _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dk)), _tensor(rng, (B, T, dv))
    cases["linear_attention_small"] = ("causal_linear_attention", (Q, K, V))
    Q, K, V = (_tensor(rng, (1, 4, d)) for d in (2, 2, 2))
    cases["linear_attention_eps"] = ("causal_linear_attention", (Q, K, V, 0.5))
    Q, K, V = (_tensor(rng, (2, 5, d), np.float32) for d in (3, 3, 2))
    cases["linear_attention_float32"] = ("causal_linear_attention", (Q, K, V))
    return cases


CASES: dict[str, tuple] = _cases()

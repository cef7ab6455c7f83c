"""Inputs of lab1's public test vectors (outputs are computed by the reference)."""

import numpy as np
import torch


def _parameters(rng, n_x, n_a, n_y):
    return {
        "Wax": rng.standard_normal((n_a, n_x)),
        "Waa": rng.standard_normal((n_a, n_a)),
        "Wya": rng.standard_normal((n_y, n_a)),
        "ba": rng.standard_normal((n_a, 1)),
        "by": rng.standard_normal((n_y, 1)),
    }


_rng = np.random.default_rng(1)
_g = torch.Generator().manual_seed(1)

CASES = {
    "softmax_small": ("softmax", (_rng.standard_normal((4, 3)),)),
    "softmax_large_logits": ("softmax", (np.array([[1000.0, -1000.0], [999.0, -998.0],
                                                   [0.0, -1000.0]]),)),
    "cell_small": ("rnn_cell_forward", (_rng.standard_normal((3, 10)), _rng.standard_normal((5, 10)),
                                        _parameters(_rng, 3, 5, 2)), (0, 1)),
    "forward_small": ("rnn_forward", (_rng.standard_normal((3, 10, 4)), _rng.standard_normal((5, 10)),
                                      _parameters(_rng, 3, 5, 2)), (0, 1)),
    "batch_small": ("rnn_forward_batch", (
        torch.randn(2, 5, 3, generator=_g, dtype=torch.float64),
        torch.randn(4, 4, generator=_g, dtype=torch.float64) / 2,
        torch.randn(4, 3, generator=_g, dtype=torch.float64),
        torch.randn(4, generator=_g, dtype=torch.float64),
        torch.randn(2, 4, generator=_g, dtype=torch.float64),
    )),
}

"""Inputs of the example lab's public test vectors (outputs are computed by the reference)."""

import numpy as np

_rng = np.random.default_rng(1)

CASES = {
    "smoothing_factor_3": ("smoothing_factor", (3.0,)),
    "ema_small": ("ema", (_rng.standard_normal((2, 6)), 0.25)),
}

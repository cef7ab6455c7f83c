"""Hidden suite of the example lab: an exponential moving average (contract:
assignments/lab99/README.md and the reference's docstrings)."""

import numpy as np
import pytest


@pytest.mark.parametrize("half_life", [1.0, 2.5, 40.0], ids=lambda h: f"half_life{h:g}")
def test_smoothing_factor_values(check, half_life):
    check.expect("smoothing_factor(half_life)", lambda m, h: m.smoothing_factor(h), (half_life,))


@pytest.mark.parametrize("shape, alpha", [((1,), 0.5), ((9,), 0.2), ((3, 25), 0.7)], ids=str)
def test_ema_random(check, rng, shape, alpha):
    x = rng.standard_normal(shape)
    check.expect("ema(x, alpha)", lambda m, x, a: m.ema(x, a), (x, alpha))


def test_ema_constant_series(check):
    """Any average of a constant series is that constant, whatever alpha."""
    x = np.full((2, 12), 3.0)
    check.expect("ema(x, 0.1) of a constant x", lambda m, x: m.ema(x, 0.1), (x,))

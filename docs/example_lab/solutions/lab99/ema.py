"""Example lab — an exponential moving average, the smallest recurrence.

A series is an array whose last axis is time: ``x[..., t]`` is step t, and the leading axes (if
any) hold independent series."""

import numpy as np


def smoothing_factor(half_life):
    """The factor ``alpha`` of an average whose weights halve every ``half_life`` steps:
    ``(1 - alpha) ** half_life == 1 / 2``.

    half_life: a positive float. Returns a float in (0, 1)."""
    # BEGIN SOLUTION
    return 1.0 - 0.5 ** (1.0 / half_life)
    # END SOLUTION


def ema(x, alpha):
    """The exponential moving average of ``x`` along its last axis:
    ``s[..., 0] = x[..., 0]`` and ``s[..., t] = alpha * x[..., t] + (1 - alpha) * s[..., t - 1]``.

    x: a float array (..., T), T >= 1; alpha: a float in (0, 1]. Returns a new array of x's shape
    and dtype; x is left unchanged."""
    # BEGIN SOLUTION
    s = np.empty_like(x)
    s[..., 0] = x[..., 0]
    for t in range(1, x.shape[-1]):
        s[..., t] = alpha * x[..., t] + (1 - alpha) * s[..., t - 1]
    return s
    # END SOLUTION

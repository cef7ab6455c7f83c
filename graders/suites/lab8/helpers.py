"""Lab 8 helpers, run beside the student's code (and beside the reference's): one-step models
for ``recursive_forecast`` (see ``rnngrade.harness.worker_helpers`` for the rules).

``recursive_forecast`` takes a function from windows ``(n, W)`` to next values ``(n,)``; these
factories build such functions from plain data, so the same model exists on both sides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rnngrade.harness.worker_helpers import function


@function
def linear_one_step(coef: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The lab's linear autoregression as a one-step model: ``coef`` of shape ``(W + 1, 1)``."""
    c = np.asarray(coef, dtype=np.float64)

    def one_step(windows: np.ndarray) -> np.ndarray:
        w = np.asarray(windows, dtype=np.float64)
        last = w[:, -1:]
        return (last + np.hstack([w - last, np.ones((len(w), 1))]) @ c)[:, 0]

    return one_step


@function
def tanh_one_step(weights: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A nonlinear one-step model, ``tanh(windows @ weights)``, whose every input position
    matters with its own weight (so a window slid the wrong way gives other values)."""
    w = np.asarray(weights, dtype=np.float64)
    return lambda windows: np.tanh(np.asarray(windows, dtype=np.float64) @ w)

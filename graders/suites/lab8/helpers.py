"""Lab 8 helpers, run beside the student's code (and beside the reference's): one-step models
for ``recursive_forecast``, and autograd through Part B's forecaster (see
``rnngrade.suite.worker`` for the rules).

``recursive_forecast`` takes a function from windows ``(n, W)`` to next values ``(n,)``; these
factories build such functions from plain data, so the same model exists on both sides. torch is
imported inside the Part B helper only: grading Part A never loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rnngrade.suite.worker import function, helper

GENERATOR_STATE = 20_260_808  # torch's generator before a Part B call: fixed, not the call's seed


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


@helper
def forecaster_gradients(module: Any, params: Mapping[str, Any], X: Any, per_window: bool,
                         upstream: Any) -> dict:
    """``lstm_forecaster_forward(params, X, per_window)`` and the gradients of
    ``Σ upstream ⊙ forecast`` with respect to ``X`` (``"dX"``) and every parameter
    (``"d" + key``); a gradient that cannot be formed (no graph, wrong shape) is all zeros."""
    import torch

    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    x = X.detach().clone().requires_grad_(True)
    torch.manual_seed(GENERATOR_STATE)  # a forward pass that draws (dropout left on) draws alike
    # cuDNN has no backward for an LSTM in eval mode, which the contract asks for: on CUDA the
    # forward and backward run on PyTorch's own kernels.
    cudnn = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = False
    try:
        forecast = module.lstm_forecaster_forward(leaves, x, per_window)
        if isinstance(forecast, torch.Tensor) and forecast.requires_grad \
                and forecast.shape == upstream.shape:
            (forecast * upstream.to(forecast.dtype)).sum().backward()
    finally:
        torch.backends.cudnn.enabled = cudnn
    result = {"forecast": forecast.detach() if isinstance(forecast, torch.Tensor) else forecast}
    for name, leaf in (("X", x), *leaves.items()):
        result[f"d{name}"] = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
    return result


@helper
def train_from_known_state(module: Any, params: Mapping[str, Any], X: Any, Y: Any, epochs: int,
                           seed: int) -> tuple:
    """``train_forecaster(params, X, Y, epochs, seed)`` with torch's generator in the same
    state on both sides beforehand (not the one ``seed`` gives): a loop that forgets to seed
    draws the same batches wherever it runs, so its mistake can be named."""
    import torch

    torch.manual_seed(GENERATOR_STATE)
    return module.train_forecaster(params, X, Y, epochs, seed)

"""Promoting inputs one precision up, so expected values are computed more accurately than the
student's result and the reference's own error can be measured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import expected_dtype_of

_NUMPY_UP = {
    np.dtype(np.float16): np.float64,
    np.dtype(np.float32): np.float64,
    np.dtype(np.float64): np.longdouble,
    np.dtype(np.complex64): np.complex128,
    np.dtype(np.complex128): np.clongdouble,
}


def promote(value: Any) -> Any:
    """A copy of ``value`` with every float/complex array or tensor one precision up
    (NumPy float64 → longdouble; torch has nothing above float64 and keeps it)."""
    if isinstance(value, dict):
        return {k: promote(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(promote(v) for v in value)
    if isinstance(value, np.ndarray):
        target = _NUMPY_UP.get(value.dtype)
        return value.astype(target) if target is not None else value
    if type(value).__module__.startswith("torch") and hasattr(value, "dtype"):
        import torch

        up = {torch.float16: torch.float64, torch.bfloat16: torch.float64,
              torch.float32: torch.float64, torch.complex64: torch.complex128}.get(value.dtype)
        if up is None:
            return value
        promoted = value.detach().to(up)
        return promoted.requires_grad_(value.requires_grad) if value.is_leaf else promoted
    return value


def promoted_oracle(oracle: Callable[..., Any]) -> Callable[..., Any]:
    """``oracle`` (an independent implementation such as ``torch.nn.LSTM``) run on ``promote``d
    inputs, its float tensors cast back to the least precise float dtype of the inputs.

    cuDNN's float32 RNN kernels are ~1e-5 from float64 on O(1) values (measured on an H200),
    as far as a float32 tolerance allows: run in float64, the oracle's own rounding no longer
    counts against the student's result. Inputs already in float64 are left as they are."""

    def run(*args: Any) -> Any:
        want = expected_dtype_of(*args)
        result = oracle(*promote(args))
        return result if want is None else _cast_tensors(result, want)

    return run


def _cast_tensors(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, dict):
        return {k: _cast_tensors(v, dtype) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_cast_tensors(v, dtype) for v in value)
    if type(value).__module__.startswith("torch") and hasattr(value, "dtype"):
        import torch

        target = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16,
                  np.dtype(np.complex64): torch.complex64}.get(dtype)
        if target is not None and (value.is_floating_point() or value.is_complex()) \
                and value.is_complex() == (dtype.kind == "c"):
            return value.detach().to(target)
    return value

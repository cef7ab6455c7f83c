"""Promoting inputs one precision up, so expected values are computed more accurately than the
student's result and the reference's own error can be measured."""

from __future__ import annotations

from typing import Any

import numpy as np

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

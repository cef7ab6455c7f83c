"""Tolerances, each with the reason it has the size it has."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """|actual − expected| ≤ atol + rtol·|expected|, elementwise, as in ``numpy.allclose``."""

    atol: float
    rtol: float
    reason: str

    def allowed(self, expected: np.ndarray) -> np.ndarray:
        return self.atol + self.rtol * np.abs(expected)

    def scaled(self, factor: float, reason: str) -> Tolerance:
        return Tolerance(self.atol * factor, self.rtol * factor, reason)

    def __str__(self) -> str:
        return f"atol={self.atol:.0e}, rtol={self.rtol:.0e} ({self.reason})"


# float64 arithmetic: a few hundred roundings of 1.1e-16 each stay far below 1e-12 on O(1) values;
# 1e-10 leaves room for a different (correct) summation order on long sequences.
FLOAT64 = Tolerance(1e-10, 1e-8, "float64: a correct computation differs only by rounding, ~1e-15")
# float32: one rounding is 6e-8; sums over tens of terms and tanh/exp chains stay below 1e-5.
FLOAT32 = Tolerance(1e-5, 1e-4, "float32: roundings of 6e-8 accumulate over dot products")
EXACT = Tolerance(0.0, 0.0, "must be exact: integer or bit-exact result")


def tolerance_for(*values: object) -> Tolerance:
    """The tolerance for results computed from these inputs: FLOAT32 if any floating input
    (array, tensor, or inside a dict/list/tuple) is single precision or lower, else FLOAT64."""
    for dtype in array_dtypes(values):
        if dtype.kind in "fc" and dtype.itemsize <= (4 if dtype.kind == "f" else 8):
            return FLOAT32
    return FLOAT64


def numpy_dtype(value: object) -> np.dtype | None:
    """The NumPy dtype of an array or torch tensor (bfloat16 counts as float16); else None."""
    if isinstance(value, np.ndarray):
        return value.dtype
    if type(value).__module__.startswith("torch") and hasattr(value, "dtype"):
        name = str(value.dtype).removeprefix("torch.")
        return np.dtype("float16" if name == "bfloat16" else name)
    return None


def array_dtypes(value: object, found: list[np.dtype] | None = None) -> list[np.dtype]:
    """The dtype of every array or tensor inside ``value`` (through dicts, lists and tuples),
    in order."""
    found = [] if found is None else found
    if isinstance(value, dict):
        for item in value.values():
            array_dtypes(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            array_dtypes(item, found)
    else:
        dtype = numpy_dtype(value)
        if dtype is not None:
            found.append(dtype)
    return found

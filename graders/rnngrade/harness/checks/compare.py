"""Comparing a student's value with the expected one, and saying what differs, where, how much.

Messages follow ``numpy.testing``: the check's name, shapes and dtypes, how many entries are off,
the size and place of the largest error and the tolerance with its reason. Hidden checks never
print expected values (``reveal=False``); public checks, whose vectors the student has anyway, do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rnngrade.harness.checks.tolerance import Tolerance, array_dtypes
from rnngrade.harness.formatting import format_magnitude

UNFINISHED = "returns None — looks unfinished (is there still a `None` placeholder?)"


@dataclass
class Comparison:
    """The outcome of comparing one value with its expected value."""

    name: str
    tolerance: Tolerance
    ok: bool = True
    problem: str = ""  # "", "type", "none", "shape", "dtype", "device", "nonfinite", "values"
    detail: str = ""
    shape: tuple[int, ...] | None = None
    expected_shape: tuple[int, ...] | None = None
    dtype: str = ""
    expected_dtype: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    worst_index: tuple[int, ...] = ()
    n_bad: int = 0
    n_total: int = 0
    ratio: float = 0.0  # max |a−e| / (atol + rtol·|e|); the check passes when ratio ≤ 1
    revealed: str = ""  # got/expected at the worst index, only for public checks

    def message(self) -> str:
        if self.ok:
            return f"{self.name}: ok"
        if self.problem != "values":
            return f"{self.name}: {self.detail}"
        share = 100.0 * self.n_bad / max(self.n_total, 1)
        where = _index(self.worst_index)
        lines = [
            f"{self.name}: values differ beyond tolerance",
            f"  shape {self.shape}, dtype {self.dtype}",
            f"  {self.n_bad} of {self.n_total} entries ({share:.1f}%) are off; "
            f"tolerance {self.tolerance}",
            f"  largest error {format_magnitude(self.max_abs_error)} at {where}"
            + (f" (relative {format_magnitude(self.max_rel_error)})"
               if self.max_rel_error > 0 else ""),
        ]
        if self.revealed:
            lines.append(f"  at {where}: {self.revealed}")
        return "\n".join(lines)


class CheckFailure(AssertionError):
    """A check failed. Carries the comparisons and, in the grader, the diagnoses (Diagnosis
    objects of rnngrade.results.model; in the public harness, lines of text) and a hint."""

    def __init__(self, message: str, comparisons: list[Comparison] | None = None,
                 diagnosis: list[Any] | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.comparisons = comparisons or []
        self.diagnosis = diagnosis or []
        self.hint = hint
        # (got, want, tolerance, name, names) of a failed public check: what the public harness
        # needs to name a known mistake (rnngrade.harness.checks.mistakes)
        self.observed: tuple | None = None

    def __str__(self) -> str:
        parts = [self.message]
        parts += [f"diagnosis: {d}" for d in self.diagnosis]
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def _index(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]" if index else "[]"


def to_numpy(value: object) -> np.ndarray | None:
    """An array or tensor (any device) as a NumPy array, a number as a 0-d array; else None."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic | int | float | complex) and not isinstance(value, bool):
        return np.asarray(value)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        tensor = value.detach()
        if str(tensor.dtype) == "torch.bfloat16":
            tensor = tensor.float()
        if tensor.device.type == "meta":
            return None
        return tensor.cpu().numpy()
    return None


def _is_tensor(value: object) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def compare(actual: object, expected: object, tol: Tolerance, name: str, *,
            dtype: np.dtype | str | None = None, reveal: bool = False) -> Comparison:
    """Compare ``actual`` with ``expected`` (arrays, tensors or numbers).

    dtype: the precision the result must have at least (float64 inputs ⇒ a float64 result).
        None checks only the kind (float, complex, int, bool).
    reveal: include got/expected values at the worst index (public checks only).
    """
    result = Comparison(name=name, tolerance=tol)
    expected_array = to_numpy(expected)
    if expected_array is None:
        raise TypeError(f"{name}: expected value of type {type(expected).__name__} is not an array")
    result.expected_shape = tuple(expected_array.shape)
    result.expected_dtype = dtype_name(expected_array.dtype)
    if actual is None:
        return _fail(result, "none", UNFINISHED)
    if _is_tensor(expected) and not _is_tensor(actual):
        return _fail(result, "type", f"expected a torch tensor, got {_describe(actual)}")
    if _is_tensor(expected) and _is_tensor(actual):
        got, want = cast(Any, actual), cast(Any, expected)  # two torch tensors
        if got.device.type != want.device.type:
            return _fail(result, "device", f"result is on {got.device.type}, expected on "
                         f"{want.device.type} (compute on the device of the inputs)")
        if got.is_complex() != want.is_complex():
            return _fail(result, "dtype", f"dtype {got.dtype}, expected {want.dtype}")
    actual_array = to_numpy(actual)
    if actual_array is None:
        kind = "a torch tensor" if _is_tensor(expected) else "a NumPy array"
        return _fail(result, "type", f"expected {kind}, got {_describe(actual)}")
    result.shape = tuple(actual_array.shape)
    result.dtype = dtype_name(actual_array.dtype)
    if result.shape != result.expected_shape:
        return _fail(result, "shape", f"shape {result.shape}, expected {result.expected_shape}")
    problem = _dtype_problem(actual_array.dtype, expected_array.dtype, dtype)
    if problem:
        return _fail(result, "dtype", problem)
    return _compare_values(result, actual_array, expected_array, tol, reveal)


def agrees(actual: object, expected: object, tol: Tolerance, *,
           dtype: np.dtype | str | None = None) -> bool:
    """``compare(actual, expected, tol, ...).ok``, without the report: in the common case (two
    float arrays of one shape) the same arithmetic, without locating and describing the worst
    entry, at a fraction of the cost."""
    if (type(actual) is np.ndarray and type(expected) is np.ndarray
            and actual.dtype.kind == "f" and expected.dtype.kind == "f"
            and actual.shape == expected.shape and expected.size
            and not _dtype_problem(actual.dtype, expected.dtype, dtype)):
        if (actual == expected).all():
            return True
        measured = _finite_errors(actual, expected, tol)
        if measured is not None:
            return not bool((measured[2] > 1.0).any())
    return compare(actual, expected, tol, "", dtype=dtype).ok


_DTYPE_NAMES: dict[np.dtype, str] = {}


def dtype_name(dtype: np.dtype) -> str:
    """``str(dtype)``, remembered (NumPy builds the name anew on every call)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)
    return name


def _describe(value: object) -> str:
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a value of type {type(value).__name__}"


def _dtype_problem(got: np.dtype, want: np.dtype, required: np.dtype | str | None) -> str:
    if got.kind == "O":
        return "dtype object: build a numeric array (np.array of numbers, not of arrays)"
    if want.kind in "fc" and got.kind not in "fc":
        return f"dtype {got}, expected a floating-point result ({want}); integer arithmetic?"
    if want.kind == "c" and got.kind != "c":
        return f"dtype {got}, expected a complex result"
    if want.kind in "iub" and got.kind not in "iub":
        return f"dtype {got}, expected integers or booleans ({want})"
    if required is not None:
        need = np.dtype(required)
        if need.kind in "fc" and got.kind in "fc" and _real_size(got) < _real_size(need):
            return (f"dtype {got}, expected {need}: the inputs are {need}, so compute in {need} "
                    f"(does something create an array without dtype=... or cast it down?)")
    return ""


def _real_size(dtype: np.dtype) -> int:
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize


def _fail(result: Comparison, problem: str, detail: str) -> Comparison:
    result.ok = False
    result.problem = problem
    result.detail = detail
    result.ratio = math.inf
    return result


def _compare_values(result: Comparison, got: np.ndarray, want: np.ndarray, tol: Tolerance,
                    reveal: bool) -> Comparison:
    result.n_total = int(want.size)
    if want.size == 0:
        return result
    if got.dtype.kind in "fciub" and want.dtype.kind in "fciub" and (got == want).all():
        # the very same numbers (often: a known mistake's result, a correct callee's): no error
        # anywhere, what the general path below finds too, at a tenth of its cost
        result.worst_index = tuple(0 for _ in want.shape)
        return result
    measured = _finite_errors(got, want, tol)
    if measured is None:
        measured = _errors(got, want, tol)
    error, scale, ratio = measured
    bad = ratio > 1.0
    result.n_bad = int(np.count_nonzero(bad))
    flat = int(np.argmax(ratio))
    result.ratio = float(ratio.reshape(-1)[flat])
    result.worst_index = tuple(int(i) for i in np.unravel_index(flat, want.shape))
    worst_error = float(error.reshape(-1)[flat])
    worst_scale = float(scale.reshape(-1)[flat])
    result.max_abs_error = worst_error
    # an entry expected to be 0 has no relative error (it would read 1e+300): not shown
    result.max_rel_error = (0.0 if worst_error == 0 or worst_scale == 0
                            else worst_error / max(worst_scale, 1e-300))  # at the worst entry
    if result.n_bad == 0:
        return result
    result.ok = False
    nonfinite = ~np.isfinite(got) & np.isfinite(want)
    if nonfinite.any():
        first = tuple(int(i) for i in np.argwhere(nonfinite)[0])
        result.problem = "nonfinite"
        result.detail = (f"{int(nonfinite.sum())} of {want.size} entries are NaN or inf where a "
                         f"finite value is expected (first at {_index(first)}); look for an "
                         "overflowing exp, a log of 0 or a division by 0")
        return result
    result.problem = "values"
    if reveal:
        index = result.worst_index
        result.revealed = f"got {got[index].item()!r}, expected {want[index].item()!r}"
    return result


Errors = tuple[np.ndarray, np.ndarray, np.ndarray]  # |a−e|, |e|, |a−e| / allowed (float64)


def _finite_errors(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> Errors | None:
    """The errors of two real float arrays that are finite everywhere, with the subtraction in
    the wider of their dtypes (float64 at least: an IEEE subtraction is the exact difference,
    correctly rounded); None for any other case (complex, integer, a NaN or inf)."""
    if got.dtype.kind != "f" or want.dtype.kind != "f":
        return None
    wide = np.result_type(got.dtype, want.dtype, np.float64)
    w = want.astype(wide, copy=False)
    with np.errstate(all="ignore"):  # an overflow shows as inf and takes the general path
        error = np.abs(got.astype(wide, copy=False) - w).astype(np.float64, copy=False)
        scale = np.abs(w).astype(np.float64, copy=False)
        if not (np.isfinite(error).all() and np.isfinite(scale).all()):
            return None
        if tol.atol > 0:
            return error, scale, error / (tol.atol + tol.rtol * scale)
        return error, scale, np.where(error == 0, 0.0, error / (tol.rtol * scale))


def _errors(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> Errors:
    """The errors in any case, computed in extended precision; a NaN or inf must match
    exactly (NaN where NaN, +inf where +inf) or its error is infinite."""
    wide = np.clongdouble if (got.dtype.kind == "c" or want.dtype.kind == "c") else np.longdouble
    with np.errstate(all="ignore"):  # inf and NaN are handled below
        error = np.abs(got.astype(wide) - want.astype(wide)).astype(np.float64)
        scale = np.abs(want.astype(wide)).astype(np.float64)
        got_finite = np.isfinite(got)
        want_finite = np.isfinite(want)
        same_nonfinite = ~want_finite & ~got_finite & (
            (got == want) | (np.isnan(got) & np.isnan(want)))
        error = np.where(want_finite & got_finite, error, np.where(same_nonfinite, 0.0, np.inf))
        allowed = tol.atol + tol.rtol * np.where(want_finite, scale, 0.0)
        ratio = np.where(error == 0, 0.0, error / allowed)
    return error, scale, ratio


def assert_close(actual: object, expected: object, tol: Tolerance, name: str, *,
                 dtype: np.dtype | str | None = None, reveal: bool = True) -> Comparison:
    """Raise CheckFailure unless ``actual`` matches ``expected``; return the comparison."""
    comparison = compare(actual, expected, tol, name, dtype=dtype, reveal=reveal)
    if not comparison.ok:
        raise CheckFailure(comparison.message(), [comparison])
    return comparison


def expected_dtype_of(*inputs: object) -> np.dtype | None:
    """The least precise float dtype among the inputs: what a result computed from them needs."""
    floats = [d for d in array_dtypes(inputs) if d.kind in "fc"]
    return min(floats, key=_real_size) if floats else None

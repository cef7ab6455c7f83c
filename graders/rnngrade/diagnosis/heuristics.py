"""Shapes of wrongness recognisable from the numbers alone, without a mutant."""

from __future__ import annotations

import numpy as np


def _close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def describe_wrongness(got: np.ndarray, want: np.ndarray, atol: float, rtol: float,
                       time_axis: int | None = None) -> list[str]:
    """Plain-language patterns that relate a wrong result to the right one.

    got, want: arrays of the same kind (``want`` finite). time_axis: the axis that indexes time
    (classic layout: the last one), for the shifted-in-time pattern.
    """
    notes: list[str] = []
    got = np.asarray(got, dtype=np.complex128 if np.iscomplexobj(got) else np.float64)
    want = np.asarray(want, dtype=np.complex128 if np.iscomplexobj(want) else np.float64)
    if got.size == 0 or want.size == 0:
        return notes
    if np.all(np.isfinite(want)) and not np.all(np.isfinite(got)):
        notes.append("your result has NaN or inf where every expected value is finite")
        return notes
    if got.shape == want.shape[::-1] and got.ndim == 2 and got.shape != want.shape:
        if _close(got.T, want, atol, rtol):
            notes.append("your result is the transpose of the expected one")
            return notes
    if got.shape != want.shape:
        return notes
    if np.allclose(got, 0) and not np.allclose(want, 0):
        notes.append("your result is all zeros")
        return notes
    if _close(got, -want, atol, rtol):
        notes.append("your result has the opposite sign everywhere")
        return notes
    denominator = np.vdot(want, want).real
    if denominator > 0:
        factor = np.vdot(want, got).real / denominator
        if abs(factor - 1) > 1e-6 and abs(factor) > 1e-12 and _close(got, factor * want,
                                                                     atol, rtol):
            notes.append(f"your result is the expected one times a constant factor {factor:.4g}"
                         + _factor_story(factor))
            return notes
    axis = got.ndim - 1 if time_axis is None else time_axis
    if got.ndim >= 1 and got.shape[axis] > 1:
        length = got.shape[axis]
        for shift in (1, -1):
            g = np.take(got, range(max(shift, 0), length + min(shift, 0)), axis=axis)
            w = np.take(want, range(max(-shift, 0), length + min(-shift, 0)), axis=axis)
            if _close(g, w, atol, rtol):
                direction = "one step late" if shift == 1 else "one step early"
                notes.append(f"your values are right but {direction} along the time axis")
                return notes
    return notes


def _factor_story(factor: float) -> str:
    rounded = round(factor)
    if rounded >= 2 and abs(factor - rounded) < 1e-6:
        return (f" (an integer: a sum where a mean was asked, over {rounded} terms, or a term "
                "counted more than once?)")
    inverse = 1 / factor if factor else 0
    if round(inverse) >= 2 and abs(inverse - round(inverse)) < 1e-6:
        return f" (1/{round(inverse)}: divided by a count that should not be there?)"
    return ""

"""Shapes of wrongness recognisable from the numbers alone, without a known mistake.

Each pattern speaks only with evidence: enough entries that are not zero and not all alike, so a
match cannot be a coincidence of a tiny or constant array (a 1×1 value, the all-ones target of a
gradient check), and the evidence is stated in the diagnosis.
"""

from __future__ import annotations

import numpy as np

from rnngrade.harness.checks.evidence import informative
from rnngrade.results.model import Diagnosis, DiagnosisSource

HEURISTIC = DiagnosisSource.HEURISTIC.value


def _close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def _note(name: str, leaf: str, text: str, evidence: str) -> Diagnosis:
    return Diagnosis(name, f"{leaf}: {text}" if leaf else text, evidence=evidence,
                     source=HEURISTIC)


def describe_wrongness(got: np.ndarray, want: np.ndarray, atol: float, rtol: float,
                       time_axis: int | None = None, leaf: str = "") -> list[Diagnosis]:
    """Patterns that relate a wrong result to the right one, each with its evidence.

    got, want: arrays (``want`` finite where the pattern needs it). time_axis: the axis that
    indexes time (classic layout: the last one); ignored for arrays with fewer dimensions (a
    gradient such as ``dWax`` next to the time-indexed ``dx``). leaf: the output's name.
    """
    got = np.asarray(got, dtype=np.complex128 if np.iscomplexobj(got) else np.float64)
    want = np.asarray(want, dtype=np.complex128 if np.iscomplexobj(want) else np.float64)
    if got.size == 0 or want.size == 0:
        return []
    if np.all(np.isfinite(want)) and not np.all(np.isfinite(got)):
        bad = int(np.sum(~np.isfinite(got)))
        return [_note("nan_or_inf", leaf, "your result has NaN or inf where every expected "
                      "value is finite", f"{bad} of {got.size} entries are not finite")]
    if not informative(want, atol):
        return []
    if got.ndim == 2 and got.shape == want.shape[::-1] and got.shape != want.shape:
        if _close(got.T, want, atol, rtol):
            return [_note("transposed", leaf, "your result is the transpose of the expected one",
                          f"shape {got.shape} where {want.shape} is expected, and every entry "
                          "matches once transposed")]
    if got.shape != want.shape:
        return []
    if np.allclose(got, 0) and not np.allclose(want, 0):
        return [_note("all_zeros", leaf, "your result is all zeros",
                      f"all {got.size} entries are zero")]
    if _close(got, -want, atol, rtol):
        return [_note("opposite_sign", leaf, "your result has the opposite sign everywhere",
                      f"all {got.size} entries equal minus the expected ones")]
    factor = _constant_factor(got, want, atol, rtol)
    if factor is not None:
        return [_note("constant_factor", leaf,
                      f"your result is the expected one times a constant factor {factor:.4g}"
                      + _factor_story(factor),
                      f"all {got.size} entries share that ratio")]
    shift = time_shift(got, want, atol, rtol, time_axis)
    if shift:
        direction, sign = ("one step late", "-") if shift == 1 else ("one step early", "+")
        return [_note("off_by_one_step", leaf,
                      f"your values are right but {direction} along the time axis",
                      f"step t of your result equals the expected step t{sign}1 at every step")]
    return []


def _constant_factor(got: np.ndarray, want: np.ndarray, atol: float, rtol: float
                     ) -> float | None:
    denominator = np.vdot(want, want).real
    if denominator <= 0:
        return None
    factor = float(np.vdot(want, got).real / denominator)
    if abs(factor - 1) > 1e-6 and abs(factor) > 1e-12 and _close(got, factor * want, atol, rtol):
        return factor
    return None


def time_shift(got: np.ndarray, want: np.ndarray, atol: float, rtol: float,
               time_axis: int | None) -> int:
    """+1 when ``got`` is ``want`` one step late along ``time_axis``, −1 when one step early,
    0 otherwise (also without a time axis: a shift along another axis, of weight columns say,
    means nothing; or when the sequence barely changes over time)."""
    if time_axis is None:
        return 0
    axis = time_axis
    if got.ndim <= axis or got.shape != want.shape or got.shape[axis] < 3:
        return 0
    length = got.shape[axis]
    steps = np.moveaxis(want, axis, -1)
    if _close(steps[..., 1:], steps[..., :-1], atol, rtol):
        return 0  # constant over time: a shift proves nothing
    for shift in (1, -1):
        g = np.take(got, range(max(shift, 0), length + min(shift, 0)), axis=axis)
        w = np.take(want, range(max(-shift, 0), length + min(-shift, 0)), axis=axis)
        if informative(w, atol) and _close(g, w, atol, rtol):
            return shift
    return 0


def _factor_story(factor: float) -> str:
    rounded = round(factor)
    if rounded >= 2 and abs(factor - rounded) < 1e-6:
        return (f" (an integer: a sum where a mean was asked, over {rounded} terms, or a term "
                "counted more than once?)")
    inverse = 1 / factor if factor else 0
    if round(inverse) >= 2 and abs(inverse - round(inverse)) < 1e-6:
        return f" (1/{round(inverse)}: divided by a count that should not be there?)"
    return ""

"""Contract slips of shape beyond length-1 axes: the right entries in another layout.

Two rules for a result whose shape differs from the promised one (``contract.py`` asks them
after its own): axes merged (``torch.cat`` of the steps where ``torch.stack`` was promised, a
``reshape`` that flattens), and one axis shorter with every entry it has right (a loop that
stops one step early, or starts one late). Each compares every entry of the result, and only
an informative expected array counts, as in ``contract.py``.
"""

from __future__ import annotations

import numpy as np

from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

MERGED = "axes_merged"
STEPS_MISSING = "steps_missing_along_an_axis"


def _close(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> bool:
    a, b = got.astype(np.float64), want.astype(np.float64)
    return a.shape == b.shape and bool(
        np.all(np.isfinite(a)) and np.all(np.abs(a - b) <= tol.atol + tol.rtol * np.abs(b)))


def merged_axes(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str, function: str
                ) -> Diagnosis | None:
    """``got`` is ``want`` with two or more neighbouring axes merged into one, entries in
    order (``(B, T·H)`` for ``(B, T, H)``)."""
    if got.ndim >= want.ndim or got.size != want.size or got.ndim == 0:
        return None
    for start in range(want.ndim):
        for stop in range(start + 2, want.ndim + 1):
            shape = (*want.shape[:start], int(np.prod(want.shape[start:stop])),
                     *want.shape[stop:])
            if shape != got.shape:
                continue
            if not _close(got, want.reshape(got.shape), tol):
                return None
            merged = [str(axis) for axis in range(start, stop)]
            axes = f"{', '.join(merged[:-1])} and {merged[-1]}"
            return Diagnosis(
                MERGED, f"{leaf} has shape {got.shape} where {want.shape} is expected: axes "
                f"{axes} are merged into one (the pieces concatenated where they should be "
                "stacked along a new axis); its values are right", function,
                hint="Only the layout is wrong: put the pieces along a new axis "
                "(torch.stack / np.stack) instead of joining them along an existing one "
                "(torch.cat / np.concatenate), or reshape to the shape the function promises.",
                evidence=f"every entry of {leaf} equals the expected one once reshaped to "
                f"{want.shape}", source=STRUCTURAL)
    return None


def steps_missing(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str,
                  function: str) -> Diagnosis | None:
    """``got`` is ``want`` with the last (or first) entries along one axis left out, every
    entry it has right, and the expected array informative in the entries it has."""
    if got.ndim != want.ndim or got.size == 0:
        return None
    differ = [axis for axis in range(got.ndim) if got.shape[axis] != want.shape[axis]]
    if len(differ) != 1:
        return None
    axis = differ[0]
    kept, length = got.shape[axis], want.shape[axis]
    if kept >= length:
        return None
    for where, taken in (("last", range(kept)), ("first", range(length - kept, length))):
        part = np.take(want, list(taken), axis=axis)
        other = np.take(want, list(range(length - kept, length)) if where == "last"
                        else list(range(kept)), axis=axis)
        if _close(got, part, tol) and not _close(got, other, tol):
            count = length - kept
            what = "entry is" if count == 1 else f"{count} entries are"
            step = "step" if count == 1 else f"{count} steps"
            return Diagnosis(
                STEPS_MISSING, f"{leaf} has {kept} entries along axis {axis} where {length} "
                f"are expected: its {where} {what} missing (the {where} {step} of a loop?); "
                "the entries it has are right", function,
                hint="Every entry you return is right, but some are missing: check the range "
                "of your loop (range(T), not range(T - 1) or range(1, T)) and what you collect.",
                evidence=f"{leaf} equals the expected one without its {where} "
                f"{'entry' if count == 1 else f'{count} entries'} along axis {axis}",
                source=STRUCTURAL)
    return None

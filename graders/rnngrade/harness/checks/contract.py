"""Contract slips: the right numbers returned in the wrong form.

A failed check whose values are right once the result is put in the form the function promises
(its returned entries in the promised order, an array with or without a length-1 axis, with
its axes in another order or merged, an array one axis shorter with every entry it has right,
the precision of the inputs) names that slip. Every rule compares
every entry it speaks about, and only arrays with enough distinct non-zero entries count, so a
coincidence (two zero arrays of one shape swapped) never names one.

It needs only the student's result and the expected one, so it is shipped: the grader
(``grading/checker.py``, which makes each slip a ``Diagnosis``) and the public tests
(``checks/mistakes.py``, from ``assert_outputs``) say the same sentence.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import Comparison, to_numpy
from rnngrade.harness.checks.evidence import informative
from rnngrade.harness.checks.structure import flatten
from rnngrade.harness.checks.tolerance import FLOAT32, Tolerance

REORDERED = "outputs_in_another_order"
AXES = "shape_differs_by_length_one_axes"
AXES_ORDER = "axes_in_another_order"
MERGED = "axes_merged"
STEPS_MISSING = "steps_missing_along_an_axis"
LOW_PRECISION = "computed_in_lower_precision"

MAX_ORDER_ITEMS = 6  # permutations of at most 720 orders


@dataclass(frozen=True)
class ContractSlip:
    """One contract slip: its identifier (one of the names above), the sentence naming it, the
    hint, and the evidence (what was compared)."""

    name: str
    text: str
    hint: str
    evidence: str

    def public_line(self) -> str:
        """The slip as a public test says it: the sentence, its evidence, then the hint."""
        return f"{self.text} ({self.evidence})\nhint: {self.hint}"


def explain_contract(got: Any, want: Any, failed: list[Comparison], tol: Tolerance, name: str,
                     names: tuple[str, ...] | None, function: str) -> list[ContractSlip]:
    """The contract slips that explain every failed leaf of a check (none: an empty list)."""
    order = _reordered(got, want, tol, name, names, function)
    if order is not None:
        return [order]
    leaves_got = dict(flatten(got, name, names))
    leaves_want = dict(flatten(want, name, names))
    found = []
    roundings = []  # leaves right to float32 precision: explained when another is computed so
    for comparison in failed:
        if comparison.name not in leaves_got or comparison.name not in leaves_want:
            return []
        g, w = to_numpy(leaves_got[comparison.name]), to_numpy(leaves_want[comparison.name])
        if g is None or w is None or g.dtype.kind not in "fc" or not informative(
                np.asarray(w, dtype=np.complex128 if w.dtype.kind == "c" else np.float64),
                tol.atol):
            return []
        slip = None
        if comparison.problem == "shape":
            slip = (_axes(g, w, tol, comparison.name)
                    or _axes_order(g, w, tol, comparison.name)
                    or merged_axes(g, w, tol, comparison.name)
                    or steps_missing(g, w, tol, comparison.name))
        elif comparison.problem == "dtype":
            slip = _precision(g, w, comparison.name)
        elif comparison.problem == "values" and _close(g, w, FLOAT32):
            roundings.append(comparison.name)
            continue
        if slip is None:
            return []  # a leaf no slip explains: the check fails for another reason too
        found.append(slip)
    if roundings and not any(d.name == LOW_PRECISION for d in found):
        return []
    return found


def _close(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> bool:
    if got.shape != want.shape:
        return False
    a = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
    b = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    return bool(np.all(np.isfinite(a)) and np.all(np.abs(a - b) <= tol.atol + tol.rtol * np.abs(b)))


def _same_up_to_axes(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> bool:
    """Equal once the length-1 axes are dropped (a ``keepdims``, a leading axis, a column)."""
    return (got.size == want.size and got.squeeze().shape == want.squeeze().shape
            and _close(got.reshape(want.shape), want, tol))


def _axes(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str) -> ContractSlip | None:
    if got.shape == want.shape or not _same_up_to_axes(got, want, tol):
        return None
    return ContractSlip(
        AXES, f"{leaf} has shape {got.shape} where {want.shape} is expected; its values are right",
        hint="Only the shape is wrong: look at the axes of length 1 (a sum with or "
        "without keepdims=True, an extra leading axis, a column where a flat vector is "
        "expected or the reverse) and reshape to the shape the function promises.",
        evidence=f"every entry of {leaf} equals the expected one once reshaped to "
        f"{want.shape}")


def _axes_order(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str
                ) -> ContractSlip | None:
    """The expected array with its axes in another order (``(T, B, H)`` for ``(B, T, H)``):
    exactly one reordering of the axes gives the expected shape and every expected value."""
    if got.ndim != want.ndim or got.ndim < 2 or got.shape == want.shape \
            or sorted(got.shape) != sorted(want.shape):
        return None
    fits = [order for order in itertools.permutations(range(got.ndim))
            if got.transpose(order).shape == want.shape
            and _close(got.transpose(order), want, tol)]
    if len(fits) != 1:
        return None
    moved = [i for i, j in enumerate(fits[0]) if i != j]
    axes = (f"axes {moved[0]} and {moved[1]} swapped" if len(moved) == 2
            else f"axes {', '.join(map(str, moved))} permuted")
    return ContractSlip(
        AXES_ORDER, f"{leaf} has shape {got.shape} where {want.shape} is expected: its axes "
        f"are in another order ({axes}); its values are right",
        hint="Only the order of the axes is wrong: check along which axis you stack or "
        "concatenate the steps (torch.stack(..., dim=...), np.stack(..., axis=...)) and which "
        "axis the function promises for time.",
        evidence=f"every entry of {leaf} equals the expected one once its axes are put in the "
        "expected order")


def merged_axes(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str
                 ) -> ContractSlip | None:
    """``got`` is ``want`` with two or more neighbouring axes merged into one, entries in
    order (``(B, T·H)`` for ``(B, T, H)``: ``torch.cat`` of the steps where ``torch.stack`` was
    promised, a ``reshape`` that flattens)."""
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
            return ContractSlip(
                MERGED, f"{leaf} has shape {got.shape} where {want.shape} is expected: axes "
                f"{axes} are merged into one (the pieces concatenated where they should be "
                "stacked along a new axis); its values are right",
                hint="Only the layout is wrong: put the pieces along a new axis "
                "(torch.stack / np.stack) instead of joining them along an existing one "
                "(torch.cat / np.concatenate), or reshape to the shape the function promises.",
                evidence=f"every entry of {leaf} equals the expected one once reshaped to "
                f"{want.shape}")
    return None


def steps_missing(got: np.ndarray, want: np.ndarray, tol: Tolerance, leaf: str
                   ) -> ContractSlip | None:
    """``got`` is ``want`` with the last (or first) entries along one axis left out (a loop
    that stops one step early, or starts one late): every entry it has right, and not also
    right with the other end left out."""
    if got.ndim != want.ndim or got.size == 0:
        return None
    differ = [axis for axis in range(got.ndim) if got.shape[axis] != want.shape[axis]]
    if len(differ) != 1:
        return None
    axis = differ[0]
    kept, length = got.shape[axis], want.shape[axis]
    if kept >= length:
        return None
    first, last = list(range(kept)), list(range(length - kept, length))
    for where, taken, other in (("last", first, last), ("first", last, first)):
        if _close(got, np.take(want, taken, axis=axis), tol) \
                and not _close(got, np.take(want, other, axis=axis), tol):
            count = length - kept
            what = "entry is" if count == 1 else f"{count} entries are"
            step = "step" if count == 1 else f"{count} steps"
            return ContractSlip(
                STEPS_MISSING, f"{leaf} has {kept} entries along axis {axis} where {length} "
                f"are expected: its {where} {what} missing (the {where} {step} of a loop?); "
                "the entries it has are right",
                hint="Every entry you return is right, but some are missing: check the range "
                "of your loop (range(T), not range(T - 1) or range(1, T)) and what you collect.",
                evidence=f"{leaf} equals the expected one without its {where} "
                f"{'entry' if count == 1 else f'{count} entries'} along axis {axis}")
    return None


def _precision(got: np.ndarray, want: np.ndarray, leaf: str) -> ContractSlip | None:
    if got.dtype.itemsize >= want.dtype.itemsize or not _close(got, want, FLOAT32):
        return None
    # the course's value of float64 inputs is computed in longdouble: the inputs are float64
    inputs = np.dtype(np.float64) if want.dtype.kind == "f" and want.dtype.itemsize > 8 \
        else want.dtype
    if got.dtype.itemsize >= inputs.itemsize:
        return None
    return ContractSlip(
        LOW_PRECISION, f"{leaf} is computed in {got.dtype} where the inputs are {inputs}",
        hint=f"The values are right to {got.dtype} precision: something creates an "
        f"array or tensor in {got.dtype} (a dtype=..., a torch default) or casts down; keep "
        f"the precision of the inputs.",
        evidence=f"every entry of {leaf} agrees with the expected one to {got.dtype} precision")


def _reordered(got: Any, want: Any, tol: Tolerance, name: str, names: tuple[str, ...] | None,
               function: str) -> ContractSlip | None:
    """The returned entries are the expected ones in another order (every entry informative,
    and only one order fits)."""
    if not (isinstance(want, tuple | list) and isinstance(got, tuple | list)
            and 2 <= len(want) == len(got) <= MAX_ORDER_ITEMS):
        return None
    arrays_got = [to_numpy(g) for g in got]
    arrays_want = [to_numpy(w) for w in want]
    if any((g is None) != (w is None) for g, w in zip(arrays_got, arrays_want)):
        return None
    slots = [i for i, w in enumerate(arrays_want) if w is not None]  # a cache stays in place
    g_all = [g for g in arrays_got if g is not None]
    w_all = [w for w in arrays_want if w is not None]
    if len(slots) < 2 or any(w.dtype.kind != "f" or not informative(w.astype(np.float64),
                                                                     tol.atol) for w in w_all):
        return None
    identity = tuple(range(len(slots)))
    fits = [order for order in itertools.permutations(identity) if order != identity
            and all(_close(g_all[k], w_all[j], tol) for k, j in enumerate(order))]
    if len(fits) != 1:
        return None
    order = fits[0]
    label = [names[i] if names and i < len(names) else f"{name}[{i}]" for i in slots]
    returned = ", ".join(label[j] for j in order)
    promised = ", ".join(label)
    return ContractSlip(
        REORDERED, f"{function} returns ({returned}) where ({promised}) is expected",
        hint="Your values are right; return them in the order the function's "
        "docstring promises.",
        evidence=f"your returned entries equal the expected {returned}, in that order")

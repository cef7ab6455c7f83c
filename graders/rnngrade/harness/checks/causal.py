"""Leakage probes: does a function's output depend on values it must not have seen yet?

A forecaster, a scaler fitted at an origin, a trailing statistic: each must give the same output
whatever the series holds at or after some index ``k``. ``assert_causal`` calls the function
on the series and on copies that differ from it only at indices ``≥ k`` (along ``axis``), and
requires the outputs that must not see the future to be identical. Identity (``==``, NaN equal
to NaN) is the right test here: the probe tests where data flows, not arithmetic, so a correct
function gives bit-for-bit the same result on inputs it reads bit-for-bit the same.

A failure names the leak in the words the caller gives (``"your scaler reads values after the
origin"``) and says which output changed and where; it never prints a value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import CheckFailure, to_numpy
from rnngrade.harness.checks.structure import flatten


def future_variants(series: np.ndarray, k: int, axis: int = 0) -> list[tuple[str, np.ndarray]]:
    """Copies of ``series`` equal to it before index ``k`` along ``axis`` and different at every
    index from ``k`` on, each with a few words saying how: a level shift far outside the data,
    and the future mirrored and scaled (so shape and level change both). A bool array gets its
    future flipped. Raises ValueError when there is no index ``≥ k``."""
    values = np.asarray(series)
    length = values.shape[axis]
    if not 0 <= k < length:
        raise ValueError(f"index {k} leaves no future to change in an axis of length {length}")
    future = [slice(None)] * values.ndim
    future[axis] = slice(k, None)
    where = tuple(future)
    if values.dtype == bool:
        flipped = values.copy()
        flipped[where] = ~values[where]
        return [("every later value flipped", flipped)]
    data = values.astype(np.float64)
    finite = data[np.isfinite(data)]
    spread = float(np.max(np.abs(finite))) if finite.size else 1.0
    shift = 10.0 * (1.0 + spread)  # outside the range of the data: no coincidence can hide it
    shifted = values.copy()
    shifted[where] = (data[where] + shift).astype(values.dtype)
    mirrored = values.copy()
    mirrored[where] = (-3.0 * data[where] + 1.0).astype(values.dtype)
    return [("every later value raised far above the data", shifted),
            ("every later value mirrored and tripled", mirrored)]


def first_change(before: Any, after: Any, name: str) -> str | None:
    """Where ``after`` differs from ``before`` (a leaf name and an index), or None if identical
    (NaN equals NaN; a changed shape, type or structure counts as a change)."""
    old, new = flatten(before, name), flatten(after, name)
    if [label for label, _ in old] != [label for label, _ in new]:
        return f"the structure of {name}"
    for (label, a), (_, b) in zip(old, new):
        try:
            changed = _leaf_change(a, b, label)
        except Exception:  # noqa: BLE001 - values that cannot be compared cannot be shown equal
            changed = f"{label} (its values cannot be compared)"
        if changed is not None:
            return changed
    return None


def _leaf_change(a: Any, b: Any, label: str) -> str | None:
    x, y = to_numpy(a), to_numpy(b)
    if x is None or y is None:
        return label if type(a) is not type(b) or bool(a != b) else None
    if x.shape != y.shape or x.dtype != y.dtype:
        return f"the shape or dtype of {label}"
    same = (x == y) | ((x != x) & (y != y)) if x.dtype.kind in "fc" else x == y
    if np.all(same):
        return None
    index = tuple(int(i) for i in np.argwhere(~np.asarray(same))[0])
    return f"{label} at {list(index)}" if index else label


def assert_causal(run: Callable[[np.ndarray], Any], series: np.ndarray, k: int, *, name: str,
                  leak: str, outputs: Callable[[Any], Any] | None = None, axis: int = 0,
                  hint: str = "") -> None:
    """Raise CheckFailure if ``outputs(run(x))`` changes when ``x`` changes only at indices
    ``≥ k``.

    run: calls the function under test on a series (``lambda s: student.fit_scaler(s, o)``).
    name: what is called, for the message (``"fit_scaler(series, origin=40)"``).
    leak: the leak in the student's words (``"your scaler reads values after the origin"``).
    outputs: picks the part of the result that must not depend on the future (default: all).
    """
    pick = outputs or (lambda value: value)
    base = pick(run(np.array(series, copy=True)))
    for how, variant in future_variants(series, k, axis):
        changed = first_change(base, pick(run(variant)), name)
        if changed is not None:
            raise CheckFailure(
                f"{name}: {leak}.\n  Changing only the input from index {k} on ({how}) "
                f"changed {changed}, which must not depend on those values.", hint=hint)

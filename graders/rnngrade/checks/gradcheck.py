"""Central-difference gradient checks, with the conventions of SPEC.md.

float64, ε = 1e-5, (f(θ+ε) − f(θ−ε)) / 2ε, relative error |a − n| / max(|a|, |n|, 1e-12).
A correct backward pass lands at 1e-6…1e-10; above 1e-4 is a bug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

EPSILON = 1e-5
# The truncation error of central differences is O(ε²·f''') ≈ 1e-10 and the rounding error
# O(1e-16/ε) ≈ 1e-11 on O(1) values, so a correct gradient's relative error sits near 1e-7 or
# below; 1e-5 leaves a 100x margin and still catches every real bug (those land above 1e-3).
GRADIENT_RTOL = 1e-5


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """Entrywise |a − n| / max(|a|, |n|, 1e-12); 0 where both are 0."""
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numeric, dtype=np.float64)
    return np.abs(a - n) / np.maximum(np.maximum(np.abs(a), np.abs(n)), 1e-12)


def numeric_gradient(f: Callable[[], float], x: np.ndarray, indices: Iterable[tuple[int, ...]],
                     eps: float = EPSILON) -> np.ndarray:
    """Central differences of the scalar ``f()`` (which reads ``x``) at the given entries of ``x``.

    ``x`` is perturbed in place and restored bit-exactly after each entry.
    """
    values = []
    for index in indices:
        original = x[index]
        x[index] = original + eps
        plus = float(f())
        x[index] = original - eps
        minus = float(f())
        x[index] = original
        values.append((plus - minus) / (2 * eps))
    return np.asarray(values)


def sample_indices(shape: tuple[int, ...], count: int, rng: np.random.Generator,
                   allowed: np.ndarray | None = None) -> list[tuple[int, ...]]:
    """Up to ``count`` distinct entries of an array of ``shape``, drawn from where ``allowed``
    (a boolean mask, default everywhere) is True: gradients are checked only where they are not
    structurally zero."""
    mask = np.ones(shape, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    candidates = np.argwhere(mask)
    if len(candidates) == 0:
        return []
    chosen = rng.choice(len(candidates), size=min(count, len(candidates)), replace=False)
    return [tuple(int(i) for i in candidates[j]) for j in sorted(chosen)]

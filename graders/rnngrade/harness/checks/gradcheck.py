"""Central-difference gradient checks, with the conventions of assignments/lab2/README.md.

float64, ε = 1e-5, (f(θ+ε) − f(θ−ε)) / 2ε, relative error |a − n| / max(|a|, |n|, 1e-12).
A correct backward pass lands at 1e-6…1e-10; above 1e-4 is a bug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import CheckFailure

EPSILON = 1e-5
# The truncation error of central differences is O(ε²·f''') ≈ 1e-10 and the rounding error
# O(1e-16/ε) ≈ 1e-11 on O(1) values, so a correct gradient's relative error sits near 1e-7 or
# below; 1e-5 leaves a 100x margin and still catches every real bug (those land above 1e-3).
GRADIENT_RTOL = 1e-5

# Directional checks (the projection of torch.autograd.gradcheck's fast mode). Along a unit
# direction v, φ(t) = L(θ + t·v) and d = (φ(ε) − φ(−ε)) / 2ε misses φ′(0) = g·v by the truncation
# ε²·|φ‴|/6 plus the rounding δL/ε, δL the rounding error of one evaluation of L (≈ 1e-16 per
# unit of Σ|terms|, at most ~1e-14 for the labs' losses). ε = 1e-5 sits at the optimum
# (3·δL/|φ‴|)^(1/3) ≈ 1e-5 for |φ‴| ~ 1, where both terms are ~1e-10…1e-9. Measured against
# ‖g‖ (the largest |g·v| over unit v), a correct gradient's error stays below ~1e-9 (what the
# references of labs 2 and 3 measure: tests/test_directional_gradcheck.py), so
# DIRECTIONAL_RTOL = 1e-6 leaves a 1000x margin. A wrong gradient g + e passes only if
# |e·v| ≤ 1e-6·‖g‖; for v uniform on the unit sphere of n entries, e·v ≈ N(0, ‖e‖²/n), so that
# happens with probability ≈ 0.8·1e-6·√n·‖g‖/‖e‖ per direction: below 2e-2 for n ≤ 400 and a
# bug as small as ‖e‖ = 1e-3·‖g‖, and two independent directions square it (4e-4; a real
# mistake, ‖e‖ ≳ 1e-2·‖g‖, passes with probability below 4e-6). The directions are drawn from
# the check's own seeded generator: a submission meets the same ones at every parallelism.
DIRECTIONAL_EPSILON = 1e-5
DIRECTIONAL_RTOL = 1e-6
DIRECTIONS = 2


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


def random_directions(shape: tuple[int, ...], count: int, rng: np.random.Generator,
                      allowed: np.ndarray | None = None) -> list[np.ndarray]:
    """``count`` unit directions over an array of ``shape``, uniform on the sphere of the entries
    where ``allowed`` (default everywhere) is True and zero elsewhere; none when no entry is."""
    mask = np.ones(shape, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    if not mask.any():
        return []
    found = []
    for _ in range(count):
        v = np.where(mask, rng.standard_normal(shape), 0.0)
        found.append(v / np.linalg.norm(v))
    return found


def directional_error(gradient: np.ndarray, direction: np.ndarray, numeric: float) -> float:
    """|g·v − d| / max(‖g‖, |d|, 1e-12), ‖g‖ over the entries ``v`` may move (the scale of any
    g·v there); NaN for a gradient that is not finite."""
    g = np.where(direction != 0, np.asarray(gradient, dtype=np.float64), 0.0)
    projected = float(np.sum(g * direction))
    scale = max(float(np.linalg.norm(g)), abs(numeric), 1e-12)
    return abs(projected - numeric) / scale


@dataclass(frozen=True)
class OutputLoss:
    """The scalar L = Σ_k Σ weights_k ⊙ function(*args[:arity])[k] through a module's forward
    pass: ``weights`` pairs an output's position with the upstream gradient it is weighted by;
    the forward pass takes the first ``arity`` arguments of the check."""

    function: str
    arity: int
    weights: tuple[tuple[int, Any], ...]


def locate(target: np.ndarray, args: tuple) -> tuple:
    """The path of ``target`` (the object itself) inside ``args``: ``(i,)`` for an argument,
    ``(i, key)`` for an entry of a dict argument."""
    for i, arg in enumerate(args):
        if arg is target:
            return (i,)
        if isinstance(arg, dict):
            for key, value in arg.items():
                if value is target:
                    return (i, key)
    raise ValueError("the array to perturb is not among the arguments")


def central_differences(m: Any, loss: OutputLoss, args: tuple,
                        targets: list[tuple[tuple, list[tuple[int, ...]]]],
                        eps: float = EPSILON) -> list[np.ndarray]:
    """Central differences of ``loss`` through module proxy ``m``, per ``(path, indices)`` of
    ``targets`` (``path`` as ``locate`` gives it): the numeric gradient at those entries.

    The evaluations run beside the module in one call (the ``perturbed_losses`` helper); only
    the loss values cross, and the differences are taken here. An output the loss cannot use
    fails the check with the helper's sentence."""
    return _differences(m, "perturbed_losses", loss, args,
                        [(path, [list(i) for i in indices]) for path, indices in targets], eps)


def directional_differences(m: Any, loss: OutputLoss, args: tuple,
                            targets: list[tuple[tuple, list[np.ndarray]]],
                            eps: float = DIRECTIONAL_EPSILON) -> list[np.ndarray]:
    """``central_differences`` along directions: per ``(path, directions)`` of ``targets``, the
    differences (L(x + εv) − L(x − εv)) / 2ε of the whole array ``x`` moved along each ``v``
    (the ``directional_losses`` helper, in one call)."""
    return _differences(m, "directional_losses", loss, args, targets, eps)


def _differences(m: Any, helper: str, loss: OutputLoss, args: tuple,
                 targets: list[tuple[tuple, list[Any]]], eps: float) -> list[np.ndarray]:
    """The differences from ``helper``'s loss pairs, one per item of each target's list."""
    answer = m.helper(helper, loss.function, tuple(args[:loss.arity]),
                      [[k, w] for k, w in loss.weights],
                      [[list(path), list(items)] for path, items in targets], eps)
    if isinstance(answer, str):
        raise CheckFailure(answer[:500])
    numeric = []
    shape_ok = isinstance(answer, list) and len(answer) == len(targets)
    for (_, items), losses in zip(targets, answer if shape_ok else []):
        pairs = losses if isinstance(losses, list) and len(losses) == len(items) else None
        if pairs is None or not all(isinstance(p, list) and len(p) == 2 and
                                    all(type(v) is float for v in p) for p in pairs):
            shape_ok = False
            break
        numeric.append(np.asarray([(plus - minus) / (2 * eps) for plus, minus in pairs]))
    if not shape_ok:
        raise CheckFailure("the gradient check got no usable loss values back from beside your "
                           "code")
    return numeric

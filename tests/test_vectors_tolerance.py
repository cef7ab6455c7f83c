"""Committed public vectors against what this machine computes: another CPU's rounding passes,
a stale file does not (``rnngrade.authoring.generate._same``)."""

from __future__ import annotations

import numpy as np
import torch

from rnngrade.authoring.generate import _same


def ulps(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` moved ``n`` units in the last place, entry by entry."""
    out = x.copy()
    for _ in range(n):
        out = np.nextafter(out, np.inf, dtype=out.dtype)
    return out


def test_another_machines_float32_rounding_is_the_same_vectors():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    assert _same(ulps(x, 40), x)
    assert _same(torch.from_numpy(ulps(x, 40)), torch.from_numpy(x))
    assert _same({"a": (ulps(x, 3), 1.0)}, {"a": (x, 1.0)})


def test_small_entries_of_a_large_array_are_judged_against_its_largest():
    # an FFT of values up to 6e8 (a mistake that explodes): its small entries carry the error of
    # the large ones, here a whole unit
    x = np.array([6.2e8, 0.55, -3.0], dtype=np.float32)
    y = np.array([6.2e8, -0.49, -3.0], dtype=np.float32)
    assert _same(x, y)


def test_a_stale_file_is_not_the_same_vectors():
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    changed = x.copy()
    changed[1, 2] += 1e-3  # a reference edit changes values far beyond rounding
    assert not _same(changed, x)
    assert not _same(x.astype(np.float64), x)  # another dtype
    assert not _same(x[:2], x)  # another shape
    x64 = x.astype(np.float64)
    assert _same(x64 * (1 + 1e-13), x64)
    assert not _same(x64 * (1 + 1e-9), x64)  # float64 keeps a tight tolerance
    assert not _same(np.array([1, 2, 3]), np.array([1, 2, 4]))  # integers are exact


def test_nan_and_inf_must_be_where_they_were():
    x = np.array([1.0, np.nan, np.inf], dtype=np.float32)
    assert _same(x.copy(), x)
    assert not _same(np.array([np.nan, 1.0, np.inf], dtype=np.float32), x)
    assert not _same(np.array([1.0, np.nan, -np.inf], dtype=np.float32), x)
    assert not _same(np.array([1.0, np.nan, 5.0], dtype=np.float32), x)


def test_python_floats_get_float32s_tolerance():
    # a training loss computed in float32, printed by another CPU
    assert _same(2.12500262260437, 2.125002384185791)
    assert not _same(2.13, 2.125002384185791)
    assert _same(float("nan"), float("nan"))
    assert _same("lstm", "lstm") and not _same("lstm", "gru")

"""Shapes of wrongness recognised from the numbers alone."""

import numpy as np

from rnngrade.diagnosis.heuristics import describe_wrongness


def _one(got, want, **kw):
    notes = describe_wrongness(got, want, 1e-10, 1e-8, **kw)
    assert len(notes) == 1, notes
    return notes[0]


def test_constant_factor_names_the_sum_instead_of_mean_story():
    want = np.random.default_rng(0).standard_normal((4, 5))
    assert "factor 12" in _one(12 * want, want) and "sum where a mean" in _one(12 * want, want)
    assert "1/6" in _one(want / 6, want)


def test_transpose_sign_time_shift_nan_and_zeros():
    rng = np.random.default_rng(1)
    want = rng.standard_normal((3, 5))
    assert "transpose" in _one(want.T.copy(), want)
    assert "opposite sign" in _one(-want, want)
    late = np.concatenate([rng.standard_normal((2, 3, 1)), np.zeros((2, 3, 3))], axis=2)
    series = rng.standard_normal((2, 3, 4))
    late[:, :, 1:] = series[:, :, :-1]
    assert "one step late" in _one(late, series, time_axis=2)
    nan = want.copy()
    nan[0, 0] = np.nan
    assert "NaN" in _one(nan, want)
    assert "all zeros" in _one(np.zeros_like(want), want)


def test_unrelated_values_give_no_story():
    rng = np.random.default_rng(2)
    assert describe_wrongness(rng.standard_normal((3, 3)), rng.standard_normal((3, 3)),
                              1e-10, 1e-8) == []

"""Shapes of wrongness recognised from the numbers alone, each only with evidence."""

import numpy as np
import pytest

from rnngrade.diagnosis.heuristics import describe_wrongness


def _one(got, want, **kw):
    notes = describe_wrongness(got, want, 1e-10, 1e-8, **kw)
    assert len(notes) == 1, notes
    assert notes[0].source == "heuristic" and notes[0].evidence
    return notes[0].text


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


@pytest.mark.parametrize("shape", [(4, 3), (6, 1), (5,)])
def test_the_time_axis_is_ignored_for_arrays_without_it(shape):
    """lstm_backward's dict mixes dx (n_x, m, T) with 2-D gradients (da0, dWf, dbf): the time
    axis of the check must not be applied to them (it raised IndexError)."""
    rng = np.random.default_rng(3)
    want = rng.standard_normal(shape)
    assert describe_wrongness(rng.standard_normal(shape), want, 1e-10, 1e-8, time_axis=2) == []
    assert "factor 3" in _one(3 * want, want, time_axis=2)


def test_no_factor_or_sign_claim_on_a_handful_of_entries_or_a_constant_target():
    assert describe_wrongness(np.array([[2.4]]), np.array([[1.2]]), 1e-10, 1e-8) == []
    few = np.array([1.0, -2.0, 3.0, 0.0, 0.0, 0.0])
    assert describe_wrongness(-few, few, 1e-10, 1e-8) == []
    ones = np.ones((4, 5))  # a gradient check's target: 1 + relative error everywhere
    assert describe_wrongness(1.5 * ones, ones, 1e-10, 1e-8) == []


def test_no_time_shift_claim_on_a_sequence_constant_over_time():
    want = np.repeat(np.random.default_rng(4).standard_normal((2, 3, 1)), 5, axis=2)
    got = want.copy()
    got[:, :, 0] = 0.0
    assert describe_wrongness(got, want, 1e-10, 1e-8, time_axis=2) == []

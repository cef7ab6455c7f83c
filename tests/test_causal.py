"""The leakage probe (rnngrade.harness.checks.causal): it passes functions that do not read the
future, names the leak of those that do, says where the output changed and never prints a
value."""

import numpy as np
import pytest

from rnngrade.testing import CheckFailure, assert_causal, future_variants


def test_variants_equal_before_k_and_different_from_k_on():
    series = np.linspace(-1.0, 1.0, 12)
    for how, variant in future_variants(series, 5):
        assert np.array_equal(variant[:5], series[:5]), how
        assert np.all(variant[5:] != series[5:]), how
        assert variant.dtype == series.dtype


def test_variants_of_bools_and_of_a_later_axis():
    flags = np.array([True, False, True, True])
    [(_, flipped)] = future_variants(flags, 2)
    assert flipped.tolist() == [True, False, False, False]
    grid = np.zeros((2, 6), dtype=np.float32)
    for _, variant in future_variants(grid, 4, axis=1):
        assert np.all(variant[:, :4] == 0) and np.all(variant[:, 4:] != 0)
        assert variant.dtype == np.float32


def test_variants_need_a_future():
    with pytest.raises(ValueError, match="no future"):
        future_variants(np.zeros(5), 5)


def test_a_causal_function_passes():
    series = np.random.default_rng(0).standard_normal(30)
    assert_causal(lambda s: (s[:10].mean(), s[:10].std()), series, 10, name="scaler",
                  leak="reads the future")
    # NaN in a result that must not change is equal to itself
    assert_causal(lambda s: np.r_[np.nan, s[:10]], series, 10, name="padded", leak="unused")


def test_a_leak_is_named_and_located_without_values():
    series = np.arange(20.0)
    with pytest.raises(CheckFailure) as failure:
        assert_causal(lambda s: (s[:10].mean(), s.std()), series, 10,
                      name="fit_scaler(series, 10)",
                      leak="your scaler reads values after the origin")
    message = str(failure.value)
    assert "your scaler reads values after the origin" in message
    assert "from index 10 on" in message and "fit_scaler(series, 10)[1]" in message
    assert str(series.std()) not in message and "9.5" not in message


def test_only_the_selected_outputs_must_not_change():
    values = np.arange(10.0)

    def trailing_sum(v):  # output i uses v[:i + 2]: one step of look-ahead
        return np.cumsum(v)[1:]

    with pytest.raises(CheckFailure, match=r"at \[5\]"):
        assert_causal(lambda v: trailing_sum(v)[:6], values, 6, name="rolling", leak="ahead")
    assert_causal(lambda v: trailing_sum(v)[:5], values, 6, name="rolling", leak="ahead")


def test_a_changed_shape_or_structure_counts_as_a_change():
    series = np.arange(8.0)
    with pytest.raises(CheckFailure, match="shape or dtype"):
        assert_causal(lambda s: s[: int(s[-1]) % 5], series, 6, name="cut", leak="reads the end")
    with pytest.raises(CheckFailure, match="structure"):
        assert_causal(lambda s: {"a": 1} if s[-1] == 7 else {"b": 1}, series, 6,
                      name="keys", leak="reads the end")


def test_results_that_cannot_be_compared_count_as_changed():
    class Opaque:
        def __ne__(self, other):
            raise RuntimeError("no comparison")

    with pytest.raises(CheckFailure, match="cannot be compared"):
        assert_causal(lambda s: Opaque(), np.arange(6.0), 3, name="opaque", leak="unknown")

"""Numbers for people come from one place: points without trailing zeros, errors to 3 digits."""

from __future__ import annotations

import pytest

from rnngrade.harness.formatting import format_magnitude, format_points


@pytest.mark.parametrize("value, decimals, text", [
    (3.0, 2, "3"), (3.5, 2, "3.5"), (2.6667, 2, "2.67"), (0.0, 2, "0"), (10.0, 2, "10"),
    (2.25, 1, "2.2"), (2.96, 1, "3"), (1 / 3, 4, "0.3333"), (2.00001, 4, "2"),
])
def test_points_have_no_trailing_zeros(value: float, decimals: int, text: str):
    assert format_points(value, decimals) == text


def test_magnitudes_keep_three_significant_digits():
    assert [format_magnitude(v) for v in (0.000123456, 12345.6, 1.0)] == ["0.000123",
                                                                           "1.23e+04", "1"]

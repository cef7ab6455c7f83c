"""How the grader writes numbers for people: points and the size of an error. The one place
(reports, the public-test summary, the gradebook export, ``validate`` and check messages use it)."""

from __future__ import annotations


def format_points(value: float, decimals: int = 2) -> str:
    """Points without trailing zeros: 3 → "3", 3.5 → "3.5", 2.6667 → "2.67" (``decimals``: at
    most that many digits after the point; the gradebook export keeps 4)."""
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def format_magnitude(value: float) -> str:
    """An error, a ratio or a tolerance, to three significant digits: 0.000123 → "0.000123",
    12345.6 → "1.23e+04"."""
    return f"{value:.3g}"

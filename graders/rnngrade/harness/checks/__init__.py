"""The checks library: comparisons with clear messages, tolerances with reasons, gradient checks,
seeding and devices. It is shipped to students with the public tests, so it imports NumPy only;
torch is imported lazily where a check needs it."""

from rnngrade.harness.checks.compare import CheckFailure, Comparison, assert_close, compare
from rnngrade.harness.checks.tolerance import Tolerance, tolerance_for

__all__ = ["CheckFailure", "Comparison", "Tolerance", "assert_close", "compare", "tolerance_for"]

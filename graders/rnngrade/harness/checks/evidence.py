"""What a value must hold before a pattern seen in it counts as evidence.

Shared by the shipped checks (``contract``) and the grader's diagnosis (its heuristics and
slips): a pattern that fits an array of too few, zero or constant entries fits by chance.
"""

from __future__ import annotations

import numpy as np

# A pattern needs at least this many informative entries (non-zero, not all equal) in the
# expected value: with 5 independent values a factor, sign or shift fits by chance with
# probability far below the tolerance.
MIN_ENTRIES = 5


def informative(want: np.ndarray, atol: float) -> bool:
    """Whether ``want`` carries enough distinct non-zero entries to support a pattern."""
    values = want[np.abs(want) > max(atol, 1e-12)]
    return values.size >= MIN_ENTRIES and bool(np.ptp(values.real) > max(atol, 1e-12))

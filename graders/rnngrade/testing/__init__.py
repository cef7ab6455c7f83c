"""``rnngrade.testing``: the public testing API, what public tests and teaching assistants import
(as ``numpy.testing`` is to NumPy's internals). Everything else in ``rnngrade`` may change.

Fixtures (from the pytest plugin the course's ``conftest.py`` registers):

- ``student``: the module named by ``STUDENT_MODULE = "rnn"`` in the test file, next to it,
  called through a ``ModuleProxy`` (in this process locally, so ``pdb`` works; in the grader the
  same fixture serves the submission under grading);
- ``vectors``: the lab's public test vectors (``fixtures/public/labN.npz``), a ``PublicVectors``;
- ``rng``: a NumPy Generator seeded from the test's id (the same numbers on every run).

Markers: ``@points(n)`` (or ``@pytest.mark.points(n)``): what a public test is worth in the
closing summary; ``@pytest.mark.outcome(...)``: a training run, run only with ``pytest --outcome``
(``progress(student, function, every, total)`` prints a line every ``every`` calls meanwhile).

Comparisons raise ``CheckFailure`` with a message that names the output, the shape, the dtype,
how many entries are off, the largest error and where, and the tolerance with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.harness.checks.causal import assert_causal, future_variants
from rnngrade.harness.checks.compare import CheckFailure, assert_close, compare
from rnngrade.harness.checks.feeding import check_on_caches, forward_problem
from rnngrade.harness.checks.gradcheck import numeric_gradient, relative_error, sample_indices
from rnngrade.harness.checks.outcome import progress
from rnngrade.harness.checks.structure import assert_outputs
from rnngrade.harness.checks.tolerance import EXACT, Tolerance, tolerance_for
from rnngrade.harness.checks.vectors import Case, PublicVectors
from rnngrade.harness.runner.base import (
    EXCEPTION,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    ArgRef,
    FunctionRef,
    StudentError,
)
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy

points = pytest.mark.points  # @points(2): this public test is worth 2 points


def load_student(path: str | Path) -> ModuleProxy:
    """The module at ``path`` behind a ``ModuleProxy``, called in this process (what the
    ``student`` fixture gives a test): ``load_student("assignments/lab1/rnn.py").softmax(x)``."""
    path = Path(path)
    runner = InProcessRunner.from_source(path.read_text(encoding="utf-8"), str(path),
                                         capture=False)
    return ModuleProxy(runner)


__all__ = [
    "EXACT",
    "EXCEPTION",
    "MISSING_FUNCTION",
    "NOT_IMPLEMENTED",
    "ArgRef",
    "Case",
    "CheckFailure",
    "FunctionRef",
    "ModuleProxy",
    "PublicVectors",
    "StudentError",
    "Tolerance",
    "assert_causal",
    "assert_close",
    "assert_outputs",
    "check_on_caches",
    "compare",
    "forward_problem",
    "future_variants",
    "load_student",
    "numeric_gradient",
    "points",
    "progress",
    "relative_error",
    "sample_indices",
    "tolerance_for",
]

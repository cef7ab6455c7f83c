"""The markers a test may carry, declared once, and their registration with pytest.

The student side registers the ones a public test may use (``points``, ``cuda``, ``outcome``);
the grader registers them all. ``rnngrade.lab_contract`` lists this declaration in the lab
contract (and ``docs/AUTHORING.md``'s table of markers). Plain data: ships with the public tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Marker:
    """``@pytest.mark.NAME``: how it is written (``form``), what it means, and whether a public
    test may carry it."""

    name: str
    form: str
    meaning: str
    public: bool

    @property
    def line(self) -> str:
        """What pytest's ``markers`` ini value holds for it (``pytest --markers`` shows it)."""
        return f"{self.form}: {self.meaning}"


LIMITS = Marker("limits", "limits(call_seconds=..., cpu_seconds=..., memory_bytes=..., ...)",
                "sandbox limits of this hidden test's calls, overriding its lab's (lab.yaml)",
                public=False)
OUTCOME = Marker("outcome", "outcome(wall=..., cpu=..., memory=..., catches=(...))",
                 "graded by outcome (a training run measured against a band), in a fresh worker "
                 "of its own", public=True)
CUDA = Marker("cuda", "cuda", "needs a CUDA device; skipped with the reason when none is present",
              public=True)
POINTS = Marker("points", "points(n)", "points this public test is worth (public tests only)",
                public=True)
MARKERS = (LIMITS, OUTCOME, CUDA, POINTS)


def register(config: pytest.Config, *markers: Marker) -> None:
    """Declare ``markers`` to pytest (so ``--strict-markers`` accepts them)."""
    for marker in markers:
        config.addinivalue_line("markers", marker.line)

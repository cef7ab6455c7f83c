"""Batches without grading: the local pool is replaced by one that returns made-up results
(full marks, or a submission that could not be loaded), so layout, roster and exports are tested
in milliseconds. Grading itself is tested in tests/batch."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

import pytest

import rnngrade.gradebook.batch as batch_module
from rnngrade.gradebook.batch import BatchOptions, BatchReport, run_batch
from rnngrade.gradebook.messages import Graded
from rnngrade.grading.rubric import load_rubric
from rnngrade.grading.scoring import not_graded
from rnngrade.labs import get_lab
from rnngrade.results.model import Outcome, Status

FULL = "print('full marks')\n"  # what an entry holds decides its made-up result
EMPTY = ""  # an empty file: "could not be loaded", 0 points


def made_up(lab_name: str, name: str, source: str) -> Graded:
    lab = get_lab(lab_name)
    rubric = load_rubric(lab.rubric_path())
    if source == FULL:
        result = not_graded(lab, rubric, name, "cpu", "", status=Status.GRADED)
        for test in result.tests:
            test.score, test.outcome, test.message = test.max_score, Outcome.PASSED, ""
        result.score = result.max_score
        return Graded(result.to_dict(), "made-up")
    result = not_graded(lab, rubric, name, "cpu", "the submission is empty")
    return Graded(result.to_dict(), "made-up")


class MadeUpPool:
    """Stands in for ``LocalPool``: no process, no grading."""

    def __init__(self, spec, workers: int, timeout: float | None = None) -> None:
        self.lab = spec.lab

    def run(self, tasks: Iterable[tuple[str, dict]]):
        for key, wire in tasks:
            data = wire.get("data", b"") if isinstance(wire, dict) else b""
            yield key, made_up(self.lab, key, bytes(data).decode())


@pytest.fixture
def made_up_grading(monkeypatch):
    monkeypatch.setattr(batch_module, "LocalPool", MadeUpPool)


def entries(folder: Path, **students: str) -> Path:
    """A submissions folder: one ``<id>.py`` per student holding ``FULL`` or ``EMPTY``."""
    folder.mkdir(parents=True, exist_ok=True)
    for student, source in students.items():
        (folder / f"{student}.py").write_text(source)
    return folder


def batch(folder: Path, lab: str, out: Path, **options) -> BatchReport:
    return run_batch([folder], BatchOptions(lab, out, jobs=1, inprocess=True, **options))


def read_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))

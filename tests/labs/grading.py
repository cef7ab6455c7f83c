"""What every lab's end-to-end grading tests share: grading a source text in-process, and the
verdicts expected of the reference (full marks) and of the untouched stub (0, "not implemented")."""

from __future__ import annotations

from pathlib import Path

from rnngrade.grading.engine import grade
from rnngrade.labs import Lab
from rnngrade.results.model import GradeResult


def grade_lab_source(tmp_path: Path, lab: Lab, source: str) -> GradeResult:
    """Grade ``source`` as the lab's module, in-process on the CPU."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / lab.filename).write_text(source, encoding="utf-8")
    return grade(folder, lab.name, device="cpu", inprocess=True)


def assert_full_marks(result: GradeResult) -> None:
    assert result.max_score > 0
    assert result.score == result.max_score, [(t.name, t.message) for t in result.tests
                                              if t.score < t.max_score]


def assert_stub_verdict(result: GradeResult) -> None:
    """0 points, and every test that ran says the function is not implemented yet."""
    assert result.score == 0 and result.max_score > 0
    ran = [t for t in result.tests if t.outcome != "skipped"]
    assert ran and all("not implemented yet" in t.message for t in ran), [
        (t.name, t.message) for t in ran if "not implemented yet" not in t.message]

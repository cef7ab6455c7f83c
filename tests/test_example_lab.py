"""The example lab of docs/AUTHORING.md (docs/example_lab/, a course holding lab99 alone) works
as the recipe says: copied to a course of its own and generated, ``rnngrade validate`` passes,
the reference gets full marks, the untouched stub 0 with "not implemented", each mutant loses
points and is named (only tests of its own function lose points), its quick cases read, and its
public tests score the stub 0 and the reference full marks."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from rnngrade.authoring.generate import write_generated
from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import LABS, discover_labs, get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import GradeResult
from rnngrade.validate import validate_lab

from .conftest import run_public_inprocess
from .course_env import course_at
from .labs.grading import (
    assert_caught_and_named,
    assert_full_marks,
    assert_stub_verdict,
    quick_cases,
)

ROOT = course_root()
EXAMPLE = ROOT / "docs" / "example_lab"
LAB = "lab99"


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example lab copied into a course of its own, its files generated as
    ``rnngrade generate --lab lab99`` writes them, and made this process's course."""
    root = tmp_path_factory.mktemp("example") / "course"
    shutil.copytree(EXAMPLE, root)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, root / name)
    written = write_generated(discover_labs(root)[LAB], root)
    assert {p.relative_to(root).as_posix() for p in written} >= {
        "assignments/lab99/ema.py", "assignments/lab99/lab99.ipynb", "fixtures/public/lab99.npz",
        "fixtures/submissions/lab99/reference/ema.py"}
    try:
        with course_at(root):
            yield root
    finally:
        LABS.reload()


def test_the_example_is_not_a_lab_of_the_course():
    assert LAB not in discover_labs(ROOT)
    assert list(discover_labs(EXAMPLE)) == [LAB]


def test_rnngrade_validate_passes(course):
    report = validate_lab(get_lab(LAB), device="cpu", inprocess=True)
    assert report.ok, report.problems
    assert report.reference is not None and report.stub is not None
    assert_full_marks(report.reference)
    assert_stub_verdict(report.stub)
    assert {row.name for row in report.mutants if row.caught and row.named} == {
        "half_life_as_time_constant", "weights_swapped"}
    assert quick_cases(get_lab(LAB)).mutants == ("weights_swapped",)


def _graded(folder: Path, source: str) -> GradeResult:
    lab = get_lab(LAB)
    folder.mkdir()
    (folder / lab.filename).write_text(source, encoding="utf-8")
    return grade(folder, LAB, device="cpu", inprocess=True)


def test_the_reference_stub_and_each_mutant_grade_as_the_recipe_says(course, tmp_path):
    lab = get_lab(LAB)
    reference = lab.solution_path().read_text(encoding="utf-8")
    assert_full_marks(_graded(tmp_path / "reference", reference))
    assert_stub_verdict(_graded(tmp_path / "stub", lab.stub_path().read_text(encoding="utf-8")))
    mutants = load_mutant_table(lab.mutants_path()).mutants
    assert len(mutants) == 2
    for mutant in mutants:
        result = _graded(tmp_path / mutant.name, mutant.apply(reference))
        assert_caught_and_named(result, mutant.name)
        lost = {t.name for t in result.tests if t.score < t.max_score}
        assert all(name.startswith(f"test_{mutant.function}_") for name in lost), lost


@pytest.mark.parametrize("which, points", [("stub", "0/4"), ("reference", "4/4")])
def test_the_public_tests_score_the_stub_0_and_the_reference_full_marks(course, which, points,
                                                                          capsys, monkeypatch):
    """``pytest assignments/lab99`` as a student runs it (on the stub), and on the reference in
    the stub's place."""
    if which == "reference":
        stub = course / "assignments" / LAB / "ema.py"
        saved = stub.read_bytes()
        shutil.copy2(course / "fixtures" / "submissions" / LAB / "reference" / "ema.py", stub)
    try:
        code, output = run_public_inprocess(capsys, monkeypatch, course, LAB)
    finally:
        if which == "reference":
            stub.write_bytes(saved)
    assert f"{LAB}: {points} public points" in output, output[-3000:]
    assert code == (0 if which == "reference" else 1)

"""What every lab's end-to-end grading tests share: grading a source text in-process, the verdicts
expected of the reference (full marks), of the untouched stub (0, "not implemented") and of a
known mistake (loses points and is named, never misnamed), and what a lab grades in the
default suite (its ``quick_cases.yaml``)."""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rnngrade.diagnosis.mutants import Mutant, load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import Lab, get_lab
from rnngrade.results.model import GradeResult
from rnngrade.yaml_files import load_mapping

QUICK_CASES = "quick_cases.yaml"  # in the lab's suite folder: graders/suites/labN/


class QuickCasesError(Exception):
    """A lab's quick_cases.yaml that does not say what to grade in the default suite."""


@dataclass(frozen=True)
class QuickCases:
    """What tests/labs/test_lab_grading.py grades of a lab in the default suite; the rest of it
    runs marked slow (docs/AUTHORING.md, "Quick cases")."""

    reference: bool  # the reference's full marks
    stub: bool  # the untouched stub's 0
    mutants: tuple[str, ...]  # known mistakes caught and named (every one runs marked slow)
    outcome: bool  # graded with the tests graded by outcome (off: they are listed as not run)


def quick_cases(lab: Lab) -> QuickCases:
    """The lab's ``quick_cases.yaml``, checked against its mutant table."""
    path = lab.suite_dir() / QUICK_CASES
    if not path.exists():
        raise QuickCasesError(f"{path}: missing; it says what the default test suite grades of "
                              f"{lab.name} (docs/AUTHORING.md, \"Quick cases\")")
    data = load_mapping(path, QuickCasesError,
                        "a mapping with reference, stub, mutants and optionally outcome")
    unknown = set(data) - {"reference", "stub", "mutants", "outcome"}
    if unknown:
        raise QuickCasesError(f"{path}: unknown field(s) {sorted(unknown)}")
    flags = {key: data.get(key, default) for key, default in
             (("reference", True), ("stub", True), ("outcome", True))}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise QuickCasesError(f"{path}: {key}: expected true or false, found {value!r}")
    names = data.get("mutants") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise QuickCasesError(f"{path}: mutants: expected a list of mutant names, found "
                              f"{names!r}")
    known = {m.name for m in mutants(lab.name)}
    if set(names) - known:
        raise QuickCasesError(f"{path}: mutants: {sorted(set(names) - known)} not in "
                              f"{lab.name}'s mutants.py")
    return QuickCases(flags["reference"], flags["stub"], tuple(names), flags["outcome"])


@functools.cache
def mutants(lab_name: str) -> tuple[Mutant, ...]:
    """The lab's mutant table."""
    return tuple(load_mutant_table(get_lab(lab_name).mutants_path()).mutants)


def grade_lab_source(tmp_path: Path, lab: Lab, source: str, *, outcome: bool = True
                     ) -> GradeResult:
    """Grade ``source`` as the lab's module, in-process on the CPU."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / lab.filename).write_text(source, encoding="utf-8")
    return grade(folder, lab.name, device="cpu", inprocess=True, outcome=outcome)


@functools.cache
def graded(lab_name: str, which: str, outcome: bool) -> GradeResult:
    """The lab's reference (``which="reference"``) or untouched stub (``"stub"``) graded, once
    per test process: the generic test and a lab's own tests of the same grading share it."""
    lab = get_lab(lab_name)
    path = {"reference": lab.solution_path, "stub": lab.stub_path}[which]()
    with tempfile.TemporaryDirectory(prefix=f"rnngrade-{which}-") as tmp:
        return grade_lab_source(Path(tmp), lab, path.read_text(encoding="utf-8"),
                                outcome=outcome)


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


def assert_caught_and_named(result: GradeResult, mistake: str) -> None:
    """The known mistake ``mistake`` loses points, a test it fails names it, and no test it fails
    names another mistake instead. (A failing test may name none: the grader names a mistake
    only with evidence, as ``rnngrade validate`` requires.)"""
    assert result.score < result.max_score, f"{mistake} keeps full marks"
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    names = [(t, {d.name for d in t.diagnosis}) for t in failing]
    assert any(mistake in named for _, named in names), [
        (t.name, t.diagnosis, t.message[:300]) for t in failing]
    misnamed = [(t.name, t.diagnosis, t.message[:300]) for t, named in names
                if named and mistake not in named]
    assert not misnamed, misnamed

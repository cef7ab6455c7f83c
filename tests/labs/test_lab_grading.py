"""Every lab of the registry graded end to end (in-process, on the CPU): the reference gets full
marks, the untouched stub 0 with "not implemented", and each known mistake (mutant) loses points
and is named in the diagnosis of a test it fails, and no test it fails names another instead.

Each lab says in ``graders/suites/labN/quick_cases.yaml`` what of this runs in the default suite
(its representative mutants; whether its reference and stub are quick enough; whether its tests
graded by outcome, the training runs, take part); the rest, and every mutant, is marked slow. A
lab's own end-to-end tests are beside this file, in ``test_labN_*.py``."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from rnngrade.diagnosis.mutants import Mutant
from rnngrade.errors import GraderError
from rnngrade.labs import Lab, available_labs
from rnngrade.validate_outcomes import outcome_specs

from .grading import (
    QuickCases,
    QuickCasesError,
    assert_caught_and_named,
    assert_full_marks,
    assert_stub_verdict,
    grade_lab_source,
    graded,
    mutants,
    quick_cases,
)

LABS = available_labs()
SLOW = pytest.mark.slow
pytestmark = pytest.mark.usefixtures("one_thread")  # as a grading worker computes


def _cases(lab: Lab) -> QuickCases | None:
    """The lab's quick cases, None when its file is wrong (test_each_lab_declares_its_quick_cases
    says why)."""
    try:
        return quick_cases(lab)
    except (QuickCasesError, GraderError):  # reported by its own test, not at collection
        return None


CASES = {lab.name: _cases(lab) for lab in LABS}
LABS_BY_NAME = {lab.name: lab for lab in LABS}


def _lab_params(which: str) -> list[Any]:
    """One parameter per lab, marked slow unless the lab's quick cases grade ``which``."""
    return [pytest.param(lab, id=lab.name,
                         marks=() if (c := CASES[lab.name]) and getattr(c, which) else SLOW)
            for lab in LABS]


@functools.cache
def catching(lab_name: str) -> frozenset[str]:
    """The mutants the lab's tests graded by outcome catch: those graded with them on, as
    ``rnngrade validate`` grades them (the others' training runs would show nothing)."""
    return frozenset(name for spec in outcome_specs(LABS_BY_NAME[lab_name]).values()
                     for name in spec.catches)


def test_the_course_has_labs():
    assert LABS


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.name)
def test_each_lab_declares_its_quick_cases(lab):
    quick_cases(lab)  # raises QuickCasesError naming the file and the field to fix


@pytest.mark.parametrize("lab", _lab_params("reference"))
def test_reference_gets_full_marks(lab):
    cases = quick_cases(lab)
    result = graded(lab.name, "reference", cases.outcome)
    assert_full_marks(result)
    if not cases.outcome:  # the training runs listed as not run, worth nothing here
        runs = [t for t in result.tests if "not run" in t.message]
        assert runs and all(t.outcome == "skipped" and t.max_score == 0 for t in runs)


@pytest.mark.parametrize("lab", _lab_params("stub"))
def test_stub_scores_zero_and_says_not_implemented(lab):
    assert_stub_verdict(graded(lab.name, "stub", quick_cases(lab).outcome))


def _mutant_params(quick_only: bool) -> list[Any]:
    return [pytest.param(lab, mutant, id=f"{lab.name}-{mutant.name}")
            for lab in LABS for mutant in mutants(lab.name)
            if not quick_only or ((c := CASES[lab.name]) and mutant.name in c.mutants)]


def _grade_mutant(tmp_path: Path, lab: Lab, mutant: Mutant, outcome: bool) -> None:
    source = mutant.apply(lab.solution_path().read_text(encoding="utf-8"))
    assert_caught_and_named(grade_lab_source(tmp_path, lab, source, outcome=outcome),
                            mutant.name)


@pytest.mark.parametrize("lab, mutant", _mutant_params(quick_only=True))
def test_representative_mutants_are_caught_and_named(tmp_path, lab, mutant):
    _grade_mutant(tmp_path, lab, mutant, quick_cases(lab).outcome)


@SLOW
@pytest.mark.parametrize("lab, mutant", _mutant_params(quick_only=False))
def test_every_mutant_loses_points_and_is_named(tmp_path, lab, mutant):
    _grade_mutant(tmp_path, lab, mutant, mutant.name in catching(lab.name))

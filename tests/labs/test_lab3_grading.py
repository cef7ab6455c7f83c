"""Grading lab3 end to end (in-process): the reference gets full marks, the untouched stub 0, and
every known mistake (mutant) loses points and is named in the diagnosis of each test it fails.

The full mutant sweep is marked slow (about a second per mutant); a few representative mutants run
in the default suite."""

import pytest

from rnngrade.diagnosis.mutants import Mutant, load_mutant_table
from rnngrade.labs import get_lab

from .grading import assert_full_marks, assert_stub_verdict, grade_lab_source

LAB = get_lab("lab3")
MUTANTS = load_mutant_table(LAB.suite_dir() / "mutants.py").mutants
QUICK = ("dc_not_carried_across_time", "gate_order_ifog", "forget_bias_first_layer_only")


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


def test_reference_gets_full_marks(tmp_path):
    result = grade_source(tmp_path, LAB.solution_path().read_text(encoding="utf-8"))
    assert_full_marks(result)


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    result = grade_source(tmp_path, LAB.stub_path().read_text(encoding="utf-8"))
    assert_stub_verdict(result)


def assert_caught_and_named(tmp_path, mutant: Mutant) -> None:
    result = grade_source(tmp_path, mutant.apply(LAB.solution_path().read_text(encoding="utf-8")))
    assert result.score < result.max_score, f"{mutant.name} keeps full marks"
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    unnamed = [(t.name, t.diagnosis, t.message[:300]) for t in failing
               if not any(d.name == mutant.name for d in t.diagnosis)]
    assert not unnamed, unnamed


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.name in QUICK], ids=lambda m: m.name)
def test_representative_mutants_are_caught_and_named(tmp_path, mutant):
    assert_caught_and_named(tmp_path, mutant)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_loses_points_and_is_named(tmp_path, mutant):
    assert_caught_and_named(tmp_path, mutant)

"""Grading lab4 end to end (in-process): the reference gets full marks, the stub 0, and known
mistakes are named in the feedback. The full mutant sweep is `rnngrade validate --lab lab4`."""

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .grading import assert_full_marks, assert_stub_verdict, grade_lab_source

LAB = get_lab("lab4")
SUBMISSIONS = course_root() / "fixtures" / "submissions" / LAB.name


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


def test_reference_gets_full_marks():
    result = grade(SUBMISSIONS / "reference", LAB.name, device="cpu", inprocess=True)
    assert_full_marks(result)


def test_stub_scores_zero_and_says_not_implemented():
    result = grade(SUBMISSIONS / "stub", LAB.name, device="cpu", inprocess=True)
    assert_stub_verdict(result)


@pytest.mark.parametrize("mutant, failing_test", [
    # only h_n changes: the padded steps still update the state
    ("padded_steps_update_state", "test_gru_layer_vs_torch"),
    # invisible when a_prev = 0: caught by the other backward cases
    ("backward_reset_path_dropped", "test_gru_cell_backward_central_differences"),
])
def test_mutant_loses_points_and_is_named(tmp_path, mutant, failing_test):
    table = {m.name: m for m in load_mutant_table(LAB.suite_dir() / "mutants.py").mutants}
    source = table[mutant].apply(LAB.solution_path().read_text(encoding="utf-8"))
    result = grade_source(tmp_path, source)
    assert result.score < result.max_score
    test = next(t for t in result.tests if t.name == failing_test)
    assert test.score < test.max_score
    assert any(d.name == mutant for d in test.diagnosis), test.diagnosis

"""lab10: grading end to end in-process: the reference gets full marks and the stub 0 (the
training runs switched off; they are slow tests here and `rnngrade validate --lab lab10` runs
them), and a mistake in one function costs only that function's tests."""

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table, strip_markers
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .grading import assert_full_marks, assert_stub_verdict

LAB = get_lab("lab10")
SUBMISSIONS = course_root() / "fixtures" / "submissions" / LAB.name
OUTCOME_TESTS = {"test_lstm_forget_bias_5_solves_lag_25": 3,
                 "test_lstm_forget_bias_1_stays_at_chance": 2,
                 "test_diagonal_linear_solves_lag_100": 3}
pytestmark = pytest.mark.usefixtures("one_thread")


def test_reference_full_marks_and_stub_zero_without_the_training_runs():
    result = grade(SUBMISSIONS / "reference", LAB.name, device="cpu", inprocess=True,
                   outcome=False)
    assert_full_marks(result)
    for name, points in OUTCOME_TESTS.items():
        run = next(t for t in result.tests if t.name == name)
        assert run.outcome == "skipped" and run.max_score == 0
        assert "not run" in run.message and f"{points} points" in run.message
    stub = grade(SUBMISSIONS / "stub", LAB.name, device="cpu", inprocess=True, outcome=False)
    assert_stub_verdict(stub)
    assert stub.max_score == result.max_score


@pytest.mark.slow
def test_a_wrong_half_life_costs_only_the_closed_forms(tmp_path):
    """half_life as the time constant: forget_bias_half_life, gru_half_life and lru_half_life
    call it, and keep their points (the reference's half_life stands in for them)."""
    mutant = next(m for m in load_mutant_table(LAB.suite_dir() / "mutants.py")
                  if m.name == "half_life_is_time_constant")
    source = mutant.apply(strip_markers(LAB.solution_path().read_text(encoding="utf-8")))
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / LAB.filename).write_text(source, encoding="utf-8")
    result = grade(folder, LAB.name, device="cpu", inprocess=True, outcome=False)
    lost = {t.name: (t.score, t.max_score) for t in result.tests if t.score < t.max_score
            and t.outcome != "skipped"}
    assert set(lost) == {"test_closed_forms"}, lost
    score, max_score = lost["test_closed_forms"]
    assert score == pytest.approx(max_score * 7 / 8)  # one of the eight functions is wrong

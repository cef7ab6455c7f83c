"""Grading lab8 end to end (in-process): a leak loses points, is named and described in the
probe's own words, and a file without Part B keeps every Part A point. The reference, stub and
mutants are graded by test_lab_grading.py."""

import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import get_lab

from .grading import grade_lab_source, mutants

LAB = get_lab("lab8")


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


@pytest.mark.slow
@pytest.mark.parametrize("mutant, failing_test, words", [
    ("scaler_on_whole_series", "test_fit_scaler_causal",
     "your scaler reads values after the origin"),
    ("window_includes_target", "test_make_windows_causal", "your window includes its own target"),
    ("rolling_centred", "test_rolling_stat_causal", "reads values after it"),
])
def test_leak_loses_points_is_named_and_described(tmp_path, mutant, failing_test, words):
    table = {m.name: m for m in mutants(LAB.name)}
    source = table[mutant].apply(LAB.solution_path().read_text(encoding="utf-8"))
    result = grade_source(tmp_path, source)
    assert result.score < result.max_score
    failed = {t.name: t for t in result.tests if t.score < t.max_score}
    assert failing_test in failed and words in failed[failing_test].message
    assert any(d.name == mutant for t in failed.values() for d in t.diagnosis)


PART_B = ("test_lstm_forecaster_forward", "test_train_forecaster_updates",
          "test_forecaster_training_reproduces_the_lesson")


@pytest.mark.slow
def test_a_submission_without_part_b_keeps_every_part_a_point(tmp_path):
    """A lab 8 file written before Part B existed: full marks on Part A, and Part B's tests
    alone say its functions are missing."""
    source = strip_markers(LAB.solution_path().read_text(encoding="utf-8"))
    part_a = source.split("# ------------------------------------------------------------------ "
                          "Part B")[0]
    assert "def train_forecaster" not in part_a and "def interval_coverage" in part_a
    result = grade_source(tmp_path, part_a)
    lost = {t.name: t for t in result.tests if t.score < t.max_score}
    assert set(lost) == set(PART_B), [(t.name, t.message) for t in lost.values()]
    for name, function in zip(PART_B, ("lstm_forecaster_forward", "train_forecaster",
                                       "train_forecaster")):
        assert lost[name].score == 0 and function in lost[name].message, lost[name].message

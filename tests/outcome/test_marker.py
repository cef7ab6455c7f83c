"""The outcome marker: its limits, its switches (``--no-outcome``, the rubric's ``outcome:
false``), and what it records."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.errors import RubricError, SuiteError
from rnngrade.grading.limits import limits_for
from rnngrade.grading.outcome import OutcomeRun, outcome_spec
from rnngrade.grading.rubric import parse_rubric
from rnngrade.labs import get_lab


class FakeItem:
    nodeid = "graders/suites/lab9/test_x.py::test_run"

    def __init__(self, **markers) -> None:
        self.markers = markers
        self.user_properties: list = []

    def iter_markers(self, name: str):
        mark = self.markers.get(name)
        return iter([mark] if mark is not None else [])


def test_the_marker_gives_its_own_limits_and_a_limits_marker_still_wins():
    lab = get_lab("lab9")
    item = FakeItem(outcome=pytest.mark.outcome(wall=90, cpu=120, memory="2 GiB",
                                                catches=("a",)).mark)
    limits = limits_for(lab, item)
    assert (limits.call_seconds, limits.cpu_seconds, limits.memory_bytes) == (90.0, 120, 2 << 30)
    assert outcome_spec(item).catches == ("a",)
    both = FakeItem(outcome=pytest.mark.outcome(wall=90).mark,
                    limits=pytest.mark.limits(call_seconds=30).mark)
    assert limits_for(lab, both).call_seconds == 30.0


@pytest.mark.parametrize("marker", [pytest.mark.outcome(90), pytest.mark.outcome(wall=-1),
                                    pytest.mark.outcome(catches="one"),
                                    pytest.mark.outcome(threads=1)])
def test_a_malformed_marker_is_the_suite_s_fault(marker):
    with pytest.raises(SuiteError):
        limits_for(get_lab("lab9"), FakeItem(outcome=marker.mark))


def test_the_rubric_switch():
    text = "lab: lab9\noutcome: false\ntests:\n  test_a: {points: 1}\n"
    assert parse_rubric(text, Path("rubric.yaml")).outcome is False
    assert parse_rubric(text.replace("outcome: false\n", ""), Path("rubric.yaml")).outcome
    with pytest.raises(RubricError, match="outcome must be true or false"):
        parse_rubric(text.replace("false", "sometimes"), Path("rubric.yaml"))


def test_measure_checks_the_band_and_verdict_quotes_every_miss():
    from rnngrade.harness.checks.compare import CheckFailure

    run = OutcomeRun(FakeItem(), seed=0, device="cpu")  # type: ignore[arg-type]
    assert run.measure("loss", 0.41, bound="≤", threshold=0.42).passed
    assert not run.measure("loss", float("nan"), bound="≤", threshold=0.42).passed
    assert not run.measure("norm", 5.0, bound="<", threshold=5.0).passed
    assert run.measure("share", 0.9, bound="≥", threshold=0.9, unit="%").passed
    with pytest.raises(CheckFailure) as failure:
        run.verdict()
    assert "loss no figure" in failure.value.message and "norm 5.000" in failure.value.message
    assert len(run.item.user_properties) == 4
    with pytest.raises(SuiteError):
        run.measure("x", 1.0, bound="=", threshold=1.0)


@pytest.mark.slow
def test_a_course_that_switches_outcome_tests_off_lists_them_as_not_run(course_copy):
    from rnngrade.grading.engine import grade

    from ..course_env import course_at

    rubric = course_copy / "graders" / "suites" / "lab9" / "rubric.yaml"
    rubric.write_text(rubric.read_text().replace("visibility:", "outcome: false\nvisibility:", 1))
    with course_at(course_copy):
        result = grade(course_copy / "fixtures" / "submissions" / "lab9" / "stub", "lab9",
                       device="cpu", inprocess=True)
    run = next(t for t in result.tests if t.name == "test_training_reaches_band")
    assert run.outcome == "skipped" and run.score == run.max_score == 0
    assert run.message == ("not run: tests graded by outcome are switched off for this course "
                           "(5 points, not counted)")
    assert all(t.outcome == "failed" and t.max_score > 0 for t in result.tests if t is not run)

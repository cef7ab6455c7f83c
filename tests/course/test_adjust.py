"""From the grader's score to the final one: overrides, the late penalty, points scaling."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rnngrade.course.adjust import Override, adjust, lateness
from rnngrade.course.config import load_course
from rnngrade.course.times import SubmissionTime, TimeSource
from rnngrade.results.model import GradeResult, Outcome, TestResult

UTC = dt.timezone.utc
DUE = dt.datetime(2026, 9, 21, 23, 59, tzinfo=UTC)


@pytest.fixture
def course(tmp_path: Path):
    path = tmp_path / "course.yaml"
    path.write_text("late_policy: {penalty_per_day: 10, max_days: 3, grace_minutes: 15}\n"
                    "labs:\n  lab1: {due: 2026-09-21 23:59, points: 10}\n"
                    "extensions:\n  alice: {lab1: 36h}\n")
    return load_course(path)


def at(**delta: float) -> SubmissionTime:
    return SubmissionTime(DUE + dt.timedelta(**delta), TimeSource.MANIFEST)


def result(*scores: float) -> GradeResult:
    tests = [TestResult(f"test_{i}", f"check {i}", s, 5.0, Outcome.PASSED if s == 5 else
                        Outcome.FAILED, "visible") for i, s in enumerate(scores)]
    return GradeResult("lab1", "RNN forward", "sub.py", sum(scores), 5.0 * len(scores), 1.0,
                       tests)


@pytest.mark.parametrize("delta, days, percent, rejected", [
    (dict(minutes=-5), 0, 0, False),
    (dict(minutes=15), 0, 0, False),  # within the grace minutes
    (dict(minutes=16), 1, 10, False),
    (dict(hours=24), 1, 10, False),
    (dict(hours=24, seconds=1), 2, 20, False),  # a started day counts
    (dict(days=3), 3, 30, False),
    (dict(days=3, minutes=1), 4, 100, True),  # past max_days: scores 0
])
def test_late_days_are_started_days_after_the_grace_minutes(course, delta, days, percent,
                                                            rejected):
    late = lateness(course, "bob", "lab1", at(**delta))
    assert (late.days, late.penalty_percent, late.rejected) == (days, percent, rejected)


def test_an_extension_moves_the_due_time(course):
    late = lateness(course, "alice", "lab1", at(hours=30))
    assert late.days == 0 and late.due == DUE + dt.timedelta(hours=36)
    assert late.extension == "extended by 36 hours"
    assert lateness(course, "alice", "lab1", at(hours=37)).days == 1


def test_the_penalty_is_a_share_of_the_labs_points_and_is_shown(course):
    shown, numbers = adjust(result(5, 5, 2), [], lateness(course, "bob", "lab1", at(hours=30)),
                            course.plan("lab1"))
    assert numbers.raw_score == 12 and numbers.late_days == 2
    assert numbers.penalty == 3.0  # 20% of 15 points
    assert numbers.final == 9.0 and shown.score == 9.0
    assert numbers.points_possible == 10 and numbers.final_points == 6.0  # scaled to 10
    text = "\n".join(shown.notes)
    assert "2 days late" in text and "−20%" in text and "the submissions manifest" in text
    # every number the student reads is in the course's points (the lab counts 10 of them)
    assert "8 as graded, 6 of 10 points in the end" in text and "(−2)" in text
    assert (shown.course_score, shown.course_max) == (6.0, 10)


def test_the_staffs_total_is_told_in_the_courses_points(course):
    total = Override(2, "bob", "lab1", "", 12.0, "oral exam", "prof", "2026-10-01T10:00:00")
    shown, numbers = adjust(result(5, 5, 2), [total], None, course.plan("lab1"))
    assert numbers.final == 12.0 and numbers.final_points == 8.0
    assert "set this lab's score to 8 of 10 points: oral exam" in "\n".join(shown.notes)


def test_without_scaling_the_feedback_keeps_the_labs_points():
    shown, numbers = adjust(result(5, 5, 2), [], None, None)
    assert shown.course_max is None and numbers.points_possible == 15


def test_the_penalty_never_takes_the_score_below_zero(course):
    _, numbers = adjust(result(1, 0, 0), [], lateness(course, "bob", "lab1", at(days=3)),
                        course.plan("lab1"))
    assert numbers.penalty == 1.0 and numbers.final == 0.0


def test_overrides_of_a_test_and_of_the_total_come_before_the_penalty(course):
    test_override = Override(1, "bob", "lab1", "test_2", 4.0, "typo in the shape", "prof",
                             "2026-09-30T10:00:00+00:00")
    shown, numbers = adjust(result(5, 5, 2), [test_override],
                            lateness(course, "bob", "lab1", at(minutes=-1)), None)
    assert numbers.score == 14.0 and numbers.final == 14.0 and shown.tests[2].score == 4.0
    assert numbers.overrides == [test_override] and "typo in the shape" in shown.notes[0]
    total = Override(2, "bob", "lab1", "", 10.0, "oral exam", "prof", "2026-10-01T10:00:00")
    shown, numbers = adjust(result(5, 5, 2), [test_override, total],
                            lateness(course, "bob", "lab1", at(hours=2)), None)
    assert numbers.score == 10.0 and numbers.penalty == 1.5 and numbers.final == 8.5
    assert "oral exam" in "\n".join(shown.notes)


def test_an_override_of_a_test_the_result_lacks_is_set_aside(course):
    stale = Override(3, "bob", "lab1", "test_gone", 5.0, "x", "prof", "2026-10-01")
    shown, numbers = adjust(result(5, 0), [stale], None, None)
    assert numbers.stale == [stale] and numbers.final == 5.0 and shown.notes == []


def test_the_graded_result_itself_is_not_changed(course):
    original = result(5, 0)
    adjust(original, [Override(1, "bob", "lab1", "test_1", 5.0, "x", "p", "2026-10-01")],
           lateness(course, "bob", "lab1", at(days=2)), course.plan("lab1"))
    assert original.score == 5.0 and original.tests[1].score == 0 and original.notes == []

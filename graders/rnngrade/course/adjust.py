"""From the grader's score to the final one: the staff's overrides, then the late penalty, then
the course's points scaling.

- An override of one test replaces that test's points; an override without a test replaces the
  lab's total (both before the late penalty).
- The late penalty is ``penalty_per_day`` percent of the lab's points per started day after the
  (possibly extended) due time; a submission within ``grace_minutes`` of it is on time, one more
  than ``max_days`` late scores 0. The score never goes below 0.
- ``points`` in the course file scales the final score to what the lab is worth in the course.

The student's reports show the adjusted result: its score is the final one (in the lab's own
points, as its tests are; ``course_score`` / ``course_max`` give it in the course's points, which
the feedback leads with) and its notes say what changed it and why, in the course's points.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from rnngrade.course.config import Course, LabPlan
from rnngrade.course.times import SubmissionTime, TimeSource, show_time
from rnngrade.gradebook.points import in_course_points
from rnngrade.harness.formatting import format_points
from rnngrade.results.model import GradeResult, Status

DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Override:
    """A score set by the course staff (``test`` "" for the lab's total)."""

    id: int
    student: str
    lab: str
    test: str
    score: float
    comment: str
    by: str
    at: str


@dataclass(frozen=True)
class Lateness:
    submitted_at: dt.datetime | None
    source: str  # a TimeSource value, "" when unknown
    due: dt.datetime | None
    extension: str  # "" or how the due time was extended
    days: int  # started days late (0: on time)
    penalty_percent: float  # of the lab's points
    rejected: bool  # later than the policy's maximum: scores 0
    zone: dt.tzinfo = dt.timezone.utc  # the course's time zone, which times are shown in


@dataclass
class Adjusted:
    """The numbers of grades.csv and the roster table."""

    raw_score: float
    max_score: float
    score: float  # after overrides, before the late penalty
    late_days: int
    penalty: float  # points taken off for lateness
    final: float  # in the lab's own points
    points_possible: float  # what the lab is worth in the course
    final_points: float  # final, scaled to points_possible
    overrides: list[Override] = field(default_factory=list)
    stale: list[Override] = field(default_factory=list)  # name a test the result lacks
    notes: list[str] = field(default_factory=list)  # what the student is told

    def in_course(self, points: float) -> float:
        """``points`` of the lab's rubric in the course's points."""
        return in_course_points(points, self.max_score, self.points_possible)


def lateness(course: Course, student: str, lab: str,
             when: SubmissionTime | None) -> Lateness:
    """How late ``student``'s submission of ``lab`` was, under the course's policy."""
    plan = course.plan(lab)
    due, extension = course.due_for(student, lab)
    at = when.at if when else None
    source = when.source.value if when else ""
    if due is None or at is None:
        return Lateness(at, source, due, extension, 0, 0.0, False, course.zone)
    over = at - due
    policy = plan.late
    if over <= dt.timedelta(minutes=policy.grace_minutes) or over <= dt.timedelta(0):
        return Lateness(at, source, due, extension, 0, 0.0, False, course.zone)
    days = math.ceil(over / DAY)
    rejected = policy.max_days is not None and days > policy.max_days
    percent = 100.0 if rejected else min(100.0, days * policy.penalty_per_day)
    return Lateness(at, source, due, extension, days, percent, rejected, course.zone)


def adjust(result: GradeResult, overrides: list[Override], late: Lateness | None,
           plan: LabPlan | None) -> tuple[GradeResult, Adjusted]:
    """The result as the student should see it, and its numbers (``result`` is unchanged)."""
    shown = GradeResult.from_dict(result.to_dict())
    numbers = Adjusted(result.score, result.max_score, result.score, 0, 0.0, result.score,
                       result.max_score, result.score)
    if result.status == Status.GRADER_ERROR:  # not graded: nothing to adjust yet
        return shown, numbers
    tests = {t.name: t for t in shown.tests}
    scaled = plan is not None and plan.points is not None and result.max_score > 0
    possible = plan.points if scaled and plan is not None and plan.points is not None \
        else result.max_score

    def course(points: float) -> str:
        return format_points(in_course_points(points, result.max_score, possible))

    total: Override | None = None
    for item in overrides:
        if not item.test:
            total = item  # the latest one counts (overrides come oldest first)
        elif item.test in tests:
            test = tests[item.test]
            numbers.notes.append(
                f"The course staff changed the points of “{test.title}” from "
                f"{format_points(test.score)} to {format_points(item.score)} of "
                f"{format_points(test.max_score)}: {item.comment} ({item.by}, {item.at[:10]})")
            test.score = item.score
            numbers.overrides.append(item)
        else:
            numbers.stale.append(item)
    score = round(sum(t.score for t in shown.tests), 4) if numbers.overrides else result.score
    if total is not None:
        numbers.notes.append(
            f"The course staff set this lab's score to {course(total.score)} of "
            f"{format_points(possible)} points: {total.comment} ({total.by}, {total.at[:10]})")
        score = total.score
        numbers.overrides.append(total)
    numbers.score = score
    if late is not None and late.submitted_at is not None:
        numbers.notes.append(_late_note(late, possible))
        numbers.late_days = late.days
        numbers.penalty = round(min(score, result.max_score * late.penalty_percent / 100), 4)
    numbers.final = round(max(0.0, score - numbers.penalty), 4)
    if numbers.penalty or numbers.overrides:
        numbers.notes.append(f"Score: {course(result.score)} as graded, "
                             f"{course(numbers.final)} of {format_points(possible)} points "
                             "in the end.")
    numbers.points_possible = possible
    numbers.final_points = in_course_points(numbers.final, result.max_score, possible)
    if scaled:
        numbers.notes.append(f"This lab counts for {format_points(possible)} points of the "
                             f"course, every score above is in them; its tests below add up to "
                             f"{format_points(result.max_score)} points of their own.")
        shown.course_score, shown.course_max = numbers.final_points, possible
    shown.score = numbers.final
    shown.notes = list(shown.notes) + numbers.notes
    return shown, numbers


def _late_note(late: Lateness, max_score: float) -> str:
    """``max_score``: the lab's points in the course (what the penalty's percent is of)."""
    assert late.submitted_at is not None
    known = {source.value: source.described for source in TimeSource}
    source = known.get(late.source, late.source)
    submitted = f"Submitted {_when(late.submitted_at, late)} (from {source})"
    if late.due is None:
        return f"{submitted}."
    due = f"due {_when(late.due, late)}" + (f", {late.extension}" if late.extension else "")
    if late.days == 0:
        return f"{submitted}; {due}: on time."
    days = f"{late.days} day{'s' * (late.days != 1)} late"
    if late.rejected:
        return f"{submitted}; {due}: {days}, past the last day accepted, so it scores 0."
    points = max_score * late.penalty_percent / 100
    return (f"{submitted}; {due}: {days}, −{late.penalty_percent:g}% of the lab's points "
            f"(−{format_points(points)}).")


def _when(moment: dt.datetime, late: Lateness) -> str:
    return show_time(moment, late.zone)


__all__ = ["Adjusted", "Lateness", "Override", "adjust", "lateness"]

"""``rnngrade override``: the course staff set a student's score for a lab or one test.

The score is given in the course's points (what the lab counts in the course file, as every
export shows it), or with ``rubric=True`` in the lab rubric's points; the gradebook keeps it in
the rubric's points. The override is recorded in the gradebook (who, when, why), then the lab's
results are adjusted again and its reports rewritten: the student's feedback, the hand-back
folder, ``grades.csv`` and ``summary.html``. A roster student without a submission can be given
a score for the lab (not for one test): it shows in ``grades.csv``, the summary and the LMS
exports. A regrade keeps overrides unless run with ``--drop-overrides``.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path

from rnngrade.course.adjust import Adjusted
from rnngrade.course.config import Course
from rnngrade.course.roster_check import check_override
from rnngrade.errors import UsageError
from rnngrade.gradebook.points import in_course_points
from rnngrade.gradebook.store import FILENAME, GRADER_ERROR, Gradebook
from rnngrade.harness.formatting import format_points
from rnngrade.labs import get_lab
from rnngrade.results.sanitize import clean_name

MAX_COMMENT = 2000
SLACK = 5e-5  # a score typed as shown (4 decimals) may round past the most it can be


class OverrideError(UsageError):
    """The override cannot be recorded (no such student, test or gradebook; a bad score)."""


@dataclass
class OverrideRequest:
    student: str
    lab: str
    out: Path
    score: float
    comment: str
    test: str = ""
    by: str = ""
    course: Course | None = None
    rubric: bool = False  # score in the lab rubric's points (else in the course's)


def default_author() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def record_override(request: OverrideRequest) -> tuple[int, Adjusted | None, bool]:
    """Check and record the override, then rewrite the lab's reports; the override's id, the
    student's new numbers and whether the student has a submission."""
    from rnngrade.course.apply import rewrite_exports
    from rnngrade.course.batch import finish_course
    from rnngrade.gradebook.batch import BatchLock

    lab = get_lab(request.lab).name
    path = request.out / FILENAME
    if not path.is_file():
        raise OverrideError(f"{request.out} holds no gradebook ({FILENAME}); run "
                            "`rnngrade batch` into it first")
    check_override(request.student, request.course, request.out)
    comment = request.comment.strip()
    if not comment:
        raise OverrideError("--comment must say why (the student reads it)")
    if len(comment) > MAX_COMMENT:
        raise OverrideError(f"--comment is longer than {MAX_COMMENT} characters")
    lock = BatchLock(request.out)
    book = Gradebook(path)
    try:
        if request.course is None:
            _check_no_course(book, lab, request.out)
        student, rubric_max, top, graded = _target(book, lab, request)
        possible = _points_possible(request.course, lab, rubric_max)
        score = _rubric_score(request, lab, top, rubric_max, possible)
        override_id = book.add_override(student, lab, request.test, score, comment,
                                        request.by or default_author())
        done = finish_course(book, lab, request.out, request.course, {})
        rewrite_exports(book, lab, request.out, request.course)
    finally:
        book.close()
        lock.release()
    if not graded:  # no submission: the staff's score is the final one
        final = in_course_points(score, rubric_max, possible)
        return override_id, Adjusted(0.0, rubric_max, score, 0, 0.0, score, possible,
                                     final), False
    return override_id, done.adjusted.get(student), True


def _check_no_course(book: Gradebook, lab: str, out: Path) -> None:
    """Refuse an override without the course file when the lab's grades were made with one:
    adjusting them again without it would drop its late penalties and points."""
    maxima = {row["student_id"]: row["max_score"] for row in book.current_rows(lab)}
    for student, row in book.adjustments(lab).items():
        if row["due"] or row["time_source"] or row["points_possible"] != maxima.get(student):
            raise OverrideError(f"the {lab} grades in {out} were made with a course file (due "
                                "dates, late penalties, the lab's points); give it with --course "
                                "FILE, or put course.yaml at the course root")


def _target(book: Gradebook, lab: str, request: OverrideRequest
            ) -> tuple[str, float, float, bool]:
    """The student's id as the gradebook has it, the lab rubric's points, the most the
    override may give (in the rubric's points) and whether the student has a result."""
    rows = {row["student_id"]: row for row in book.current_rows(lab)}
    row = rows.get(request.student)
    if row is None:
        return _missing_student(lab, request)
    if row["status"] == GRADER_ERROR:
        raise OverrideError(f"{clean_name(request.student)}'s {lab} submission is not graded "
                            "yet (a grader error); grade it again first")
    result = book.load_result(row["id"])
    if not request.test:
        return request.student, result.max_score, result.max_score, True
    tests = {t.name: t for t in result.tests}
    if request.test not in tests:
        names = ", ".join(t.name for t in result.tests)
        raise OverrideError(f"{lab} has no test {request.test!r}; its tests: {names}")
    return request.student, result.max_score, tests[request.test].max_score, True


def _missing_student(lab: str, request: OverrideRequest) -> tuple[str, float, float, bool]:
    """A roster student without a result for ``lab`` (a kept roster lists them)."""
    from rnngrade.gradebook.export import lab_points
    from rnngrade.gradebook.roster import saved_roster

    roster = saved_roster(request.out)
    student = roster.find(request.student) if roster is not None else None
    where = f"no {lab} result for {clean_name(request.student)!r} in {request.out}"
    if student is None:
        raise OverrideError(where + (", and the roster does not list them" if roster is not None
                                     else " (and no roster was given to its batches)"))
    if request.test:
        raise OverrideError(f"{where}: {clean_name(student.id)} has no submission, so there is "
                            "no test to override; leave out --test to set the lab's score")
    points = lab_points(lab)
    return student.id, points, points, False


def _points_possible(course: Course | None, lab: str, rubric_max: float) -> float:
    """What the lab counts in the course (its rubric's points when no course file scales it)."""
    plan = course.plan(lab) if course is not None else None
    return plan.points if plan is not None and plan.points is not None and rubric_max > 0 \
        else rubric_max


def _rubric_score(request: OverrideRequest, lab: str, top: float, rubric_max: float,
                  possible: float) -> float:
    """The requested score in the rubric's points, refused outside 0..``top`` (the override's
    most) with both scales named."""
    what = f"{lab}'s test {request.test}" if request.test else lab
    top_course = in_course_points(top, rubric_max, possible)
    option = "--rubric-points" if request.rubric else "--score"
    value = request.score
    if value < 0:
        raise OverrideError(f"{option} {format_points(value)} is below 0")
    if request.rubric:
        mine, other, unit, other_unit, hint = top, top_course, "rubric", "course", "--score"
    else:
        mine, other, unit, other_unit, hint = top_course, top, "course", "rubric", \
            "--rubric-points"
    if value > mine + SLACK:
        both = possible != rubric_max
        scales = f" ({format_points(other)} {other_unit} points)" if both else ""
        advice = f"; use {hint} for {other_unit} points" if both else ""
        raise OverrideError(f"{option} {format_points(value)} is more than {what}'s "
                            f"{format_points(mine)} {unit} points{scales}{advice}")
    if request.rubric:
        return min(value, top)
    return min(round(value * rubric_max / possible, 6), top) if possible else value

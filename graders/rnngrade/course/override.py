"""``rnngrade override``: the course staff set a student's score for a lab or one test.

The override is recorded in the gradebook (who, when, why), then the lab's results are adjusted
again and its reports rewritten: the student's feedback, the hand-back folder, ``grades.csv`` and
``summary.html``. A regrade keeps overrides unless run with ``--drop-overrides``.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path

from rnngrade.course.adjust import Adjusted
from rnngrade.course.config import Course
from rnngrade.course.roster_check import check_override
from rnngrade.errors import UsageError
from rnngrade.gradebook.store import FILENAME, GRADER_ERROR, Gradebook
from rnngrade.harness.formatting import format_points
from rnngrade.labs import get_lab
from rnngrade.results.sanitize import clean_name

MAX_COMMENT = 2000


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


def default_author() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def record_override(request: OverrideRequest) -> tuple[int, Adjusted | None]:
    """Check and record the override, then rewrite the lab's reports; the override's id and
    the student's new numbers."""
    from rnngrade.course.apply import rewrite_exports
    from rnngrade.gradebook.batch import _Lock, finish_course

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
    lock = _Lock(request.out)
    book = Gradebook(path)
    try:
        rows = {row["student_id"]: row for row in book.current_rows(lab)}
        row = rows.get(request.student)
        if row is None:
            raise OverrideError(f"no {lab} result for {clean_name(request.student)!r} in "
                                f"{request.out}")
        if row["status"] == GRADER_ERROR:
            raise OverrideError(f"{clean_name(request.student)}'s {lab} submission is not graded "
                                "yet (a grader error); grade it again first")
        result = book.load_result(row["id"])
        top = result.max_score
        if request.test:
            tests = {t.name: t for t in result.tests}
            if request.test not in tests:
                names = ", ".join(t.name for t in result.tests)
                raise OverrideError(f"{lab} has no test {request.test!r}; its tests: {names}")
            top = tests[request.test].max_score
        if not 0 <= request.score <= top:
            raise OverrideError(f"--score {format_points(request.score)} is outside 0.."
                                f"{format_points(top)} (the points of "
                                f"{'that test' if request.test else lab})")
        override_id = book.add_override(request.student, lab, request.test, request.score,
                                        comment, request.by or default_author())
        done = finish_course(book, lab, request.out, request.course, {})
        rewrite_exports(book, lab, request.out, request.course)
    finally:
        book.close()
        lock.release()
    return override_id, done.adjusted.get(request.student)

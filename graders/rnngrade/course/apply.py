"""Applying the course file and the staff's overrides to a lab's current results.

Run at the end of every ``rnngrade batch`` and after every ``rnngrade override``: for each
student with a current result it works out the submission time (from the entry, or as recorded
before), the late penalty and the overrides in force, records the numbers in the gradebook's
``adjustments`` table (grades.csv and the summary read them from there), and rewrites the
student's reports so they show the final score and say why. A student with nothing to adjust
keeps the grader's reports untouched.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.course.adjust import Adjusted, Lateness, Override, adjust, lateness
from rnngrade.course.config import Course, parse_moment
from rnngrade.course.times import SubmissionTime, TimeSource, file_time_warnings
from rnngrade.gradebook.roster import MissingMark, Student, zero_for_missing
from rnngrade.gradebook.store import Gradebook
from rnngrade.results.render import write_reports


@dataclass
class CoursePass:
    """What the pass did, for the command's output."""

    adjusted: dict[str, Adjusted] = field(default_factory=dict)
    late: list[str] = field(default_factory=list)  # students with a penalty
    kept_overrides: dict[str, int] = field(default_factory=dict)  # student → overrides in force
    stale_overrides: list[Override] = field(default_factory=list)
    time_sources: dict[str, int] = field(default_factory=dict)  # source → students
    time_notes: list[str] = field(default_factory=list)  # times found and set aside, and why
    warnings: list[str] = field(default_factory=list)  # the lab's times look wrong (loudly)


def as_override(row: sqlite3.Row) -> Override:
    return Override(row["id"], row["student_id"], row["lab"], row["test"], row["score"],
                    row["comment"], row["made_by"], row["made_at"])


def apply_course(book: Gradebook, lab: str, folder_of: Callable[[str], Path],
                 course: Course | None,
                 times: dict[str, SubmissionTime | None] | None = None) -> CoursePass:
    """Adjust every current result of ``lab`` (see the module doc). ``times``: the submission
    time of the students whose entries were just looked at (others keep their recorded one)."""
    times = times or {}
    done = CoursePass()
    previous = book.adjustments(lab)
    overrides: dict[str, list[Override]] = {}
    for row in book.overrides(lab):
        overrides.setdefault(row["student_id"], []).append(as_override(row))
    for row in book.current_rows(lab):
        student = row["student_id"]
        mine = overrides.get(student, [])
        if course is None and not mine and student not in previous:
            continue
        when = times[student] if student in times else _recorded(previous.get(student))
        late: Lateness | None = lateness(course, student, lab, when) if course else None
        result = book.load_result(row["id"])
        shown, numbers = adjust(result, mine, late, course.plan(lab) if course else None)
        write_reports(shown, folder_of(student))
        book.set_adjustment(student, lab, {
            "result_id": row["id"],
            "submitted_at": when.at.isoformat() if when else "",
            "time_source": when.source.value if when else "",
            "due": late.due.isoformat() if late and late.due else "",
            "late_days": numbers.late_days, "penalty": numbers.penalty,
            "raw_score": numbers.raw_score, "final_score": numbers.final,
            "points_possible": numbers.points_possible, "final_points": numbers.final_points,
            "overrides": len(numbers.overrides)})
        done.adjusted[student] = numbers
        if numbers.late_days:
            done.late.append(student)
        if numbers.overrides:
            done.kept_overrides[student] = len(numbers.overrides)
        done.stale_overrides += numbers.stale
        if when is not None:
            done.time_sources[when.source.value] = done.time_sources.get(when.source.value,
                                                                         0) + 1
    done.warnings = time_warnings(book, lab)
    return done


def time_warnings(book: Gradebook, lab: str) -> list[str]:
    """What looks wrong with the submission times recorded for ``lab``'s current results (see
    ``times.file_time_warnings``): for the batch's output and summary.html."""
    rows = book.adjustments(lab).values()
    filed = [(row, when) for row in rows
             if (when := _recorded(row)) is not None and when.source is TimeSource.FILE]
    return file_time_warnings([when.at for _, when in filed],
                              sum(1 for row, _ in filed if row["late_days"]))


def missing_policy(course: Course) -> Callable[[Student, str], MissingMark]:
    """How the course file counts a roster student without a submission, per lab."""

    def policy(student: Student, lab: str) -> MissingMark:
        if course.plan(lab).missing == "excused" or course.excuses(student.id, lab):
            return MissingMark("excused", None, f"no submission: excused ({course.path.name})")
        return zero_for_missing(student, lab)

    return policy


def rewrite_exports(book: Gradebook, lab: str, out: Path, course: Course | None) -> None:
    """The lab's grades.csv and summary.html, and the course-wide grades.csv, written again
    (with the roster a batch kept in ``out`` and the course file's missing policy)."""
    from rnngrade.gradebook.export import write_exports
    from rnngrade.gradebook.roster import saved_roster

    write_exports(book, lab, out, saved_roster(out),
                  missing_policy(course) if course is not None else zero_for_missing,
                  time_warnings(book, lab))


def _recorded(row: sqlite3.Row | None) -> SubmissionTime | None:
    """The submission time recorded by an earlier pass (None when none was)."""
    if row is None or not row["submitted_at"] or not row["time_source"]:
        return None
    moment = parse_moment(row["submitted_at"])
    if moment is None:
        return None
    return SubmissionTime(moment.astimezone(dt.timezone.utc), TimeSource(row["time_source"]))

"""Student ids of the course file and of ``override`` checked against the class roster.

An extension, an excuse or an override for an id the roster does not list is a typo until shown
otherwise (``u1024`` for ``u1042``): left alone it applies to nobody, and the student it was meant
for loses points without a word. So wherever both are known (``batch``, ``override``,
``export``) such an id stops the command (exit 2), naming the file, the key and the roster ids
nearest to it.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from rnngrade.course.config import Course, CourseError
from rnngrade.errors import UsageError
from rnngrade.gradebook.roster import SAVED, Roster, saved_roster
from rnngrade.results.sanitize import clean_name

MAX_LISTED = 10  # unknown ids named in one error


class NotOnRosterError(UsageError):
    """A command names a student the roster does not list."""


def nearest_ids(student: str, roster: Roster, n: int = 3) -> list[str]:
    """The roster ids most like ``student`` (none when nothing is close)."""
    ids = {s.id.casefold(): s.id for s in roster.students}
    return [ids[i] for i in difflib.get_close_matches(student.casefold(), list(ids), n=n)]


def not_listed(student: str, roster: Roster, source: str) -> str:
    """``'u1024' is not on the roster (SOURCE); nearest: u1042``."""
    near = nearest_ids(student, roster)
    hint = f"nearest: {', '.join(near)}" if near else "no id on it is close"
    return f"{clean_name(student, 60)!r} is not on the roster ({source}); {hint}"


def check_course(course: Course, roster: Roster, source: str) -> None:
    """Raise ``CourseError`` naming every ``extensions``/``excused`` id ``roster`` (read from
    ``source``) does not list."""
    problems = [f"{key}: {not_listed(student, roster, source)}"
                for student, key in course.student_keys() if roster.find(student) is None]
    if problems:
        more = (f"; … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED
                else "")
        raise CourseError(f"{course.path}: " + "; ".join(problems[:MAX_LISTED]) + more
                          + ". Correct the id in the course file, or add the student to the "
                            "roster")


def check_override(student: str, course: Course | None, out: Path) -> None:
    """Before ``override`` records anything: with a roster kept in ``out``, ``student`` must
    be on it, and so must every student id of ``course``."""
    roster = saved_roster(out)
    if roster is None:
        return
    source = str(out / SAVED)
    if roster.find(student) is None:
        raise NotOnRosterError(f"override: {not_listed(student, roster, source)}")
    if course is not None:
        check_course(course, roster, source)

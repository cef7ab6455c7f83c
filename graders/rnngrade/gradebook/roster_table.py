"""The rows every export shows: ``GradeRow``, one student's line for one lab in ``grades.csv``
(every student with a result and, with a roster, every roster student without one), and the
summary's roster table made of them, every number in the course's points."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from rnngrade.gradebook.roster import Student
from rnngrade.results.sanitize import clean_name


@dataclass
class GradeRow:
    """One student's line for one lab, as every export shows it.

    score: ``None`` when there is no score to give (the grader failed on the submission, or
    the student is excused); percent likewise. score is the final one (see ``rnngrade.course``:
    the late penalty and the staff's overrides applied), ``raw_score`` what the grader gave and
    ``penalty`` what lateness cost, all three in the course's points (``max_score``: what the
    lab counts, the rubric's points when no course file scales it); ``raw_rubric_score`` is
    what the grader gave in the lab rubric's points (``rubric_max_score``)."""

    student: str
    lab: str
    status: str
    score: float | None
    max_score: float
    graded_at: str = ""
    sha256: str = ""
    roster: Student | None = None
    in_roster: bool | None = None  # None: no roster was given
    note: str = ""
    submitted: bool = True  # False: a roster student with no entry for this lab
    raw_score: float | None = None
    late_days: int = 0
    penalty: float = 0.0  # points taken off for lateness
    overrides: int = 0  # the staff's overrides in force
    raw_rubric_score: float | None = None
    rubric_max_score: float = 0.0

    @property
    def percent(self) -> float | None:
        if self.score is None:
            return None
        return 100.0 * self.score / self.max_score if self.max_score else 0.0


@dataclass
class RosterRow:
    student: str  # cleaned for display
    link: str  # relative URL of the student's feedback.html ("" without a submission)
    status: str  # a gradebook status, or the missing policy's
    status_text: str
    score: float | None  # final (None: not graded, or excused)
    points_possible: float
    raw: float | None  # as graded (None: not graded, or no submission)
    late_days: int
    penalty: float
    overrides: int

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.points_possible if self.score is not None \
            and self.points_possible else 0.0


def roster_rows(rows: list[GradeRow], status_text: dict[str, str]) -> list[RosterRow]:
    """The table's rows of ``rows`` (``grade_rows``'s), in their order."""
    return [RosterRow(
        student=clean_name(row.student),
        link=f"students/{quote(row.student, safe='')}/feedback.html" if row.submitted else "",
        status=row.status, status_text=status_text.get(row.status, row.status),
        score=row.score, points_possible=row.max_score, raw=row.raw_score,
        late_days=row.late_days, penalty=row.penalty, overrides=row.overrides)
        for row in rows]


__all__ = ["GradeRow", "RosterRow", "roster_rows"]

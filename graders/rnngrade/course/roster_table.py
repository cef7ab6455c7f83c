"""The rows of the summary's roster table: one per row of the lab's ``grades.csv`` (every
student with a result and, with a roster, every roster student without one), every number in
the course's points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from rnngrade.results.sanitize import clean_name

if TYPE_CHECKING:
    from rnngrade.gradebook.export import GradeRow


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


__all__ = ["RosterRow", "roster_rows"]

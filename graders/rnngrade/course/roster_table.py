"""The rows of the summary's roster table: one per student with a current result."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from rnngrade.gradebook.store import GRADER_ERROR, Gradebook
from rnngrade.results.sanitize import clean_name


@dataclass
class RosterRow:
    student: str  # cleaned for display
    link: str  # relative URL of the student's feedback.html
    status: str  # a gradebook status
    status_text: str
    score: float | None  # final, in the course's points (None: not graded)
    points_possible: float
    raw: float | None  # as graded, in the lab's points
    max_score: float
    late_days: int
    penalty: float
    overrides: int

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.points_possible if self.score is not None \
            and self.points_possible else 0.0


def roster_rows(book: Gradebook, lab: str, status_text: dict[str, str]) -> list[RosterRow]:
    """Every current result of ``lab`` with its final score, by student id."""
    adjustments = book.adjustments(lab)
    rows = []
    for row in book.current_rows(lab):
        student = row["student_id"]
        adjusted = adjustments.get(student)
        graded = row["status"] != GRADER_ERROR
        rows.append(RosterRow(
            student=clean_name(student),
            link=f"students/{quote(student, safe='')}/feedback.html",
            status=row["status"], status_text=status_text.get(row["status"], row["status"]),
            score=(adjusted["final_points"] if adjusted else row["score"]) if graded else None,
            points_possible=adjusted["points_possible"] if adjusted else row["max_score"],
            raw=row["score"] if graded else None, max_score=row["max_score"],
            late_days=adjusted["late_days"] if adjusted else 0,
            penalty=adjusted["penalty"] if adjusted else 0.0,
            overrides=adjusted["overrides"] if adjusted else 0))
    return rows


__all__ = ["RosterRow", "roster_rows"]

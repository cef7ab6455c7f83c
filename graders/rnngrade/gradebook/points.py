"""A lab's points in the course's points: what the course file scales a lab to."""

from __future__ import annotations


def in_course_points(points: float, max_score: float, points_possible: float) -> float:
    """``points`` of a lab whose rubric gives ``max_score``, in the course's points (the lab
    counts ``points_possible``)."""
    return round(points * points_possible / max_score, 4) if max_score else points

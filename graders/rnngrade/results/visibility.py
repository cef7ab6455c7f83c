"""Which tests a student may see: the rubric's visibility, applied in one place to every
student-facing report (feedback.html, feedback.md, junit.xml, the pull-request comment).

A student-facing report is the feedback the course publishes, so tests marked ``visible``,
``after_due_date`` or ``after_published`` are listed; a ``hidden`` test (or one whose visibility
is not known: the policy fails closed) counts in the score but is shown only in one line that
sums the hidden tests' points. Instructor outputs (results.json, whose Gradescope ``visibility``
field lets Gradescope apply the timing, grades.csv, summary.html) keep every test. In Gradescope,
a ``visible`` test (the rubric's default, ``grading.rubric.DEFAULT_VISIBILITY``) is shown as soon
as the submission is graded; ``after_due_date`` and ``after_published`` ones later.
"""

from __future__ import annotations

import dataclasses

from rnngrade.harness.formatting import format_points
from rnngrade.results.model import GradeResult

SHOWN_TO_STUDENTS = frozenset({"visible", "after_due_date", "after_published"})


def student_view(result: GradeResult) -> GradeResult:
    """``result`` as a student may see it (see the module docstring); the score is unchanged."""
    hidden = [t for t in result.tests if t.visibility not in SHOWN_TO_STUDENTS]
    if not hidden:
        return result
    note = (f"{len(hidden)} hidden test{'s' if len(hidden) != 1 else ''} not shown: "
            f"{format_points(sum(t.score for t in hidden))} / "
            f"{format_points(sum(t.max_score for t in hidden))} points")
    shown = [t for t in result.tests if t.visibility in SHOWN_TO_STUDENTS]
    return dataclasses.replace(result, tests=shown, notes=[*result.notes, note])

"""GradeResult → Gradescope's ``results.json`` structure (extra fields are allowed there)."""

from __future__ import annotations

from typing import Any

from rnngrade.harness.formatting import format_points
from rnngrade.results.model import GradeResult, Outcome, TestResult


def test_output(test: TestResult) -> str:
    """The student-facing text of one test: message, diagnosis, hint."""
    lines = []
    if test.message:
        lines.append(test.message)
    lines += [f"likely mistake: {d}" for d in test.diagnosis]
    if test.hint:
        lines.append(f"hint: {test.hint}")
    if test.cases_total > 1:
        lines.append(f"{test.cases_passed} of {test.cases_total - test.cases_skipped} cases passed"
                     + (f" ({test.cases_skipped} skipped)" if test.cases_skipped else ""))
    return "\n".join(lines)


test_output.__test__ = False  # type: ignore[attr-defined]


def overall_output(result: GradeResult) -> str:
    lines = [f"{result.lab} — {result.lab_title}: "
             f"{format_points(result.score)}/{format_points(result.max_score)}"]
    if result.error:
        lines.append(f"Your submission could not be graded: {result.error}")
    lines += result.notes
    if result.student_notes:
        lines.append("While loading, your code reported (its own output, quoted; not a message "
                     "from the course staff):")
        lines += [f"> {line}" for note in result.student_notes for line in note.split("\n")]
    return "\n".join(lines)


def to_gradescope(result: GradeResult) -> dict[str, Any]:
    return {
        "score": result.score,
        "max_score": result.max_score,
        "execution_time": result.execution_time,
        "output": overall_output(result),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": test.title,
                "test_id": test.name,
                "score": test.score,
                "max_score": test.max_score,
                "status": "passed" if test.outcome == Outcome.PASSED else "failed",
                "outcome": test.outcome,
                "output": test_output(test),
                "visibility": test.visibility,
                "diagnosis": [d.to_dict() for d in test.diagnosis],
                "hint": test.hint,
                "cases_passed": test.cases_passed,
                "cases_total": test.cases_total,
                "cases_skipped": test.cases_skipped,
                "execution_time": test.seconds,
            }
            for test in result.tests
        ],
        "lab": result.lab,
        "submission": result.submission,
        "status": result.status,
        "error": result.error,
        "notes": result.notes,
        "student_notes": result.student_notes,
        "device": result.device,
        "protections": result.protections,
        "grader_version": result.grader_version,
        "graded_at": result.graded_at,
        # Instructors only (Gradescope shows students none of the fields below "tests"): why
        # the grader failed, with the traceback of an unexpected failure.
        "grader_detail": result.grader_detail,
    }

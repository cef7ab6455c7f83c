"""GradeResult → Gradescope's ``results.json`` structure.

Every field of Gradescope's documented results format is filled (``score``, ``execution_time``,
``output`` and its ``output_format``, ``visibility``, ``stdout_visibility``, ``extra_data``; per
test ``score``, ``max_score``, ``status``, ``name``, ``name_format``, ``number``, ``output``,
``output_format``, ``tags``, ``visibility``, ``extra_data``). Every text format is ``text``:
Gradescope then renders nothing a submission wrote as HTML or Markdown (the default for the
top-level output, ``simple_format``, would render HTML). The fields rnngrade itself reads (``lab``,
``status``, ``protections``, ``test_id``, ``outcome``, ...) stay at the top level and in each test
as before; the same facts are in ``extra_data``, where Gradescope stores them.
"""

from __future__ import annotations

from typing import Any

from jinja2.utils import htmlsafe_json_dumps

from rnngrade.harness.formatting import format_points
from rnngrade.results.model import GradeResult, Measurement, Outcome, TestResult


def test_output(test: TestResult) -> str:
    """The student-facing text of one test: the likely mistake (or where it goes wrong) and the
    hint first, then what was measured and the message with its numbers."""
    lines = [f"{'where it goes wrong' if d.source == 'localised' else 'likely mistake'}: {d}"
             for d in test.diagnosis]
    if test.hint:
        lines.append(f"hint: {test.hint}")
    lines += [f"{'' if m.passed else 'missed: '}{m.text} (measured on {m.device})"
              for m in test.measurements]
    if test.message:
        lines.append(test.message)
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


def measurement_data(m: Measurement) -> dict[str, Any]:
    """One measurement of a test graded by outcome, with its sentence as ``text``."""
    return {"name": m.name, "value": m.value, "bound": m.bound, "threshold": m.threshold,
            "passed": m.passed, "unit": m.unit, "context": m.context, "text": m.text,
            "device": m.device,
            "baselines": [{"label": b.label, "value": b.value} for b in m.baselines],
            "curve": list(m.curve), "reference_curve": list(m.reference_curve),
            "curve_label": m.curve_label}


TEXT = "text"  # Gradescope's plain-text format: no HTML, Markdown or ANSI is rendered


def function_of(test_name: str, functions: list[str]) -> str:
    """The graded function a test is about: the longest of ``functions`` that the test's name
    starts with after ``test_`` ("" when none does)."""
    bare = test_name.removeprefix("test_")
    found = [f for f in functions if bare == f or bare.startswith(f + "_")]
    return max(found, key=len, default="")


def numbering(result: GradeResult, functions: list[str]) -> list[tuple[str, str]]:
    """(number, function) of each test: ``"2.3"`` is the third test of the second graded
    function; a test about none of them is numbered after them in order."""
    order = {f: i + 1 for i, f in enumerate(functions)}
    seen: dict[str, int] = {}
    numbers = []
    for test in result.tests:
        function = function_of(test.name, functions)
        group = order.get(function, len(functions) + 1)
        seen[function] = seen.get(function, 0) + 1
        numbers.append((f"{group}.{seen[function]}", function))
    return numbers


def _functions(lab: str) -> list[str]:
    from rnngrade.labs import UnknownLabError, get_lab

    try:
        return list(get_lab(lab).functions)
    except UnknownLabError:
        return []


def _test_extra(test: TestResult) -> dict[str, Any]:
    return {
        "test_id": test.name,
        "outcome": test.outcome,
        "diagnosis": [d.to_dict() for d in test.diagnosis],
        "hint": test.hint,
        "cases_passed": test.cases_passed,
        "cases_total": test.cases_total,
        "cases_skipped": test.cases_skipped,
        "execution_time": test.seconds,
        "measurements": [measurement_data(m) for m in test.measurements],
    }


def to_gradescope(result: GradeResult) -> dict[str, Any]:
    numbers = numbering(result, _functions(result.lab))
    tests = []
    for test, (number, function) in zip(result.tests, numbers):
        extra = _test_extra(test)
        tests.append({
            "name": test.title,
            "name_format": TEXT,
            "number": number,
            "score": test.score,
            "max_score": test.max_score,
            "status": "passed" if test.outcome == Outcome.PASSED else "failed",
            "output": test_output(test),
            "output_format": TEXT,
            "tags": [function] if function else [],
            "visibility": test.visibility,
            "extra_data": extra,
            **extra,
        })
    return {
        "score": result.score,
        "max_score": result.max_score,
        "execution_time": result.execution_time,
        "output": overall_output(result),
        "output_format": TEXT,
        "test_output_format": TEXT,
        "test_name_format": TEXT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "lab": result.lab,
            "status": result.status,
            "device": result.device,
            "protections": result.protections,
            "grader_version": result.grader_version,
            "graded_at": result.graded_at,
        },
        "tests": tests,
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
        "grader_notes": result.grader_notes,
        # Instructors only: the submission's time and the grader's own, each with its budget.
        "timings": result.timings,
    }


def results_json(result: GradeResult) -> str:
    """``results.json`` of ``result``: the one writer of the file, for every path (the reports,
    a renderer's failure, Gradescope). Keys sorted, indented, ``<``, ``>``, ``&`` and ``'``
    escaped as ``\\u`` sequences, so the text is safe wherever it is pasted."""
    return htmlsafe_json_dumps(to_gradescope(result), sort_keys=True, indent=2)

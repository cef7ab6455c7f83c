"""The one boundary every student-controlled string crosses before it is stored or rendered.

A submission controls much of the text in a result: exception messages, what its code reported
while loading, its file and folder names, its student id. The worker caps some of it, but the
worker runs student code and can be patched, so nothing it says is trusted: the grader applies
the rules here itself.

``clean_text`` (``rnngrade.results.text``) makes one string safe to store and to hand to any
renderer; ``clean_result`` applies it to every text field of a ``GradeResult``, with a cap per
field and a cap on all free text of the result together (``REPORT_LIMIT``): when the fields add
up to more, the longest are cut to one common length, so one flooded test cannot push out the
others.
Escaping for a format (HTML, Markdown, CSV, terminal, workflow logs) is the renderers' job; this
module makes the text they escape well-formed and bounded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rnngrade.results.model import Baseline, GradeResult, Measurement, TestResult
from rnngrade.results.plots import MAX_FIGURES, clean_figure
from rnngrade.results.text import FIELD_LIMIT, NAME_LIMIT, clean_name, clean_text, truncate
from rnngrade.results.text import TRUNCATED as TRUNCATED

MAX_NOTES = 20  # notes kept per list; the rest are counted in one line
REPORT_LIMIT = 64_000  # characters of free text in one result, every field together


def clean_notes(notes: object, limit: int = FIELD_LIMIT) -> list[str]:
    """A list of notes, each cleaned, at most ``MAX_NOTES`` (the last one counting the rest)."""
    items = list(notes) if isinstance(notes, list | tuple) else [notes] if notes else []
    if len(items) <= MAX_NOTES:
        return [clean_text(n, limit) for n in items]
    kept = [clean_text(n, limit) for n in items[: MAX_NOTES - 1]]
    return [*kept, f"… and {len(items) - len(kept)} more not shown"]


def clean_result(result: GradeResult) -> GradeResult:
    """A copy of ``result`` whose every string is cleaned and whose free text is bounded.
    Numbers, enums (status, outcomes, failure kinds) and diagnoses are left alone: the grader
    makes them (diagnoses from its own mutants and checks), never from the worker's text."""
    tests = [_clean_test(t) for t in result.tests]
    cleaned = dataclasses.replace(
        result,
        lab=clean_name(result.lab), lab_title=clean_name(result.lab_title),
        submission=clean_name(result.submission), device=clean_name(result.device),
        error=clean_text(result.error), grader_detail=clean_text(result.grader_detail,
                                                                 4 * FIELD_LIMIT),
        notes=clean_notes(result.notes), student_notes=clean_notes(result.student_notes),
        grader_notes=clean_notes(result.grader_notes),
        protections={clean_name(k): bool(v) for k, v in dict(result.protections).items()},
        grader_version=clean_name(result.grader_version),
        graded_at=clean_name(result.graded_at), tests=tests)
    lengths = [len(text) for text in _free_texts(cleaned)]
    if sum(lengths) <= REPORT_LIMIT:
        return cleaned
    cap = fair_cap(lengths, REPORT_LIMIT)
    return _map_free_text(cleaned, lambda s: truncate(s, cap))


@dataclass(frozen=True)
class Cleaned:
    """A result as ``clean`` returned it, marked so: the renderers take it as it is, where they
    clean a plain ``GradeResult`` first (``render.prepared``). So a result crossing from the
    worker to the grader is cleaned once, where it crosses, and never again. Anything derived
    from it (``dataclasses.replace``, a copy, what a file gives back) is a plain ``GradeResult``,
    untrusted again; the result inside is never changed in place."""

    result: GradeResult


def clean(result: GradeResult) -> Cleaned:
    """``clean_result(result)``, marked as cleaned."""
    return Cleaned(clean_result(result))


def fair_cap(lengths: list[int], budget: int) -> int:
    """The largest length ``c`` with ``sum(min(n, c) for n in lengths) <= budget``: every text
    shorter than ``c`` is kept whole, the longer ones are cut to ``c``."""
    remaining = budget
    ordered = sorted(lengths)
    for i, length in enumerate(ordered):
        share = remaining // (len(ordered) - i)
        if length > share:
            return share
        remaining -= length
    return max(ordered, default=budget)


def _clean_test(test: TestResult) -> TestResult:
    return dataclasses.replace(
        test, name=clean_name(test.name), title=clean_name(test.title),
        visibility=clean_name(test.visibility),
        message=clean_text(test.message, 2 * FIELD_LIMIT),
        hint=clean_text(test.hint),
        cases=[dataclasses.replace(c, case=clean_name(c.case), message=clean_text(c.message),
                                   hint=clean_text(c.hint))
               for c in test.cases],
        checks=[_clean_data(c) for c in test.checks[:MAX_NOTES * 10]],
        figures=[f for f in map(clean_figure, test.figures[:MAX_FIGURES]) if f is not None],
        measurements=[clean_measurement(m) for m in test.measurements[:MAX_NOTES]])


CURVE_POINTS = 100  # points of a curve kept for a report (a longer one is averaged down)
FIGURE_LIMIT = 1e12  # a figure's magnitude in a report; beyond it, it reads as this bound


def clean_number(value: object) -> float | None:
    """A finite float of bounded magnitude; None for anything else (NaN, inf, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return max(-FIGURE_LIMIT, min(FIGURE_LIMIT, number))


def clean_curve(values: object, points: int = CURVE_POINTS) -> list[float]:
    """At most ``points`` finite floats: consecutive values averaged in equal groups (the
    finite ones of each group), groups without a finite value left out."""
    try:
        numbers = [clean_number(v) for v in list(values)[: points * 1000]]  # type: ignore[call-overload]
    except TypeError:
        return []
    size = max(1, -(-len(numbers) // points))
    curve = []
    for start in range(0, len(numbers), size):
        finite = [v for v in numbers[start:start + size] if v is not None]
        if finite:
            curve.append(sum(finite) / len(finite))
    return curve


def clean_measurement(m: Measurement) -> Measurement:
    """A measurement with clean names and finite, bounded figures and curves."""
    return dataclasses.replace(
        m, name=clean_name(m.name), unit=clean_name(m.unit), context=clean_name(m.context),
        bound=m.bound if m.bound in ("≤", "<", "≥", ">") else "?",
        value=clean_number(m.value), threshold=clean_number(m.threshold) or 0.0,
        passed=bool(m.passed), device=clean_name(m.device),
        baselines=[Baseline(clean_name(b.label), clean_number(b.value) or 0.0)
                   for b in m.baselines[:MAX_NOTES]],
        curve=clean_curve(m.curve), reference_curve=clean_curve(m.reference_curve),
        curve_label=clean_name(m.curve_label))


def _clean_data(value: Any, depth: int = 0) -> Any:
    """Strings in nested plain data (instructor-only check records), cleaned and bounded."""
    if isinstance(value, str | bytes):
        return clean_text(value, NAME_LIMIT * 5)
    if depth > 8:
        return None
    if isinstance(value, dict):
        return {clean_name(k): _clean_data(v, depth + 1) for k, v in list(value.items())[:100]}
    if isinstance(value, list | tuple):
        return [_clean_data(v, depth + 1) for v in value[:100]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return clean_text(value, NAME_LIMIT)


def _free_texts(result: GradeResult) -> Iterator[str]:
    """Every free-text field of ``result``, in the order ``_map_free_text`` visits them."""
    yield result.error
    yield from result.notes
    yield from result.student_notes
    for t in result.tests:
        yield t.message
        yield t.hint
        for c in t.cases:
            yield c.message
            yield c.hint


def _map_free_text(result: GradeResult, f: Callable[[str], str]) -> GradeResult:
    """``result`` with ``f`` applied to every free-text field, always in the same order."""
    tests = []
    for t in result.tests:
        cases = [dataclasses.replace(c, message=f(c.message), hint=f(c.hint)) for c in t.cases]
        tests.append(dataclasses.replace(t, message=f(t.message),
                                         hint=f(t.hint),
                                         cases=cases))
    return dataclasses.replace(result, error=f(result.error), notes=[f(n) for n in result.notes],
                               student_notes=[f(n) for n in result.student_notes], tests=tests)

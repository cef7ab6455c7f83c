"""The scoring policy, as pure functions of case outcomes: no pytest, no I/O.

A rubric entry (one test function) scores its points times the fraction of its cases that ran
and passed; skipped cases count for nothing either way (a test with every case skipped is worth
0 of 0). The diagnoses reported for a test are those explaining the most failing cases.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rnngrade.diagnosis.evidence import summarise_diagnosis
from rnngrade.diagnosis.structural import localise_cases
from rnngrade.errors import GraderError
from rnngrade.grading.budget import DIAGNOSIS_SKIPPED
from rnngrade.grading.rubric import Rubric
from rnngrade.lab_contract import NO_STRUCTURE, Structure
from rnngrade.labs import Lab
from rnngrade.results.model import (
    CaseResult,
    Diagnosis,
    DiagnosisSource,
    FailureKind,
    GradeResult,
    Measurement,
    Outcome,
    Status,
    TestResult,
)

LOCALISED = DiagnosisSource.LOCALISED.value
EDIT = DiagnosisSource.EDIT.value

NOT_LOADED = "not graded: the submission could not be loaded"


@dataclass(frozen=True)
class CaseOf:
    """Which rubric test a collected case belongs to, and the case's name."""

    test: str
    case: str


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def partial_credit(points: float, passed: int, ran: int) -> float:
    """``points`` times the fraction of the cases that ran and passed (0 when none ran)."""
    return round(points * passed / ran, 4) if ran else 0.0


def outcome_of(cases: Sequence[CaseResult]) -> Outcome:
    """passed (every case that ran), partial (some), error (every failure an error), failed,
    or skipped (no case ran)."""
    ran = [c for c in cases if c.outcome != Outcome.SKIPPED]
    failures = [c for c in ran if c.outcome != Outcome.PASSED]
    if not ran:
        return Outcome.SKIPPED
    if not failures:
        return Outcome.PASSED
    if len(failures) < len(ran):
        return Outcome.PARTIAL
    return Outcome.ERROR if all(c.outcome == Outcome.ERROR for c in failures) else Outcome.FAILED


def summarise_test(name: str, title: str, points: float, visibility: str,
                   cases: list[CaseResult], checks: list[dict[str, Any]],
                   figures: list[dict[str, Any]] | None = None,
                   structure: Structure = NO_STRUCTURE) -> TestResult:
    """One rubric entry's result from its cases (partial credit, message, diagnoses; the lab's
    ``structure`` names what the structural diagnosis reads)."""
    ran = [c for c in cases if c.outcome != Outcome.SKIPPED]
    passed = [c for c in ran if c.outcome == Outcome.PASSED]
    failures = [c for c in ran if c.outcome != Outcome.PASSED]
    if failures:
        message = failure_summary(failures)
    else:
        message = "" if ran else (cases[0].message if cases else "no cases")
    diagnosis, hint = rank_diagnoses(failures, cases, any(c.get("timed") for c in checks),
                                     structure)
    return TestResult(
        name=name, title=title, score=partial_credit(points, len(passed), len(ran)) if failures
        else (points if ran else 0.0), max_score=points if ran else 0.0,
        outcome=outcome_of(cases), visibility=visibility, message=message,
        diagnosis=diagnosis, hint=hint, cases_passed=len(passed), cases_total=len(cases),
        cases_skipped=len(cases) - len(ran), seconds=round(sum(c.seconds for c in cases), 4),
        cases=cases, checks=checks, figures=figures or [])


def rank_diagnoses(failures: Sequence[CaseResult], cases: Sequence[CaseResult] = (),
                   timed: bool = False, structure: Structure = NO_STRUCTURE
                   ) -> tuple[list[Diagnosis], str]:
    """The diagnoses that explain the most failing cases (a mistake can coincide with another on
    a special case, e.g. a zero initial state), their evidence restated over the test, and the
    hint of the best one; without any, what the pattern of passing and failing ``cases``
    locates (``timed``: the test's checks compare sequences along time; ``structure``: the
    lab's names for its cases). An edit of the
    reference's formula comes first, but only when every failing case localised to its value
    names it too (``_contradicted``)."""
    refuted = _contradicted(failures) | _outvoted(failures) | _unmatched(failures)
    named = _ranked(failures, lambda d: d.source not in (LOCALISED, EDIT)
                    and d.name not in refuted)
    edits = _ranked(failures, lambda d: d.source == EDIT and d.name not in refuted)
    inside = _ranked(failures, lambda d: d.source == LOCALISED)  # where inside: an addition
    if not named:
        # an edit says what is wrong where the pattern of cases says only where: the pattern
        # is no headline beside it
        located = None if edits else localise_cases(cases, timed, structure)
        if located is not None:
            return [*edits, located, *inside], located.hint
        return [*edits, *inside], next((c.hint for c in failures if c.hint), "")
    if any(d.is_known_mistake for d in named):
        return named, next((d.hint for d in named if d.hint), "")  # said alone
    return [*edits, *named, *inside], next((d.hint for d in named if d.hint), "")


def _contradicted(failures: Sequence[CaseResult]) -> set[str]:
    """The edit diagnoses some failing case contradicts: it localises the mistake to the same
    value (``localised:f:node`` for ``edit:f:node:...``) without naming that edit."""
    refuted: set[str] = set()
    edits = {d.name for c in failures for d in c.diagnosis if d.source == EDIT}
    for case in failures:
        here = {d.name for d in case.diagnosis}
        for d in case.diagnosis:
            if d.source != LOCALISED:
                continue
            value = d.name.removeprefix(f"{LOCALISED}:")
            refuted.update(e for e in edits if e.startswith(f"{EDIT}:{value}:")
                           and e not in here)
    return refuted


def _outvoted(failures: Sequence[CaseResult]) -> set[str]:
    """The mistakes (known or edits) some failing case tells apart from another: that case
    names another mistake and not this one, so this one does not reproduce it. Such a mistake
    is no headline, however many other cases it matches (on those, the two coincide)."""
    named = [{d.name for d in case.diagnosis if d.source in _MISTAKES} for case in failures]
    every = set().union(*named) if named else set()
    return {m for m in every if any(here and m not in here for here in named)}


_MISTAKES = (DiagnosisSource.KNOWN_MISTAKE.value, EDIT)


def _unmatched(failures: Sequence[CaseResult]) -> set[str]:
    """The known mistakes some diagnosed failing case does not reproduce. A case is diagnosed
    after every mistake that may differ from the course's result on its inputs was run on
    them; one that names something else (a slip, a symptom, where it goes wrong), or a value
    check that names nothing (its diagnosis not skipped), and not this mistake, shows that the
    mistake's result differs from the student's there: the mistake is not the student's,
    however many other cases it matches (on those it coincides)."""
    known = DiagnosisSource.KNOWN_MISTAKE.value
    every = {d.name for c in failures for d in c.diagnosis if d.source == known}
    telling = [c for c in failures if c.diagnosis or (
        c.kind == FailureKind.CHECK and DIAGNOSIS_SKIPPED not in c.message)]
    return {m for m in every for c in telling if m not in {d.name for d in c.diagnosis}}


def _ranked(failures: Sequence[CaseResult], kept: Callable[[Diagnosis], bool]
            ) -> list[Diagnosis]:
    """Of the diagnoses ``kept``, those that explain the most failing cases, evidence restated
    over the test."""
    counts: dict[str, int] = defaultdict(int)
    first: dict[str, Diagnosis] = {}
    for case in failures:
        for name in dict.fromkeys(d.name for d in case.diagnosis if kept(d)):
            counts[name] += 1
        for d in case.diagnosis:
            if kept(d):
                first.setdefault(d.name, d)
    if not counts:
        return []
    best = max(counts.values())
    return [summarise_diagnosis(first[d], best, len(failures)) for d, n in counts.items()
            if n == best]


def failure_summary(failures: Sequence[CaseResult], limit: int = 3) -> str:
    """The distinct messages of the failing cases, each with the first case that showed it."""
    seen: dict[str, list[str]] = {}
    for case in failures:
        seen.setdefault(case.message, []).append(case.case)
    parts = []
    for message, names in list(seen.items())[:limit]:
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        parts.append(f"case {names[0]}{more}: {message}")
    if len(seen) > limit:
        parts.append(f"... and {len(seen) - limit} other failure message(s)")
    return "\n".join(parts)


def build_results(rubric: Rubric, items: Mapping[str, CaseOf], cases: Mapping[str, CaseResult],
                  checks: Mapping[str, list[dict[str, Any]]],
                  figures: Mapping[str, list[dict[str, Any]]] | None = None,
                  measurements: Mapping[str, list[Measurement]] | None = None,
                  structure: Structure = NO_STRUCTURE) -> list[TestResult]:
    """One TestResult per rubric entry, in rubric order, from the collected items (by node id),
    their outcomes and check records. A collected case with no outcome did not run.
    ``structure``: the lab's names the structural diagnosis reads."""
    by_test: dict[str, list[tuple[str, CaseResult]]] = defaultdict(list)
    for nodeid, item in items.items():
        case = cases.get(nodeid, CaseResult(item.case, Outcome.ERROR, "did not run"))
        by_test[item.test].append((nodeid, case))
    rubric.check_matches(set(by_test))
    results = []
    for name, entry in rubric.entries.items():
        found = by_test.get(name, [])
        result = summarise_test(
            name, entry.title, entry.points, entry.visibility, [c for _, c in found],
            [r for nodeid, _ in found for r in checks.get(nodeid, [])],
            [f for nodeid, _ in found for f in (figures or {}).get(nodeid, [])], structure)
        result.measurements = [m for nodeid, _ in found
                               for m in (measurements or {}).get(nodeid, [])]
        results.append(result)
    return results


def not_graded(lab: Lab, rubric: Rubric, name: str, device: str, error: str,
               seconds: float = 0.0, graded_at: str = "", message: str = NOT_LOADED, *,
               status: Status = Status.LOAD_ERROR, grader_version: str = "",
               detail: str = "") -> GradeResult:
    """A submission that could not be graded at all: every test at 0 of its points, the reason
    (student-facing) in ``error``; ``detail`` is for instructors only."""
    tests = [TestResult(e.test, e.title, 0.0, e.points, Outcome.ERROR, e.visibility,
                        message=message)
             for e in rubric.entries.values()]
    return GradeResult(
        lab=lab.name, lab_title=lab.title, submission=name, score=0.0,
        max_score=rubric.max_points, execution_time=seconds, tests=tests, device=device,
        status=status, error=error, grader_version=grader_version,
        graded_at=graded_at or now(), grader_detail=detail)


def grader_failed(lab: Lab, rubric: Rubric | None, name: str, device: str, detail: str,
                  seconds: float = 0.0, grader_version: str = "") -> GradeResult:
    """A submission the grader failed on: status ``grader_error``, nothing scored, the student
    told only ``GraderError.STUDENT_MESSAGE``, the instructor the ``detail``."""
    rubric = rubric or Rubric(lab.name, {})
    return not_graded(lab, rubric, name, device, GraderError.STUDENT_MESSAGE, seconds,
                      message=f"not graded: {GraderError.STUDENT_MESSAGE}",
                      status=Status.GRADER_ERROR, grader_version=grader_version, detail=detail)

"""The scoring policy as pure functions: partial credit, outcomes, diagnoses, summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.errors import RubricError
from rnngrade.grading.rubric import Rubric, RubricEntry
from rnngrade.grading.scoring import (
    CaseOf,
    build_results,
    failure_summary,
    outcome_of,
    partial_credit,
    rank_diagnoses,
    summarise_test,
)
from rnngrade.results.model import CaseResult, Diagnosis, Outcome

P, F, E, S = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED


def cases(*outcomes: Outcome, message: str = "wrong") -> list[CaseResult]:
    return [CaseResult(f"c{i}", o, "" if o == P else message) for i, o in enumerate(outcomes)]


def test_partial_credit_is_the_fraction_of_cases_that_ran_and_passed():
    assert partial_credit(3, 2, 3) == 2.0
    assert partial_credit(2, 1, 3) == 0.6667  # rounded to 4 places: the same every run
    assert partial_credit(5, 0, 0) == 0.0


@pytest.mark.parametrize(("outcomes", "expected"), [
    ((P, P), P), ((P, F), Outcome.PARTIAL), ((F, E), F), ((E, E), E), ((S, S), S),
    ((P, S), P), ((E, S), E), ((), S)])
def test_outcome_of_a_test(outcomes, expected):
    assert outcome_of(cases(*outcomes)) == expected


def test_summarise_counts_skipped_cases_for_nothing():
    result = summarise_test("t", "T", 4.0, "visible", cases(P, F, S), [])
    assert (result.score, result.max_score, result.outcome) == (2.0, 4.0, Outcome.PARTIAL)
    assert (result.cases_passed, result.cases_total, result.cases_skipped) == (1, 3, 1)
    assert result.message == "case c1: wrong"
    skipped = summarise_test("t", "T", 4.0, "visible", [CaseResult("c", S, "no GPU")], [])
    assert (skipped.score, skipped.max_score, skipped.message) == (0.0, 0.0, "no GPU")
    full = summarise_test("t", "T", 4.0, "visible", cases(P, P), [])
    assert (full.score, full.outcome, full.message) == (4.0, P, "")


def test_rank_diagnoses_keeps_those_explaining_most_failures_and_their_hint():
    x, y = Diagnosis("x", "one", hint="look at x"), Diagnosis("y", "two", hint="look at y")
    failures = [CaseResult("a", F, diagnosis=[x, y], hint="look at x"),
                CaseResult("b", F, diagnosis=[y], hint="look at y"),
                CaseResult("c", F, diagnosis=[y, x])]
    top, hint = rank_diagnoses(failures)
    assert [(d.name, d.text) for d in top] == [("y", "two")] and hint == "look at y"
    assert top[0].evidence == "your results equal this mistake's on 3 of the 3 failing cases"
    assert rank_diagnoses([CaseResult("a", F, hint="only hint")]) == ([], "only hint")


def test_failure_summary_groups_identical_messages_and_caps_them():
    failures = [CaseResult(f"c{i}", F, f"m{i % 5}") for i in range(10)]
    text = failure_summary(failures, limit=3).splitlines()
    assert text[0] == "case c0 and 1 more: m0"
    assert text[-1] == "... and 2 other failure message(s)" and len(text) == 4


def test_build_results_follows_the_rubric_and_refuses_a_mismatch():
    rubric = Rubric("lab", {"t1": RubricEntry("t1", 2.0, "T1", "visible"),
                            "t2": RubricEntry("t2", 1.0, "T2", "hidden")}, Path("r.yaml"))
    items = {"f::t1[a]": CaseOf("t1", "a"), "f::t1[b]": CaseOf("t1", "b"),
             "f::t2": CaseOf("t2", "default")}
    outcomes = {"f::t1[a]": CaseResult("a", P), "f::t2": CaseResult("default", P)}
    checks = {"f::t1[a]": [{"check": "x"}]}
    t1, t2 = build_results(rubric, items, outcomes, checks)
    assert (t1.name, t1.score, t1.cases[1].message, t1.checks) == ("t1", 1.0, "did not run",
                                                                    [{"check": "x"}])
    assert (t2.name, t2.score, t2.visibility) == ("t2", 1.0, "hidden")
    with pytest.raises(RubricError, match="without a rubric entry: t3"):
        build_results(rubric, {**items, "f::t3": CaseOf("t3", "default")}, outcomes, {})

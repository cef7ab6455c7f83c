"""The pull-request comment for a failing submission reads well and fits a comment."""

from __future__ import annotations

import dataclasses
import re

import pytest

from rnngrade.ci.comment import render_pr_comment
from rnngrade.ci.github import MARKER
from rnngrade.grading.engine import grade
from rnngrade.results.model import Diagnosis, GradeResult

from ..conftest import SUBMISSIONS

GITHUB_LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def failing() -> GradeResult:
    """lab1 where every step is fed a0: some tests pass, four fail with a named mistake."""
    return grade(SUBMISSIONS / "lab1" / "buggy_feeds_a0", "lab1", device="cpu", inprocess=True)


def sections(body: str) -> list[str]:
    return re.findall(r"^#{1,3} .+$", body, re.MULTILINE)


def test_the_comment_for_a_failing_submission_reads_well(failing):
    body = render_pr_comment([failing], sha="abcdef0123456789",
                             source="for the labs whose files this pull request changes")
    lines = body.splitlines()
    assert lines[0] == MARKER
    failed = [t for t in failing.tests if not t.passed]
    passed = [t for t in failing.tests if t.passed]
    assert failed and passed and 0 < failing.score < failing.max_score
    score = f"{failing.score:.2f}".rstrip("0").rstrip(".")
    assert sections(body) == ["# 🤖 rnngrade feedback for abcdef0",
                              f"## lab1 — RNN forward, step by step: {score} / 24",
                              "### What to fix"]
    # the score table: one row per lab, the score in bold, how many tests to fix
    assert "| lab | score | |" in lines
    assert f"| lab1 — RNN forward, step by step | **{score} / 24** | {len(failed)} tests to fix |" \
        in lines
    assert "<sub>Graded for the labs whose files this pull request changes.</sub>" in lines
    # every test listed with its points; the one mistake named once, with its hint, and the
    # failing tests it explains folded under its evidence
    for test in failing.tests:
        assert test.title in body
    assert body.count("likely mistake:** every step is fed the initial state a0") == 1
    assert body.count("<details") == body.count("</details>") == 1
    summary = re.findall(r"<summary>(.+?)</summary>", body)[0]
    assert summary.startswith("Evidence: your results equal this mistake's on")
    assert summary.endswith(f"{len(failed)} tests affected")
    assert "- **Hint:**" in body and "check `rnn_forward" in body
    assert "largest error" in body
    # never a traceback, test source or expected value
    for forbidden in ("Traceback", "expected", "assert ", "def test_"):
        assert forbidden not in body
    assert lines[-1].startswith("<sub>These are the course's hidden tests")
    assert len(body.encode()) < GITHUB_LIMIT


def test_tables_have_as_many_cells_as_their_header(failing):
    body = render_pr_comment([failing], [("lab5", "no hidden tests for this lab yet")])
    table: list[str] = []
    for line in body.splitlines() + [""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {len(re.split(r"(?<!\\)\|", row)) for row in table}
            assert len(widths) == 1, table
            table = []


def test_a_huge_result_is_shortened_below_the_comment_limit(failing):
    # forty different mistakes, each shown once with its first failure message
    tests = [dataclasses.replace(t, name=f"{t.name}_{i}", title=f"{t.title} #{i}",
                                 message="x" * 4000, outcome="failed", score=0.0,
                                 diagnosis=[Diagnosis(f"mistake_{i}", f"mistake {i}", f"f{i}")])
             for i in range(40) for t in failing.tests[:1]]
    huge = dataclasses.replace(failing, tests=tests)
    body = render_pr_comment([huge])
    assert len(body.encode()) < GITHUB_LIMIT and body.startswith(MARKER)
    assert "feedback shortened to fit a comment" in body or "feedback cut to fit" in body


def test_hidden_tests_count_in_the_score_but_are_not_listed(failing):
    secret = next(t for t in failing.tests if not t.passed)
    tests = [dataclasses.replace(t, visibility="hidden") if t is secret else t
             for t in failing.tests]
    body = render_pr_comment([dataclasses.replace(failing, tests=tests)])
    assert secret.title not in body
    points = f"{secret.max_score:.2f}".rstrip("0").rstrip(".")
    assert f"1 hidden test not shown: {secret.score:g} / {points} points" in body
    score = f"{failing.score:.2f}".rstrip("0").rstrip(".")
    assert f"**{score} / 24**" in body


def test_labs_without_hidden_tests_and_pull_requests_without_labs():
    body = render_pr_comment([], [("lab6", "no hidden tests for this lab yet: run its public "
                                           "tests")])
    assert "| lab6 | — | no hidden tests for this lab yet: run its public tests |" in body
    assert "names no lab" in render_pr_comment([])


def test_a_submission_that_cannot_be_loaded_says_why():
    result = grade(SUBMISSIONS / "bad" / "not_json.ipynb", "lab1", device="cpu", inprocess=True)
    body = render_pr_comment([result])
    assert "⛔ not graded" in body and "could not be graded" in body and "not valid JSON" in body

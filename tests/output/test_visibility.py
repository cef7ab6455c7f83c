"""The rubric's visibility, applied by one owner to every student-facing report; instructor
outputs keep every test."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest

from rnngrade.ci.comment import render_pr_comment
from rnngrade.grading.engine import grade
from rnngrade.results.model import GradeResult
from rnngrade.results.render import (
    render_feedback_html,
    render_feedback_md,
    render_junit,
    render_results_json,
)
from rnngrade.results.visibility import student_view

from ..conftest import SUBMISSIONS

VISIBILITY = {"test_softmax_random": "hidden", "test_rnn_forward_random": "after_due_date",
              "test_rnn_cell_forward_random": "after_published",
              "test_rnn_forward_long_sequence": "no such visibility"}


@pytest.fixture(scope="module")
def result() -> GradeResult:
    """lab1 fed a0 at every step (some tests pass, some fail), with a mix of visibilities."""
    graded = grade(SUBMISSIONS / "lab1" / "buggy_feeds_a0", "lab1", device="cpu", inprocess=True)
    tests = [dataclasses.replace(t, visibility=VISIBILITY.get(t.name, "visible"))
             for t in graded.tests]
    assert {t.name for t in tests} >= set(VISIBILITY)
    return dataclasses.replace(graded, tests=tests)


def _title(result: GradeResult, name: str) -> str:
    return next(t.title for t in result.tests if t.name == name)


def test_student_view_withholds_hidden_and_unknown_visibility_and_keeps_the_score(result):
    view = student_view(result)
    names = {t.name for t in view.tests}
    assert "test_softmax_random" not in names and "test_rnn_forward_long_sequence" not in names
    assert {"test_rnn_forward_random", "test_rnn_cell_forward_random"} <= names
    assert view.score == result.score and view.max_score == result.max_score
    withheld = [t for t in result.tests if t.name in ("test_softmax_random",
                                                      "test_rnn_forward_long_sequence")]
    points = sum(t.max_score for t in withheld)
    assert view.notes[-1].startswith("2 hidden tests not shown: ")
    assert view.notes[-1].endswith(f" / {points:g} points")


@pytest.mark.parametrize("render", [render_feedback_html, render_feedback_md, render_junit,
                                    lambda r: render_pr_comment([r])])
def test_every_student_report_applies_it(result, render):
    text = render(result)
    for name in ("test_softmax_random", "test_rnn_forward_long_sequence"):
        assert _title(result, name) not in text
        assert name not in text
    for name in ("test_rnn_forward_random", "test_rnn_cell_forward_random"):
        assert _title(result, name) in text or name in text
    assert "2 hidden tests not shown" in text or render is render_junit


def test_junit_lists_only_what_the_student_may_see(result):
    cases = ET.fromstring(render_junit(result)).iter("testcase")
    assert {c.get("name") for c in cases} == {t.name for t in student_view(result).tests}


def test_results_json_keeps_every_test_with_its_visibility(result):
    data = json.loads(render_results_json(result))
    assert {t["test_id"]: t["visibility"] for t in data["tests"]} == \
        {t.name: t.visibility for t in result.tests}

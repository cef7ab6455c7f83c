"""A result is cleaned once, where it crosses from untrusted to trusted: a batch cleans what the
worker returned before storing it, and its reports are drawn from that cleaned result without
cleaning it again; anything else (a copy, a result the gradebook gives back) is cleaned on its
way to a report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rnngrade.gradebook import batch
from rnngrade.gradebook.entries import Entry
from rnngrade.gradebook.messages import Graded
from rnngrade.gradebook.store import GRADED, Gradebook, Recorded
from rnngrade.labs import get_lab
from rnngrade.results import render, sanitize
from rnngrade.results.model import GradeResult, Outcome, TestResult

HOSTILE = "\x1b[2J\x1b]0;owned\x07bad\ud800 \u202eeulav"


def hostile_result(text: str = HOSTILE) -> GradeResult:
    test = TestResult("test_one", "one: the first test", 0.0, 2.0, Outcome.FAILED, "visible",
                      message=text)
    return GradeResult("lab1", "RNN forward", "x.py", 0.0, 2.0, 0.1, [test], error=text)


@pytest.fixture
def cleanings(monkeypatch) -> list[GradeResult]:
    """Every result ``clean_result`` is called on, by ``clean`` or by a renderer."""
    seen: list[GradeResult] = []
    original = sanitize.clean_result

    def counted(result: GradeResult) -> GradeResult:
        seen.append(result)
        return original(result)

    monkeypatch.setattr(sanitize, "clean_result", counted)
    monkeypatch.setattr(render, "clean_result", counted)
    return seen


def assert_inert(folder: Path) -> None:
    for name in ("results.json", "feedback.html", "feedback.md", "junit.xml"):
        text = (folder / name).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\u202e" not in text and "bad" in text, name


def test_a_batch_cleans_a_fresh_result_once_and_reports_it_as_stored(tmp_path, cleanings):
    outcome = Graded(hostile_result().to_dict(), "w:1")
    item, cleaned = batch._recorded(Entry("ann", tmp_path / "ann.py"), None, outcome,
                                    get_lab("lab1"), None, "cpu")  # type: ignore[arg-type]
    assert item.result is cleaned.result and "\x1b" not in item.result.error
    assert batch._write_reports(cleaned, tmp_path / "ann") == ""
    assert len(cleanings) == 1  # at the storage boundary, not again for the reports
    assert_inert(tmp_path / "ann")


def test_a_result_the_gradebook_gives_back_is_cleaned_again(tmp_path, cleanings):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run("lab1", "v1", "cpu", "inprocess", "local", 1, "class")
    # a gradebook written by another grader version, or changed since, is not to be trusted
    # (SQLite stores no lone surrogate, so this one holds the rest)
    stored = hostile_result(HOSTILE.replace("\ud800", ""))
    result_id = book.record(run, Recorded("ann", "ann.py", "py", "sha", 10, GRADED, stored),
                            "v1", "inprocess")
    assert batch._write_reports(book.load_result(result_id), tmp_path / "ann") == ""
    assert len(cleanings) == 1
    assert_inert(tmp_path / "ann")


def test_only_a_cleaned_result_itself_skips_cleaning(tmp_path, cleanings):
    cleaned = sanitize.clean(hostile_result())
    assert render.prepared(cleaned, render.Audience.INSTRUCTOR) is cleaned.result
    copy = dataclasses.replace(cleaned.result, error=HOSTILE)  # derived: untrusted again
    render.write_reports(copy, tmp_path / "copy")
    assert len(cleanings) == 2
    assert_inert(tmp_path / "copy")

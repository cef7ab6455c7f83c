"""`rnngrade grade` end to end on the shipped lab1 sample submissions."""

import html
import json
from pathlib import Path

import jsonschema
import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.results.render import load_schema

from .conftest import SUBMISSIONS

LAB1 = SUBMISSIONS / "lab1"
BAD = SUBMISSIONS / "bad"


def run_grade(submission: Path, out: Path, *extra: str) -> tuple[int, dict]:
    code = main(["grade", str(submission), "--lab", "lab1", "--out", str(out), "--inprocess",
                 *extra])
    results = out / "results.json"
    return code, json.loads(results.read_text()) if results.exists() else {}


@pytest.mark.parametrize("name", ["reference", "reference_lab1.ipynb", "reference.zip"])
def test_reference_in_every_form_gets_full_marks(tmp_path, name):
    code, results = run_grade(LAB1 / name, tmp_path)
    assert code == ExitCode.OK
    assert results["score"] == results["max_score"] > 0
    jsonschema.validate(results, load_schema())
    for report in ("feedback.html", "feedback.md", "junit.xml"):
        assert (tmp_path / report).stat().st_size > 0


def test_stub_scores_zero_with_not_implemented_messages(tmp_path):
    code, results = run_grade(LAB1 / "stub", tmp_path)
    assert code == ExitCode.OK and results["score"] == 0
    assert all("not implemented yet" in t["output"] for t in results["tests"]
               if t["outcome"] != "skipped")
    assert "Traceback" not in (tmp_path / "feedback.md").read_text()


@pytest.mark.parametrize("name, failing_check, mistake", [
    ("buggy_feeds_a0", "check `rnn_forward`", "loop_feeds_a0"),
    ("buggy_softmax_axis", "check `softmax(x)`", "softmax_wrong_axis"),
    ("buggy_no_batch", "check `rnn_cell_forward`", "sigmoid_for_tanh"),
])
def test_buggy_versions_lose_points_with_a_message_naming_the_check(tmp_path, name,
                                                                  failing_check, mistake):
    code, results = run_grade(LAB1 / name, tmp_path)
    assert code == ExitCode.OK and 0 < results["score"] < results["max_score"]
    failing = [t for t in results["tests"] if t["status"] == "failed"]
    assert any(failing_check in t["output"] for t in failing)
    assert any(d["name"] == mistake for t in failing for d in t["diagnosis"])
    jsonschema.validate(results, load_schema())


def test_missing_function_scores_zero_for_its_tests_and_says_so(tmp_path):
    _, results = run_grade(LAB1 / "buggy_no_batch", tmp_path)
    batch = [t for t in results["tests"] if t["test_id"].startswith("test_rnn_forward_batch")]
    assert batch and all(t["score"] == 0 for t in batch)
    assert all("does not define `rnn_forward_batch`" in t["output"] for t in batch)
    assert any("missing function(s): rnn_forward_batch" in n for n in results["notes"])


@pytest.mark.parametrize("name, notes, fragment", [
    # the grader's own note: it parses the source itself
    ("syntax_error", "notes", "do not parse as Python"),
    # what the submission's top-level code raised: quoted as its own output
    ("import_error", "student_notes", "No module named 'my_helpers_that_are_not_submitted'"),
])
def test_broken_code_grades_with_a_clear_note(tmp_path, name, notes, fragment):
    code, results = run_grade(BAD / name, tmp_path)
    assert code == ExitCode.OK
    assert any(fragment in note for note in results[notes])
    assert results["score"] < results["max_score"]


@pytest.mark.parametrize("name, fragment", [
    ("not_json.ipynb", "not valid JSON"),
    ("traversal.zip", "contains '..'"),
])
def test_unloadable_submissions_get_a_report_and_exit_code_3(tmp_path, name, fragment):
    code, results = run_grade(BAD / name, tmp_path)
    assert code == ExitCode.UNLOADABLE
    assert results["status"] == "load_error" and fragment in results["error"]
    assert results["score"] == 0 and len(results["tests"]) > 0
    assert fragment in html.unescape((tmp_path / "feedback.html").read_text())
    jsonschema.validate(results, load_schema())


def test_unknown_lab_is_a_usage_error(tmp_path, capsys):
    code = main(["grade", str(LAB1 / "reference"), "--lab", "lab99", "--out", str(tmp_path)])
    assert code == ExitCode.USAGE
    assert "unknown lab 'lab99'" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


def test_missing_submission_path_is_a_usage_error(tmp_path, capsys):
    code = main(["grade", str(tmp_path / "nope"), "--lab", "lab1", "--out", str(tmp_path)])
    assert code == ExitCode.USAGE and "does not exist" in capsys.readouterr().err


def test_feedback_markdown_fits_a_pull_request_comment(tmp_path):
    run_grade(LAB1 / "stub", tmp_path)
    assert len((tmp_path / "feedback.md").read_bytes()) < 64 * 1024

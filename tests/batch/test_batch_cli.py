"""`rnngrade batch` end to end: the shipped samples and bad entries into a gradebook, reruns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.paths import course_root

from ..synthetic import write_bad
from .conftest import (
    INPROCESS,
    assert_csv_matches_gradebook,
    assert_one_current_result_each,
    current,
    query,
    read_csv,
)

SUBMISSIONS = course_root() / "fixtures" / "submissions"


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """The lab1 samples, the bad fixtures and three more bad entries, in one folder."""
    folder = tmp_path / "class"
    shutil.copytree(SUBMISSIONS / "lab1", folder)
    for entry in (SUBMISSIONS / "bad").iterdir():
        copy = shutil.copytree if entry.is_dir() else shutil.copy2
        copy(entry, folder / entry.name)
    write_bad(folder, "empty_folder", "empty")
    write_bad(folder, "corrupt", "corrupt_zip")
    write_bad(folder, "essay", "text")
    return folder


def batch(*args: str) -> int:
    return main(["batch", *args, "--lab", "lab1", *INPROCESS, "--quiet"])


def test_batch_grades_every_entry_and_reruns_only_what_changed(samples, tmp_path, capsys):
    out = tmp_path / "out"
    assert batch(str(samples), "--out", str(out), "-j", "2") == ExitCode.OK
    printed = capsys.readouterr().out
    assert "summary.html" in printed and "grades.csv" in printed
    rows = current(out)
    students = {"buggy_feeds_a0", "buggy_no_batch", "buggy_softmax_axis", "reference",
                "reference.zip", "reference_lab1", "stub", "import_error", "not_json",
                "syntax_error", "traversal", "empty_folder", "corrupt", "essay"}
    assert set(rows) == students
    assert_one_current_result_each(out, students)
    assert_csv_matches_gradebook(out)
    for name in ("reference", "reference.zip", "reference_lab1"):
        assert rows[name]["status"] == "graded" and rows[name]["percent"] == 100.0
    assert rows["buggy_feeds_a0"]["status"] == "graded" and 0 < rows["buggy_feeds_a0"][
        "percent"] < 100
    errors = {name: rows[name]["error"] for name in rows if rows[name]["status"] != "graded"}
    assert set(errors) == {"not_json", "traversal", "empty_folder", "corrupt", "essay"}
    assert "is empty" in errors["empty_folder"]
    assert "not a readable zip archive" in errors["corrupt"]
    assert "expected a folder, a .py file" in errors["essay"]
    diagnoses = query(out, "SELECT t.diagnosis FROM test_results t JOIN results r ON "
                           "r.id = t.result_id WHERE r.student_id = 'buggy_feeds_a0'")
    assert any("loop_feeds_a0" in row["diagnosis"] for row in diagnoses)
    for student in students:
        folder = out / "lab1" / "students" / student
        assert json.loads((folder / "results.json").read_text())["lab"] == "lab1"
        assert (folder / "feedback.html").stat().st_size > 0
        assert (folder / "feedback.md").stat().st_size > 0
    summary = (out / "lab1" / "summary.html").read_text()
    assert "lab1" in summary and "loop_feeds_a0" in summary and "empty_folder" in summary

    # A rerun grades nothing; a changed entry is the only one graded again.
    before = read_csv(out)
    (out / "lab1" / "students" / "stub" / "feedback.html").unlink()  # killed before the reports
    assert batch(str(samples), "--out", str(out)) == ExitCode.OK
    assert "kept 14" in capsys.readouterr().out
    assert read_csv(out) == before
    assert (out / "lab1" / "students" / "stub" / "feedback.html").exists()
    fixed = samples / "buggy_feeds_a0" / "rnn.py"
    fixed.write_text((samples / "reference" / "rnn.py").read_text())
    assert batch(str(samples), "--out", str(out), "-j", "1") == ExitCode.OK
    assert "graded 1, kept 13" in capsys.readouterr().out
    after = read_csv(out)
    assert after["buggy_feeds_a0"]["percent"] == "100.00"
    assert after["buggy_feeds_a0"]["submission_sha256"] != before["buggy_feeds_a0"][
        "submission_sha256"]
    assert {k: v for k, v in after.items() if k != "buggy_feeds_a0"} == {
        k: v for k, v in before.items() if k != "buggy_feeds_a0"}
    assert_one_current_result_each(out, students)
    assert len(query(out, "SELECT id FROM results")) == len(students) + 1
    runs = query(out, "SELECT status, n_graded, n_skipped FROM runs ORDER BY id")
    assert [tuple(r) for r in runs] == [("finished", 14, 0), ("finished", 0, 14),
                                       ("finished", 1, 13)]


def test_regrade_grades_everything_again_and_keeps_history(tmp_path, capsys):
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("reference", "stub"):
        shutil.copytree(SUBMISSIONS / "lab1" / name, folder / name)
    out = tmp_path / "out"
    assert batch(str(folder), "--out", str(out), "-j", "1") == ExitCode.OK
    first = read_csv(out)
    assert batch(str(folder), "--out", str(out), "-j", "1", "--regrade") == ExitCode.OK
    assert "graded 2, kept 0" in capsys.readouterr().out
    second = read_csv(out)
    assert {k: v["score"] for k, v in first.items()} == {k: v["score"] for k, v in second.items()}
    assert_one_current_result_each(out, {"reference", "stub"})
    assert len(query(out, "SELECT id FROM results")) == 4
    assert_csv_matches_gradebook(out)


def test_batch_usage_errors(tmp_path, capsys):
    assert main(["batch", str(tmp_path / "nope"), "--lab", "lab1", "--out",
                 str(tmp_path / "o")]) == ExitCode.USAGE
    assert "not a folder" in capsys.readouterr().err
    assert main(["batch", str(tmp_path), "--lab", "lab99", "--out",
                 str(tmp_path / "o")]) == ExitCode.USAGE
    assert "unknown lab 'lab99'" in capsys.readouterr().err
    assert main(["batch", str(tmp_path), "--lab", "lab1", "--out", str(tmp_path / "o"),
                 "--executor", "dask"]) == ExitCode.USAGE
    assert "--scheduler" in capsys.readouterr().err
    assert main(["batch", str(tmp_path), "--lab", "lab1", "--out", str(tmp_path / "o"),
                 "--device", "cuda", *INPROCESS]) in (ExitCode.GRADER, ExitCode.OK)

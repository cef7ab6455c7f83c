"""One output folder for the whole course: each lab in its own folder, a course-wide
grades.csv, and a summary whose mean counts what grades.csv counts."""

from __future__ import annotations

import statistics

from rnngrade.gradebook.export import CSV_COLUMNS

from .conftest import EMPTY, FULL, batch, entries, read_rows


def test_a_second_lab_replaces_nothing_of_the_first(tmp_path, made_up_grading):
    out = tmp_path / "out"
    batch(entries(tmp_path / "lab1", alice=FULL, bob=EMPTY), "lab1", out)
    lab1_csv = (out / "lab1" / "grades.csv").read_text()
    lab1_summary = (out / "lab1" / "summary.html").read_text()
    lab1_feedback = (out / "lab1" / "students" / "alice" / "feedback.html").read_text()

    report = batch(entries(tmp_path / "lab2", alice=EMPTY, bob=FULL, carol=FULL), "lab2", out)
    assert report.out == out / "lab2"
    assert (out / "lab1" / "grades.csv").read_text() == lab1_csv
    assert (out / "lab1" / "summary.html").read_text() == lab1_summary
    assert (out / "lab1" / "students" / "alice" / "feedback.html").read_text() == lab1_feedback
    assert "lab2" in (out / "lab2" / "summary.html").read_text()
    assert (out / "lab2" / "students" / "carol" / "feedback.html").exists()
    assert not (out / "students").exists() and not (out / "summary.html").exists()

    course = read_rows(out / "grades.csv")
    assert tuple(course[0]) == CSV_COLUMNS
    assert [(r["student_id"], r["lab"], r["status"]) for r in course] == [
        ("alice", "lab1", "graded"), ("alice", "lab2", "load_error"),
        ("bob", "lab1", "load_error"), ("bob", "lab2", "graded"), ("carol", "lab2", "graded")]
    per_lab = [r for lab in ("lab1", "lab2") for r in read_rows(out / lab / "grades.csv")]
    key = ("student_id", "lab", "score", "status")
    assert sorted(tuple(r[k] for k in key) for r in per_lab) == \
        sorted(tuple(r[k] for k in key) for r in course)


def test_summary_mean_counts_an_empty_submission_as_grades_csv_does(tmp_path, made_up_grading):
    out = tmp_path / "out"
    batch(entries(tmp_path / "subs", alice=FULL, bob=EMPTY, carol=FULL), "lab1", out)
    rows = read_rows(out / "lab1" / "grades.csv")
    assert [r["percent"] for r in rows] == ["100.00", "0.00", "100.00"]
    csv_mean = statistics.fmean(float(r["percent"]) for r in rows)
    page = (out / "lab1" / "summary.html").read_text()
    assert f"{csv_mean:.1f}%" in page and "66.7%" in page

"""Helpers for the batch-grading tests."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

from rnngrade.gradebook.store import FILENAME

INPROCESS = ["--inprocess"]  # the tests grade trusted samples; the sandbox has its own tests


def read_csv(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def query(out: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    """Read the gradebook of ``out`` (read-only: a batch may be writing it)."""
    db = sqlite3.connect(f"file:{out / FILENAME}?mode=ro", uri=True, timeout=30)
    db.row_factory = sqlite3.Row
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def current(out: Path) -> dict[str, sqlite3.Row]:
    rows = query(out, "SELECT r.*, s.sha256 FROM results r JOIN submissions s "
                      "ON s.id = r.submission_id WHERE r.current = 1")
    return {row["student_id"]: row for row in rows}


def assert_csv_matches_gradebook(out: Path) -> None:
    """grades.csv and the gradebook's current results agree, student by student."""
    grades = read_csv(out)
    rows = current(out)
    assert set(grades) == set(rows)
    for student, row in rows.items():
        line = grades[student]
        assert float(line["score"]) == round(row["score"], 4)
        assert float(line["max_score"]) == row["max_score"]
        assert float(line["percent"]) == round(row["percent"], 2)
        assert line["submission_sha256"] == row["sha256"]
        assert line["status"] == row["status"]
        assert line["graded_at"] == row["graded_at"]
        assert line["lab"] == row["lab"]


def assert_one_current_result_each(out: Path, students: set[str]) -> None:
    """Every student has exactly one current result, and no result was stored twice."""
    per_student = query(out, "SELECT student_id, SUM(current) AS n_current, COUNT(*) AS n "
                             "FROM results GROUP BY student_id")
    assert {row["student_id"] for row in per_student} == students
    assert all(row["n_current"] == 1 for row in per_student)
    tests = query(out, "SELECT result_id, COUNT(*) AS n FROM test_results GROUP BY result_id")
    assert len({row["n"] for row in tests}) == 1  # every result has all its rubric entries

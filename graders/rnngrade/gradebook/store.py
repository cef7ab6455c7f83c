"""The gradebook: an SQLite database (WAL mode) in the batch's output folder.

Tables: ``students``; ``submissions`` (one row per distinct content, by SHA-256); ``runs`` (one per
``rnngrade batch`` invocation, with the grader version and settings); ``results`` (one per grading
of a submission: score, status, the full GradeResult as JSON); ``test_results`` (one per rubric
entry of a result, with its message and diagnoses). Exactly one result per student and lab is
*current* (a partial unique index enforces it); regrading keeps the history.

Only the coordinator writes. Each graded submission is committed in one transaction as soon as it
arrives, so a run killed at any moment loses nothing that was committed and leaves no partial row.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rnngrade.results.model import EntryStatus, GradeResult

SCHEMA_VERSION = 2  # 2 added overrides and adjustments (created in place on an older book)
FILENAME = "gradebook.sqlite"

# The statuses of a result (see EntryStatus), by their short names.
GRADED, LOAD_ERROR, ERROR = EntryStatus.GRADED, EntryStatus.LOAD_ERROR, EntryStatus.ERROR
TIMEOUT, GRADER_ERROR = EntryStatus.TIMEOUT, EntryStatus.GRADER_ERROR
RETRIED = frozenset({ERROR, GRADER_ERROR})  # a later run grades these again even if unchanged

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    student_id TEXT NOT NULL REFERENCES students(id),
    lab TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    entry_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    UNIQUE (student_id, lab, sha256)
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    lab TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,  -- running, finished, interrupted, failed
    grader_version TEXT NOT NULL,
    device TEXT NOT NULL,
    isolation TEXT NOT NULL,  -- sandbox or inprocess
    executor TEXT NOT NULL,
    workers INTEGER NOT NULL,
    source TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    n_graded INTEGER NOT NULL DEFAULT 0,
    n_skipped INTEGER NOT NULL DEFAULT 0,
    n_errors INTEGER NOT NULL DEFAULT 0,
    seconds REAL
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student_id TEXT NOT NULL REFERENCES students(id),
    lab TEXT NOT NULL,
    current INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    percent REAL NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '[]',
    timeouts INTEGER NOT NULL DEFAULT 0,  -- cases that ran past a time limit
    grader_version TEXT NOT NULL,
    device TEXT NOT NULL,
    isolation TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    execution_time REAL NOT NULL,  -- seconds the grader spent on it
    worker TEXT NOT NULL DEFAULT '',
    result_json TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_current_result
    ON results (student_id, lab) WHERE current = 1;
CREATE INDEX IF NOT EXISTS results_by_submission ON results (submission_id);
CREATE TABLE IF NOT EXISTS test_results (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    test TEXT NOT NULL,
    title TEXT NOT NULL,
    outcome TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    visibility TEXT NOT NULL,
    message TEXT NOT NULL,
    diagnosis TEXT NOT NULL,  -- JSON list of Diagnosis objects (name, text, evidence, ...)
    hint TEXT NOT NULL,
    failure_kinds TEXT NOT NULL,  -- JSON list: check, exception, timeout, ...
    cases_passed INTEGER NOT NULL,
    cases_total INTEGER NOT NULL,
    cases_skipped INTEGER NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (result_id, test)
);
CREATE TABLE IF NOT EXISTS overrides (
    id INTEGER PRIMARY KEY,
    student_id TEXT NOT NULL,
    lab TEXT NOT NULL,
    test TEXT NOT NULL DEFAULT '',  -- '' overrides the lab's total
    score REAL NOT NULL,
    comment TEXT NOT NULL,
    made_by TEXT NOT NULL,
    made_at TEXT NOT NULL,
    dropped_at TEXT  -- set by a regrade with --drop-overrides
);
CREATE INDEX IF NOT EXISTS overrides_by_student ON overrides (lab, student_id);
CREATE TABLE IF NOT EXISTS adjustments (  -- the course file's view of each current result
    student_id TEXT NOT NULL,
    lab TEXT NOT NULL,
    result_id INTEGER NOT NULL,
    submitted_at TEXT NOT NULL DEFAULT '',
    time_source TEXT NOT NULL DEFAULT '',  -- manifest, git, file ('' unknown)
    due TEXT NOT NULL DEFAULT '',
    late_days INTEGER NOT NULL DEFAULT 0,
    penalty REAL NOT NULL DEFAULT 0,
    raw_score REAL NOT NULL,
    final_score REAL NOT NULL,
    points_possible REAL NOT NULL,
    final_points REAL NOT NULL,
    overrides INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (student_id, lab)
);
"""


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Current:
    """A student's current result, as the skip decision needs it."""

    result_id: int
    sha256: str
    status: str
    grader_version: str
    device: str
    isolation: str


@dataclass
class Recorded:
    """What the coordinator records for one entry."""

    student: str
    entry_name: str
    kind: str
    sha256: str
    size_bytes: int
    status: str
    result: GradeResult
    worker: str = ""


class Gradebook:
    """The SQLite gradebook of one output folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60.0, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process
        self.db.execute("PRAGMA foreign_keys=ON")
        self._create()

    def _create(self) -> None:
        with self.transaction() as db:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise RuntimeError(f"{self.path} was written by a newer rnngrade "
                                   f"(schema {row[0]} > {SCHEMA_VERSION})")
            elif int(row[0]) < SCHEMA_VERSION:  # every change so far only added tables
                db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                           (str(SCHEMA_VERSION),))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ runs

    def start_run(self, lab: str, grader_version: str, device: str, isolation: str,
                  executor: str, workers: int, source: str) -> int:
        """Open a run; runs left 'running' by a process that no longer exists become
        'interrupted'."""
        host = socket.gethostname()
        with self.transaction() as db:
            for row in db.execute("SELECT id, host, pid FROM runs WHERE status = 'running'"
                                  ).fetchall():
                if row["host"] != host or not _alive(row["pid"]):
                    db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (row["id"],))
            cur = db.execute(
                "INSERT INTO runs (lab, started_at, status, grader_version, device, isolation, "
                "executor, workers, source, host, pid) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, "
                "?, ?)",
                (lab, now(), grader_version, device, isolation, executor, workers, source, host,
                 os.getpid()))
            assert cur.lastrowid is not None  # an INSERT always sets it
            return cur.lastrowid

    def finish_run(self, run_id: int, status: str, graded: int, skipped: int, errors: int,
                   seconds: float, workers: int | None = None) -> None:
        with self.transaction() as db:
            db.execute("UPDATE runs SET status = ?, finished_at = ?, n_graded = ?, n_skipped = ?, "
                       "n_errors = ?, seconds = ?, workers = COALESCE(?, workers) WHERE id = ?",
                       (status, now(), graded, skipped, errors, round(seconds, 3), workers,
                        run_id))

    def runs(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM runs ORDER BY id").fetchall()

    # ------------------------------------------------------------------ results

    def current(self, lab: str) -> dict[str, Current]:
        """Every student's current result for ``lab``."""
        rows = self.db.execute(
            "SELECT r.id, r.student_id, s.sha256, r.status, r.grader_version, r.device, "
            "r.isolation FROM results r JOIN submissions s ON s.id = r.submission_id "
            "WHERE r.lab = ? AND r.current = 1", (lab,)).fetchall()
        return {row["student_id"]: Current(row["id"], row["sha256"], row["status"],
                                           row["grader_version"], row["device"],
                                           row["isolation"]) for row in rows}

    def record(self, run_id: int, item: Recorded, grader_version: str, isolation: str) -> int:
        """Store one graded entry in a single transaction; it becomes the student's current
        result for the lab. Returns the result id."""
        r = item.result
        stamp = now()
        timeouts = sum(1 for t in r.tests for c in t.cases if c.kind == "timeout")
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO students (id, first_seen) VALUES (?, ?)",
                       (item.student, stamp))
            db.execute("INSERT OR IGNORE INTO submissions (student_id, lab, sha256, entry_name, "
                       "kind, size_bytes, first_seen) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (item.student, r.lab, item.sha256, item.entry_name, item.kind,
                        item.size_bytes, stamp))
            submission_id = db.execute(
                "SELECT id FROM submissions WHERE student_id = ? AND lab = ? AND sha256 = ?",
                (item.student, r.lab, item.sha256)).fetchone()[0]
            db.execute("UPDATE results SET current = 0 WHERE student_id = ? AND lab = ? AND "
                       "current = 1", (item.student, r.lab))
            cur = db.execute(
                "INSERT INTO results (submission_id, run_id, student_id, lab, current, status, "
                "score, max_score, percent, error, notes, timeouts, grader_version, device, "
                "isolation, graded_at, execution_time, worker, result_json) VALUES "
                "(?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (submission_id, run_id, item.student, r.lab, item.status, r.score, r.max_score,
                 round(r.percent, 4), r.error, json.dumps(r.notes), timeouts, grader_version,
                 r.device, isolation, r.graded_at or stamp, r.execution_time, item.worker,
                 json.dumps(r.to_dict(), separators=(",", ":"))))
            assert cur.lastrowid is not None  # an INSERT always sets it
            result_id = cur.lastrowid
            db.executemany(
                "INSERT INTO test_results (result_id, position, test, title, outcome, score, "
                "max_score, visibility, message, diagnosis, hint, failure_kinds, cases_passed, "
                "cases_total, cases_skipped, seconds) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(result_id, i, t.name, t.title, t.outcome, t.score, t.max_score, t.visibility,
                  t.message, json.dumps([d.to_dict() for d in t.diagnosis]), t.hint,
                  json.dumps(sorted({c.kind for c in t.cases if c.kind})), t.cases_passed,
                  t.cases_total, t.cases_skipped, t.seconds) for i, t in enumerate(r.tests)])
        return result_id

    def current_rows(self, lab: str) -> list[sqlite3.Row]:
        """The current results of ``lab`` with their submission, sorted by student."""
        return self.db.execute(
            "SELECT r.*, s.sha256, s.entry_name, s.kind FROM results r "
            "JOIN submissions s ON s.id = r.submission_id "
            "WHERE r.lab = ? AND r.current = 1 ORDER BY r.student_id", (lab,)).fetchall()

    def test_rows(self, lab: str) -> list[sqlite3.Row]:
        """The per-test results of the current results of ``lab``."""
        return self.db.execute(
            "SELECT t.*, r.student_id, r.status AS result_status FROM test_results t "
            "JOIN results r ON r.id = t.result_id WHERE r.lab = ? AND r.current = 1 "
            "ORDER BY t.position, r.student_id", (lab,)).fetchall()

    def load_result(self, result_id: int) -> GradeResult:
        row = self.db.execute("SELECT result_json FROM results WHERE id = ?",
                              (result_id,)).fetchone()
        return GradeResult.from_dict(json.loads(row[0]))

    # ------------------------------------------------------------- overrides

    def add_override(self, student: str, lab: str, test: str, score: float, comment: str,
                     by: str) -> int:
        with self.transaction() as db:
            cur = db.execute("INSERT INTO overrides (student_id, lab, test, score, comment, "
                             "made_by, made_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (student, lab, test, score, comment, by, now()))
            assert cur.lastrowid is not None
            return cur.lastrowid

    def overrides(self, lab: str, student: str | None = None) -> list[sqlite3.Row]:
        """The overrides in force for ``lab`` (one student's, or everyone's), oldest first."""
        query = "SELECT * FROM overrides WHERE lab = ? AND dropped_at IS NULL"
        params: tuple = (lab,)
        if student is not None:
            query += " AND student_id = ?"
            params += (student,)
        return self.db.execute(query + " ORDER BY id", params).fetchall()

    def drop_overrides(self, lab: str, students: list[str]) -> int:
        """Set aside the overrides of ``students`` (kept in the table as history)."""
        with self.transaction() as db:
            return sum(db.execute("UPDATE overrides SET dropped_at = ? WHERE lab = ? AND "
                                  "student_id = ? AND dropped_at IS NULL",
                                  (now(), lab, s)).rowcount for s in students)

    def set_adjustment(self, student: str, lab: str, values: dict[str, Any]) -> None:
        """Record the course file's view of a student's current result (replacing the last)."""
        row = {"student_id": student, "lab": lab, "updated_at": now(), **values}
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self.transaction() as db:
            db.execute(f"INSERT OR REPLACE INTO adjustments ({names}) VALUES ({marks})",
                       tuple(row.values()))

    def adjustments(self, lab: str) -> dict[str, sqlite3.Row]:
        """The adjustments of ``lab`` that still describe the student's current result."""
        rows = self.db.execute(
            "SELECT a.* FROM adjustments a JOIN results r ON r.id = a.result_id "
            "WHERE a.lab = ? AND r.current = 1", (lab,)).fetchall()
        return {row["student_id"]: row for row in rows}

    def counts(self) -> dict[str, Any]:
        """Row counts of every table (for tests and diagnostics)."""
        return {table: self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("students", "submissions", "runs", "results", "test_results",
                              "overrides", "adjustments")}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

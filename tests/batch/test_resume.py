"""A batch killed with SIGKILL halfway resumes where it stopped: no duplicate, no lost row, the
same grades as an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradebook.store import FILENAME
from rnngrade.grading.engine import grade

from ..synthetic import make_class
from .conftest import (
    INPROCESS,
    assert_csv_matches_gradebook,
    assert_one_current_result_each,
    current,
    query,
    read_csv,
)


def start_batch(folder: Path, out: Path, jobs: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "rnngrade.cli", "batch", str(folder), "--lab", "lab1",
               "--out", str(out), "-j", str(jobs), "--quiet", *INPROCESS]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def graded_so_far(out: Path) -> int:
    if not (out / FILENAME).exists():
        return 0
    try:
        return len(query(out, "SELECT id FROM results"))
    except Exception:  # noqa: BLE001 - the schema may not exist yet
        return 0


def session_processes(session: int) -> list[int]:
    """The processes of a session (the batch and every worker it started)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # field 6 of stat: the session
            pids.append(int(stat.parent.name))
    return pids


def kill_halfway(folder: Path, out: Path, n: int, jobs: int) -> int:
    """Run a batch in a subprocess and SIGKILL it once about half the class is committed."""
    process = start_batch(folder, out, jobs)
    session = process.pid  # start_new_session: the batch leads its own session
    deadline = time.monotonic() + 300
    try:
        while graded_so_far(out) < n // 2:
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "the batch made no progress"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        # Its workers notice that the coordinator is gone and exit on their own.
        deadline = time.monotonic() + 30
        while session_processes(session) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not session_processes(session), "workers outlived the killed coordinator"
    finally:
        for pid in session_processes(session):
            os.kill(pid, signal.SIGKILL)
        if process.stderr:
            process.stderr.close()
    return graded_so_far(out)


def check_killed_and_resumed(tmp_path: Path, n: int, jobs: int, expected: dict) -> None:
    folder, out = tmp_path / "class", tmp_path / "out"
    samples = make_class(folder, "lab1", n, bad=True)
    students = {s.student for s in samples}
    committed = kill_halfway(folder, out, n, jobs)
    assert n // 2 <= committed < n
    partial = current(out)
    assert_one_current_result_each(out, set(partial))  # nothing half-written
    for student in partial:  # reports are written before the result is committed
        assert (out / "lab1" / "students" / student / "results.json").exists()

    assert main(["batch", str(folder), "--lab", "lab1", "--out", str(out), "-j", str(jobs),
                 "--quiet", *INPROCESS]) == ExitCode.OK
    assert_one_current_result_each(out, students)
    assert len(query(out, "SELECT id FROM results")) == n  # every entry graded exactly once
    assert len(query(out, "SELECT id FROM students")) == n
    runs = [tuple(r) for r in query(out, "SELECT status, n_graded, n_skipped FROM runs")]
    assert runs[0][0] == "interrupted" and runs[1] == ("finished", n - committed, committed)
    assert_csv_matches_gradebook(out)
    grades = read_csv(out)
    assert {s: (float(g["score"]), g["status"]) for s, g in grades.items()} == expected(samples)
    assert (out / "lab1" / "summary.html").read_text().count("<svg") == 1


def uninterrupted(samples: list) -> dict:
    """Each entry graded on its own in this process (the long-lived grader)."""
    out = {}
    for sample in samples:
        result = grade(sample.path, "lab1", device="cpu", inprocess=True)
        status = "graded" if result.status == "graded" else "load_error"
        out[sample.student] = (result.score, status)
    return out


def test_sigkill_halfway_then_resume_small_class(tmp_path):
    check_killed_and_resumed(tmp_path, 10, 1, uninterrupted)


@pytest.mark.slow
def test_sigkill_halfway_then_resume_200_submissions(tmp_path):
    reference = tmp_path / "reference"

    def from_an_uninterrupted_batch(samples: list) -> dict:
        assert main(["batch", str(tmp_path / "class"), "--lab", "lab1", "--out",
                     str(reference), "-j", "2", "--quiet", *INPROCESS]) == ExitCode.OK
        return {s: (float(g["score"]), g["status"]) for s, g in read_csv(reference).items()}

    check_killed_and_resumed(tmp_path, 200, 2, from_an_uninterrupted_batch)

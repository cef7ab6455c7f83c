"""Where a batch takes submission times from: never a guess when lateness costs points, file
times only when asked (and a copied class is warned about), dates out of range as usage errors
or notes, times shown in the course's time zone."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.times import MANIFEST
from rnngrade.gradebook import batch
from rnngrade.gradebook.store import FILENAME
from rnngrade.labs import get_lab

from .test_course_batch import InlinePool

UTC = dt.timezone.utc
PENALTY = """late_policy: {penalty_per_day: 10, max_days: 3}
labs:
  lab1: {due: "2026-09-21 23:59", points: 10}
"""
COPIED = dt.datetime(2026, 12, 5, 14, 2, tzinfo=UTC)  # when the instructor copied them


@pytest.fixture(autouse=True)
def inline(monkeypatch):
    monkeypatch.setattr(batch, "LocalPool", InlinePool)


def copied_class(tmp_path: Path) -> Path:
    """Three correct submissions copied with a plain cp: their file times are the copy's."""
    subs = tmp_path / "subs"
    subs.mkdir()
    reference = get_lab("lab1").solution_path().read_text()
    for i, name in enumerate(("alice", "bob", "carol")):
        path = subs / f"{name}.py"
        path.write_text(reference + f"\n# {name}\n")
        moment = (COPIED + dt.timedelta(seconds=20 * i)).timestamp()
        os.utime(path, (moment, moment))
    return subs


def run(subs: Path, out: Path, course_text: str, *extra: str) -> int:
    course = out.parent / f"{out.name}-course.yaml"
    course.write_text(course_text)
    return main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess", "-j",
                 "1", "--quiet", "--course", str(course), *extra])


def grades(out: Path) -> dict[str, dict[str, str]]:
    with (out / "lab1" / "grades.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_without_a_trusted_time_a_late_policy_refuses_to_grade(tmp_path, capsys):
    subs = copied_class(tmp_path)
    out = tmp_path / "out"
    assert run(subs, out, PENALTY) == 2
    err = capsys.readouterr().err
    assert "3 of 3 submission(s) have no time" in err and "alice, bob, carol" in err
    for fix in (".submissions.json", "git clones", "--times-from files"):
        assert fix in err
    assert "Traceback" not in err and not (out / FILENAME).exists()  # nothing graded


def test_without_a_late_penalty_times_do_not_matter(tmp_path, capsys):
    subs = copied_class(tmp_path)
    out = tmp_path / "out"
    assert run(subs, out, 'labs:\n  lab1: {due: "2026-09-21 23:59", points: 10}\n') == 0
    assert {row["score"] for row in grades(out).values()} == {"10"}
    assert "WARNING" not in capsys.readouterr().err


def test_file_times_when_asked_and_a_copied_class_is_a_loud_warning(tmp_path, capsys):
    subs = copied_class(tmp_path)
    out = tmp_path / "out"
    assert run(subs, out, PENALTY, "--times-from", "files") == 0
    printed = capsys.readouterr()
    assert "3 from file" in printed.out
    warning = ("WARNING: submission times: the file times of 3 submissions lie within 1 minute "
               "of each other and 3 of the 3 submissions timed by their files are late")
    assert warning in printed.err and ".submissions.json" in printed.err
    assert {row["late_days"] for row in grades(out).values()} == {"75"}  # as asked, loudly
    summary = (out / "lab1" / "summary.html").read_text()
    assert "Warning: submission times: the file times of 3 submissions" in summary

    manifest = {name: {"submitted_at": "2026-09-21T20:00:00Z"} for name in ("alice", "bob")}
    (subs / MANIFEST).write_text(json.dumps(manifest))
    assert run(subs, out, PENALTY, "--times-from", "files") == 0  # one left timed by its file
    assert "WARNING" not in capsys.readouterr().err
    assert "Warning:" not in (out / "lab1" / "summary.html").read_text()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_git_date_out_of_range_is_no_time_not_a_crash(tmp_path, capsys):
    subs = copied_class(tmp_path)
    (subs / "alice.py").unlink()
    clone = subs / "alice"
    clone.mkdir()
    (clone / "rnn.py").write_text(get_lab("lab1").solution_path().read_text())
    os.utime(clone / "rnn.py", (COPIED.timestamp(),) * 2)
    date = "@300000000000 +0000"  # year 11476
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "done"]):
        subprocess.run(["git", *command], cwd=clone, env=env, check=True)
    (subs / MANIFEST).write_text(json.dumps({name: {"submitted_at": "2026-09-21T20:00:00Z"}
                                             for name in ("bob", "carol")}))
    out = tmp_path / "out"
    assert run(subs, out, PENALTY) == 2
    err = capsys.readouterr().err
    assert "1 of 3 submission(s) have no time" in err and "alice (its git commit date" in err
    assert "out of range" in err and "Traceback" not in err

    assert run(subs, out, PENALTY, "--times-from", "files") == 0
    assert "submission time not used: alice: its git commit date" in capsys.readouterr().out
    assert grades(out)["alice"]["late_days"] == "75" and grades(out)["bob"]["late_days"] == "0"


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-23:59", "1200-01-01T00:00:00Z"])
def test_a_manifest_time_out_of_range_is_a_usage_error(tmp_path, capsys, when):
    subs = copied_class(tmp_path)
    (subs / MANIFEST).write_text(json.dumps({"alice": {"submitted_at": when}}))
    assert run(subs, tmp_path / "out", PENALTY) == 2
    err = capsys.readouterr().err
    assert "alice.submitted_at" in err and "out of range" in err and "Traceback" not in err


def test_times_are_shown_in_the_courses_time_zone_with_utc_beside(tmp_path):
    subs = copied_class(tmp_path)
    (subs / MANIFEST).write_text(json.dumps({
        "alice": {"submitted_at": "2026-09-21T21:00:00Z"},
        "bob": {"submitted_at": "2026-09-21T22:30:00Z"},
        "carol": {"submitted_at": "2026-09-21T21:59:00Z"}}))
    out = tmp_path / "out"
    assert run(subs, out, "timezone: Europe/Berlin\n" + PENALTY) == 0
    bob = (out / "lab1" / "students" / "bob" / "feedback.html").read_text()
    assert ("Submitted 2026-09-22 00:30 Europe/Berlin (2026-09-21 22:30 UTC) (from the "
            "submissions manifest); due 2026-09-21 23:59 Europe/Berlin (21:59 UTC): 1 day "
            "late") in bob
    html = (out / "lab1" / "handback" / "alice" / "feedback.html").read_text()
    assert "Submitted 2026-09-21 23:00 Europe/Berlin (21:00 UTC)" in html

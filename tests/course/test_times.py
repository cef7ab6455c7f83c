"""Submission times: the manifest, then the git commit time, then the file time."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rnngrade.course.config import CourseError
from rnngrade.course.times import (
    MANIFEST,
    TimeSource,
    git_commit_time,
    newest_mtime,
    read_manifest,
    submission_time,
)

UTC = dt.timezone.utc
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def stamp(path: Path, when: dt.datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()), follow_symlinks=False)


def git(folder: Path, *args: str, date: str = "2026-09-20T12:00:00+00:00") -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(folder.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@x", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def test_the_manifest_comes_first_by_student_id_or_entry_name(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text("x = 1\n")
    (subs / "bob.zip").write_bytes(b"PK")
    (subs / MANIFEST).write_text(json.dumps({
        "alice": {"submitted_at": "2026-09-21T22:10:00Z"},
        "bob.zip": {"submitted_at": "2026-09-22T01:00:00+02:00"}}))
    manifest = read_manifest(subs)
    alice = submission_time(subs / "alice.py", "alice", manifest)
    bob = submission_time(subs / "bob.zip", "bob", manifest)
    assert alice is not None and alice.source is TimeSource.MANIFEST
    assert alice.at == dt.datetime(2026, 9, 21, 22, 10, tzinfo=UTC)
    assert bob is not None and bob.at == dt.datetime(2026, 9, 21, 23, 0, tzinfo=UTC)


def test_a_manifest_inside_a_students_own_folder_is_never_read(tmp_path):
    subs = tmp_path / "subs"
    (subs / "mallory").mkdir(parents=True)
    (subs / "mallory" / "rnn.py").write_text("x = 1\n")
    stamp(subs / "mallory" / "rnn.py", dt.datetime(2026, 9, 25, tzinfo=UTC))
    (subs / "mallory" / MANIFEST).write_text(json.dumps(
        {"mallory": {"submitted_at": "2020-01-01T00:00:00Z"}}))
    when = submission_time(subs / "mallory", "mallory", read_manifest(subs))
    assert when is not None and when.source is TimeSource.FILE
    assert when.at == dt.datetime(2026, 9, 25, tzinfo=UTC)


@pytest.mark.parametrize("text", ["[1, 2]", "{\"alice\": {\"submitted_at\": \"soon\"}}",
                                  "{\"alice\": 3}", "{not json"])
def test_a_bad_manifest_is_a_clear_error(tmp_path, text):
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(CourseError, match=MANIFEST):
        read_manifest(tmp_path)


def test_a_folders_file_time_is_its_newest_files_links_and_hidden_names_aside(tmp_path):
    folder = tmp_path / "carol"
    (folder / "sub").mkdir(parents=True)
    for name, day in (("rnn.py", 20), ("sub/notes.py", 22), (".hidden", 28)):
        (folder / name).write_text("x")
        stamp(folder / name, dt.datetime(2026, 9, day, tzinfo=UTC))
    (folder / "link").symlink_to("/etc/hostname")
    assert newest_mtime(folder) == dt.datetime(2026, 9, 22, tzinfo=UTC)


@needs_git
def test_a_git_clone_gives_its_head_commit_time(tmp_path):
    repo = tmp_path / "dave"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done", date="2026-09-21T23:30:00+02:00")
    stamp(repo / "rnn.py", dt.datetime(2026, 12, 1, tzinfo=UTC))
    when = submission_time(repo, "dave", {})
    assert when is not None and when.source is TimeSource.GIT
    assert when.at == dt.datetime(2026, 9, 21, 21, 30, tzinfo=UTC)


@needs_git
def test_reading_git_never_runs_what_the_repository_configures(tmp_path):
    repo = tmp_path / "eve"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done")
    proof = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {proof}\nexit 1\n")
    script.chmod(0o755)
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {script}\n\tpager = {script}\n"
                     f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {script}\n")
    assert git_commit_time(repo) == dt.datetime(2026, 9, 20, 12, tzinfo=UTC)
    assert not proof.exists()


@needs_git
def test_a_git_folder_that_is_a_link_elsewhere_is_not_followed(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "a.py").write_text("x = 1\n")
    git(other, "add", "a.py")
    git(other, "commit", "-qm", "theirs")
    entry = tmp_path / "frank"
    entry.mkdir()
    (entry / "rnn.py").write_text("x = 2\n")
    stamp(entry / "rnn.py", dt.datetime(2026, 9, 30, tzinfo=UTC))
    (entry / ".git").symlink_to(other / ".git")
    when = submission_time(entry, "frank", {})
    assert when is not None and when.source is TimeSource.FILE
    assert when.at == dt.datetime(2026, 9, 30, tzinfo=UTC)


def test_nothing_readable_gives_no_time(tmp_path):
    (tmp_path / "ghost").symlink_to(tmp_path / "missing")
    assert submission_time(tmp_path / "ghost", "ghost", {}) is None

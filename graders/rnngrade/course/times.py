"""When a submission was handed in, and how we know.

In this order:

1. **the manifest**: ``.submissions.json`` at the top of the submissions folder, written by
   whoever downloaded the submissions (an LMS export script, the instructor), never by a student:
   ``{"alice": {"submitted_at": "2026-09-21T22:10:00Z"}, "bob.zip": {...}}``, keyed by student
   id or entry name. A file of that name inside a student's own folder is never read.
2. **the git commit time** of ``HEAD`` when the entry is a git clone (GitHub Classroom, CI). The
   student's machine writes that date: prefer a manifest when it matters.
3. **the file time**: the entry's modification time (a folder: its newest file).

Reading git never runs anything the student controls: only ``HEAD``, ``refs/``, ``packed-refs``
and ``objects/`` are used, through a private git directory with no configuration.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from rnngrade.course.config import CourseError, parse_moment

MANIFEST = ".submissions.json"
MAX_MANIFEST_BYTES = 10 * 1024 * 1024
MAX_WALK = 5000  # files looked at for a folder's newest time
GIT_SECONDS = 10.0


class TimeSource(str, Enum):
    MANIFEST = "manifest"
    GIT = "git"
    FILE = "file"

    @property
    def described(self) -> str:
        return {"manifest": "the submissions manifest", "git": "the git commit time",
                "file": "the file modification time"}[self.value]


@dataclass(frozen=True)
class SubmissionTime:
    at: dt.datetime  # aware, UTC
    source: TimeSource


def read_manifest(folder: Path) -> dict[str, dt.datetime]:
    """The submission times of ``folder/.submissions.json`` ({} when there is none)."""
    path = folder / MANIFEST
    try:
        info = path.lstat()
    except FileNotFoundError:
        return {}
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MANIFEST_BYTES:
        raise CourseError(f"{path}: not a regular file of at most 10 MB")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CourseError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CourseError(f"{path}: expected an object keyed by student id or entry name")
    times = {}
    for key, value in data.items():
        text = value.get("submitted_at") if isinstance(value, dict) else None
        moment = parse_moment(text) if isinstance(text, str) else None
        if moment is None:
            raise CourseError(f"{path}: {key}.submitted_at: expected an ISO date and time "
                              "such as 2026-09-21T22:10:00Z")
        times[key] = _utc(moment)
    return times


def submission_time(entry: Path, student: str,
                    manifest: dict[str, dt.datetime]) -> SubmissionTime | None:
    """The time ``entry`` was handed in (None when nothing tells: an unreadable entry)."""
    for key in (student, entry.name):
        if key in manifest:
            return SubmissionTime(manifest[key], TimeSource.MANIFEST)
    committed = git_commit_time(entry)
    if committed is not None:
        return SubmissionTime(committed, TimeSource.GIT)
    modified = newest_mtime(entry)
    if modified is not None:
        return SubmissionTime(modified, TimeSource.FILE)
    return None


def git_commit_time(entry: Path) -> dt.datetime | None:
    """The commit time of HEAD in ``entry/.git`` (None when it is not a readable clone)."""
    git_dir = entry / ".git"
    git = shutil.which("git")
    try:
        if git is None or entry.is_symlink() or not stat.S_ISDIR(git_dir.lstat().st_mode):
            return None
    except OSError:
        return None
    with tempfile.TemporaryDirectory(prefix="rnngrade-git-") as tmp:
        private = Path(tmp) / "git"
        private.mkdir()
        try:
            shutil.copyfile(git_dir / "HEAD", private / "HEAD", follow_symlinks=False)
            if (git_dir / "packed-refs").is_file():
                shutil.copyfile(git_dir / "packed-refs", private / "packed-refs",
                                follow_symlinks=False)
            if (git_dir / "refs").is_dir():
                shutil.copytree(git_dir / "refs", private / "refs", symlinks=True)
            else:
                (private / "refs").mkdir()
            (private / "objects").symlink_to((git_dir / "objects").resolve())
        except OSError:
            return None
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_DIR": str(private), "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        try:
            done = subprocess.run([git, "--no-pager", "log", "-1", "--no-show-signature",
                                   "--format=%ct", "HEAD"], env=env, cwd=tmp,
                                  capture_output=True, timeout=GIT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    text = done.stdout.decode("ascii", "replace").strip()
    if done.returncode != 0 or not text.isdigit():
        return None
    return dt.datetime.fromtimestamp(int(text), dt.timezone.utc)


def newest_mtime(entry: Path) -> dt.datetime | None:
    """The entry's modification time; for a folder, its newest regular file's (links and
    hidden names are not looked at; at most MAX_WALK files)."""
    try:
        info = entry.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return _stamp(info.st_mtime) if stat.S_ISREG(info.st_mode) else None
    newest: float | None = None
    seen = 0
    for root, dirs, files in os.walk(entry, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            seen += 1
            if seen > MAX_WALK:
                return _stamp(newest) if newest is not None else None
            try:
                file_info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if stat.S_ISREG(file_info.st_mode):
                newest = max(newest or file_info.st_mtime, file_info.st_mtime)
    return _stamp(newest) if newest is not None else _stamp(info.st_mtime)


def _stamp(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc)


def _utc(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)

"""When a submission was handed in, and how we know.

The sources, which ``--times-from`` chooses among (``TimesFrom``):

1. **the manifest**: ``.submissions.json`` at the top of the submissions folder, written by
   whoever downloaded the submissions (an LMS export script, the instructor), never by a student:
   ``{"alice": {"submitted_at": "2026-09-21T22:10:00Z"}, "bob.zip": {...}}``, keyed by student
   id or entry name. A file of that name inside a student's own folder is never read.
2. **the git commit time** of ``HEAD`` when the entry is a git clone (GitHub Classroom, CI). The
   student's machine writes that date: prefer a manifest when it matters. A date outside
   1970–9998 is no time at all (with a note saying so).
3. **the file time**: the entry's modification time (a folder: its newest file). A copy, an
   unzip or a download sets it to that moment, so it is used only when the instructor asks
   (``files``), and a class whose file times look like a copy's is warned about
   (``file_time_warnings``).

``rnngrade ci`` times a pull request by a fourth source, **the time GitHub recorded** for the
push or pull request (``EVENT``, ``ci.when``), and by the commit time only as the student's claim.

With a late policy that can cost points, a batch refuses to grade entries that have no time
(``untimed_refusal``) rather than guess. Times are shown in the course's time zone with UTC
beside it (``show_time``).

A student's ``.git`` is read as hostile input, without running git and without copying it
(``submission.gitmeta``): ``HEAD``, the one ref it names and the one commit object, each a
regular file opened without following links and read up to a bound. A ``.git`` that cannot be
read so gives no time, with a note saying why.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from rnngrade.course.config import RANGE, CourseError, LabPlan, in_range, parse_moment
from rnngrade.results.text import clean_name
from rnngrade.submission.gitmeta import head_commit_time

MANIFEST = ".submissions.json"
MAX_MANIFEST_BYTES = 10 * 1024 * 1024
MAX_WALK = 5000  # files looked at for a folder's newest time
CLUSTER = dt.timedelta(minutes=5)  # a class's file times this close together: a copy's
CLASS = 3  # submissions timed by their files before the class is judged as a whole


class TimeSource(str, Enum):
    MANIFEST = "manifest"
    GIT = "git"
    FILE = "file"
    EVENT = "event"  # the CI service's record of the push or pull request (``rnngrade ci``)

    @property
    def described(self) -> str:
        return {"manifest": "the submissions manifest", "git": "the git commit time",
                "file": "the file modification time",
                "event": "the time GitHub recorded"}[self.value]


class TimesFrom(str, Enum):
    """What ``--times-from`` allows, in order: the first source that tells wins."""

    AUTO = "auto"  # the manifest, else the git commit time; never the file time
    MANIFEST = "manifest"  # the manifest only
    GIT = "git"  # the git commit time only
    FILES = "files"  # as auto, then the file modification time as a last resort

    @property
    def sources(self) -> tuple[TimeSource, ...]:
        return {"auto": (TimeSource.MANIFEST, TimeSource.GIT),
                "manifest": (TimeSource.MANIFEST,), "git": (TimeSource.GIT,),
                "files": (TimeSource.MANIFEST, TimeSource.GIT, TimeSource.FILE)}[self.value]


@dataclass(frozen=True)
class SubmissionTime:
    at: dt.datetime  # aware, UTC
    source: TimeSource


@dataclass(frozen=True)
class Timing:
    """What looking for one entry's time found: the time (None: no source told) and, when a
    source had a date that cannot be used, why it was set aside."""

    time: SubmissionTime | None
    note: str = ""


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
        utc = in_range(moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc))
        if utc is None:
            raise CourseError(f"{path}: {key}.submitted_at: {text!r} is out of range ({RANGE})")
        times[key] = utc
    return times


def find_time(entry: Path, student: str, manifest: dict[str, dt.datetime],
              allowed: TimesFrom = TimesFrom.AUTO) -> Timing:
    """When ``entry`` was handed in, from the first of ``allowed``'s sources that tells."""
    note = ""
    for source in allowed.sources:
        if source is TimeSource.MANIFEST:
            for key in (student, entry.name):
                if key in manifest:
                    return Timing(SubmissionTime(manifest[key], source), note)
        elif source is TimeSource.GIT:
            timing = git_timing(entry)
            if timing.time is not None:
                return Timing(timing.time, note)
            note = timing.note or note
        else:
            modified = newest_mtime(entry)
            if modified is not None:
                return Timing(SubmissionTime(modified, source), note)
    return Timing(None, note)


def submission_time(entry: Path, student: str, manifest: dict[str, dt.datetime],
                    allowed: TimesFrom = TimesFrom.AUTO) -> SubmissionTime | None:
    """The time ``entry`` was handed in (None when none of ``allowed``'s sources tells)."""
    return find_time(entry, student, manifest, allowed).time


def git_timing(entry: Path, *, follow_top: bool = False) -> Timing:
    """The commit time of HEAD in ``entry/.git``, or why it has none (a date out of range, a
    ``.git`` that cannot be read safely); ``follow_top``: ``entry`` may itself be a link."""
    read = head_commit_time(entry, follow_top=follow_top)
    committed = _stamp(read.seconds) if read.seconds is not None else None
    if committed is not None:
        return Timing(SubmissionTime(committed, TimeSource.GIT))
    if read.seconds is not None:
        return Timing(None, f"its git commit date ({read.seconds} seconds after 1970) is out of "
                            f"range ({RANGE}): not used")
    return Timing(None, f"its .git folder gives no time: {read.note}" if read.note else "")


def git_commit_time(entry: Path) -> dt.datetime | None:
    """The commit time of HEAD in ``entry/.git`` (None when it is not a readable clone or its
    date is out of range)."""
    seconds = git_commit_seconds(entry)
    return _stamp(seconds) if seconds is not None else None


def git_commit_seconds(entry: Path) -> int | None:
    """The commit time of HEAD in ``entry/.git`` as written, in seconds since 1970 (None when
    it is not a readable clone)."""
    return head_commit_time(entry).seconds


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


def _stamp(seconds: float) -> dt.datetime | None:
    """Seconds since 1970 as a time (None when out of range)."""
    try:
        moment = dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return in_range(moment)


def show_time(moment: dt.datetime, zone: dt.tzinfo) -> str:
    """``2026-09-21 23:59 Europe/Berlin (21:59 UTC)``: the course's time zone, UTC beside it
    (with its date when that differs)."""
    utc = moment.astimezone(dt.timezone.utc)
    local = moment.astimezone(zone)
    if str(zone) == "UTC":
        return f"{utc:%Y-%m-%d %H:%M} UTC"
    beside = f"{utc:%H:%M}" if utc.date() == local.date() else f"{utc:%Y-%m-%d %H:%M}"
    return f"{local:%Y-%m-%d %H:%M} {zone} ({beside} UTC)"


def penalises(plan: LabPlan) -> bool:
    """Whether a submission's time can cost points in ``plan`` (a due date, and a penalty or
    a last day accepted)."""
    return plan.due is not None and (plan.late.penalty_per_day > 0
                                     or plan.late.max_days is not None)


TRUSTED = ("write the times your LMS recorded into .submissions.json at the top of the "
           'submissions folder ({"alice": {"submitted_at": "2026-09-21T22:10:00Z"}}, keyed by '
           "student id or entry name), or grade git clones (timed by their HEAD commit)")
FIXES = (f"{TRUSTED}, or pass --times-from files to use the files' modification times (only "
         "when they kept the time the work was handed in: a copy, a download or an unzip sets "
         "them to that moment)")


def untimed_refusal(plan: LabPlan, zone: dt.tzinfo, timings: dict[str, Timing],
                    allowed: TimesFrom) -> str:
    """Why a batch must not grade when some entries have no time and ``plan`` penalises
    lateness ("" when it may go on)."""
    untimed = sorted(student for student, timing in timings.items() if timing.time is None)
    if not untimed or not penalises(plan) or plan.due is None:
        return ""
    names = [clean_name(student, 60) + (f" ({timings[student].note})"
                                        if timings[student].note else "")
             for student in untimed[:20]]
    more = f" and {len(untimed) - 20} more" if len(untimed) > 20 else ""
    sources = " or ".join(source.described for source in allowed.sources)
    return (f"{plan.name} is due {show_time(plan.due, zone)} with a late penalty, but "
            f"{len(untimed)} of {len(timings)} submission(s) have no time from {sources} "
            f"(--times-from {allowed.value}): {', '.join(names)}{more}. Nothing was graded, "
            f"rather than penalise by a guess. To fix it, {FIXES}.")


def file_time_warnings(times: Sequence[dt.datetime], late: int) -> list[str]:
    """What is wrong with a class timed by its files: ``times`` are the file times, ``late``
    how many of them are late. Their spread within minutes, or more than half late, is what
    copying the submissions does, not handing them in."""
    if len(times) < CLASS:
        return []
    problems = []
    spread = max(times) - min(times)
    if spread <= CLUSTER:
        minutes = max(1, math.ceil(spread.total_seconds() / 60))
        problems.append(f"the file times of {len(times)} submissions lie within {minutes} "
                        f"minute{'s' * (minutes != 1)} of each other")
    if late * 2 > len(times):
        problems.append(f"{late} of the {len(times)} submissions timed by their files are late")
    if not problems:
        return []
    return [f"submission times: {' and '.join(problems)}: that is what copying, downloading or "
            "unpacking the submissions does, and their late penalties are likely wrong. To "
            f"grade them by when they were handed in, {TRUSTED}, and "
            "run the batch again."]

"""When the work a CI run grades was handed in, for the course's late policy.

The time is GitHub's, never the student's: ``--submitted-at`` (which the grading workflow fills
from the event), else the event that started the run: ``pull_request.updated_at`` of a pull
request event (set by GitHub when a push to the branch, the opening or the reopening updated
the pull request) or ``repository.pushed_at`` of a push event. A commit's author and committer
dates are written by the student's machine (``git commit --date``, a wrong clock): HEAD's
committer date is used only when GitHub gives no time, and the report says it is the student's
claim. With a late policy that can cost points, such a claim is not enough unless the instructor
allows it (``--trust-commit-time``): the run grades nothing and exits 2 (``refusal``), as
``rnngrade batch`` refuses entries without a time.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from rnngrade.course.config import RANGE, Course, in_range, parse_moment
from rnngrade.course.times import (
    SubmissionTime,
    TimeSource,
    Timing,
    git_timing,
    penalises,
    show_time,
)
from rnngrade.errors import UsageError

CLAIM = ("That time is the date written in the commit, which the student's own machine sets: "
         "the student's claim, not a time GitHub recorded.")


def parse_submitted_at(text: str | None) -> dt.datetime | None:
    """``--submitted-at``: an ISO date and time (UTC when it has no offset) or seconds since
    1970, as GitHub writes ``repository.pushed_at``; "" is no time. UsageError otherwise."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    moment: dt.datetime | None
    if text.isdigit():
        try:
            moment = dt.datetime.fromtimestamp(int(text[:20]), dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise UsageError(f"--submitted-at {text[:40]!r} is out of range ({RANGE})") from None
    else:
        moment = parse_moment(text)
    if moment is None:
        raise UsageError(f"--submitted-at {text[:40]!r}: expected an ISO date and time such as "
                         "2026-09-21T22:10:00Z, or seconds since 1970")
    utc = in_range(moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc))
    if utc is None:
        raise UsageError(f"--submitted-at {text[:40]!r} is out of range ({RANGE})")
    return utc


def event_time(event: dict[str, Any]) -> dt.datetime | None:
    """The time GitHub recorded for the event: a pull request's ``updated_at``, a push's
    ``repository.pushed_at`` (None for other events, or a value that is no time)."""
    pull, repository = event.get("pull_request"), event.get("repository")
    if isinstance(pull, dict):
        value = pull.get("updated_at")
    elif "pusher" in event and isinstance(repository, dict):
        value = repository.get("pushed_at")
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        return parse_submitted_at(str(value))
    except UsageError:
        return None


def ci_timing(submitted_at: dt.datetime | None, event: dict[str, Any],
              checkout: Path) -> Timing:
    """The run's submission time: GitHub's (``EVENT``), else HEAD's commit date (``GIT``, the
    student's claim), else none (with why the commit gave none)."""
    recorded = submitted_at or event_time(event)
    if recorded is not None:
        return Timing(SubmissionTime(recorded, TimeSource.EVENT))
    return git_timing(checkout, follow_top=True)


def refusal(course: Course, labs: list[str], timing: Timing, trust_commit: bool) -> str:
    """Why the run must not grade ("" when it may): a lab whose late policy can cost points,
    and no time GitHub recorded (a commit date counts only with ``--trust-commit-time``)."""
    if timing.time is not None and (timing.time.source is TimeSource.EVENT or trust_commit):
        return ""
    costly = [course.plan(lab) for lab in labs if penalises(course.plan(lab))]
    if not costly:
        return ""
    plan = costly[0]
    assert plan.due is not None
    found = ("the commit's date, which the student's machine sets" if timing.time is not None
             else "no commit date either" + (f" ({timing.note})" if timing.note else ""))
    return (f"{plan.name} is due {show_time(plan.due, course.zone)} with a late penalty, but "
            "this run has no time GitHub recorded for the submission (no --submitted-at, and "
            f"the event has no pull_request.updated_at or repository.pushed_at), only {found}. "
            "Nothing was graded, rather than penalise by a time the student can set. To fix "
            "it, run rnngrade ci from the grading workflow of rnngrade release "
            "--grading-workflow (it passes the event's time), pass --submitted-at TIME, or "
            "pass --trust-commit-time to take the commit's date as the student's claim.")


def timed(course: Course | None, labs: list[str], submitted_at: dt.datetime | None,
          event: dict[str, Any], checkout: Path, trust_commit: bool) -> tuple[Timing, str]:
    """The run's submission time and its ``refusal`` (no time and "" without a course file:
    then nothing is late)."""
    if course is None:
        return Timing(None), ""
    timing = ci_timing(submitted_at, event, checkout)
    return timing, refusal(course, labs, timing, trust_commit)

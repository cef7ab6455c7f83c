"""The course file (``course.yaml``): each lab's schedule, the late policy, extensions, excused
students, scaling.

Found at ``--course FILE`` or, when not given, as ``course.yaml`` at the course root; without
one every command behaves as it always has (no due dates, no penalties, release everything).
Every problem is a ``CourseError`` naming the file and the key (exit 2). Dates without a UTC
offset are read in the file's ``timezone`` (default UTC); a bare date is the start of that day
for a release and its last minute (23:59) for a due date. Every date, and every due date moved
by an extension, lies between 1970 and 9998 (``in_range``). Student ids (``extensions``,
``excused``) match the roster's without regard to case; with a roster known,
``course.roster_check`` refuses an id it does not list. See ``docs/course.example.yaml``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rnngrade.errors import UsageError
from rnngrade.gradebook.roster import match_key
from rnngrade.lab_contract import (
    COURSE,
    COURSE_FILE,
    COURSE_LAB,
    DATE,
    DATE_RANGE,
    EXTENSION,
    LAB_LIST,
    LATE_POLICY,
    MAX_DAYS,
    MISSING_CHOICES,
    Field,
    Section,
)
from rnngrade.paths import course_root
from rnngrade.yaml_files import load_mapping

FILENAME = COURSE_FILE
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(d|days?|h|hours?)\s*$")
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
LATEST = dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc)  # a year short of what Python holds
RANGE = f"a date {DATE_RANGE}"


class CourseError(UsageError):
    """The course file is missing, unreadable or wrong (the message names the file and key)."""


@dataclass(frozen=True)
class LatePolicy:
    """``penalty_per_day``: percent of the lab's points lost per started day late;
    ``max_days``: later than this many days the submission scores 0; ``grace_minutes``: a
    submission this close after the due time counts as on time."""

    penalty_per_day: float = 0.0
    max_days: int | None = None
    grace_minutes: float = 0.0


@dataclass(frozen=True)
class LabPlan:
    """One lab of the course file."""

    name: str
    release: dt.datetime | None = None
    due: dt.datetime | None = None
    points: float | None = None  # what the lab is worth in the course (None: its rubric points)
    late: LatePolicy = field(default_factory=LatePolicy)
    missing: str = "zero"  # what a roster student without a submission counts as


@dataclass(frozen=True)
class Course:
    path: Path
    title: str
    timezone: str
    labs: dict[str, LabPlan]
    extensions: dict[str, dict[str, dt.timedelta | dt.datetime]]  # student → lab → extension
    excused: dict[str, frozenset[str]] = field(default_factory=dict)  # student → labs excused

    def __post_init__(self) -> None:
        object.__setattr__(self, "_extended", {match_key(s): v for s, v in self.extensions.items()})
        object.__setattr__(self, "_excused", {match_key(s): v for s, v in self.excused.items()})

    @property
    def zone(self) -> dt.tzinfo:
        """The time zone of the file's ``timezone``: dates are shown in it."""
        return dt.timezone.utc if self.timezone == "UTC" else ZoneInfo(self.timezone)

    def plan(self, lab: str) -> LabPlan:
        """The lab's plan (an empty one for a lab the file does not list)."""
        return self.labs.get(lab, LabPlan(lab))

    def due_for(self, student: str, lab: str) -> tuple[dt.datetime | None, str]:
        """The student's due time for ``lab`` and how it was extended ("" when it was not).
        Student ids match as the roster's do (``gradebook.roster.match_key``)."""
        due = self.plan(lab).due
        extended: dict[str, dict] = self._extended  # type: ignore[attr-defined]
        extension = extended.get(match_key(student), {}).get(lab)
        if due is None or extension is None:
            return due, ""
        if isinstance(extension, dt.timedelta):
            return due + extension, f"extended by {describe_duration(extension)}"
        return extension, "extended"

    def excuses(self, student: str, lab: str) -> bool:
        """Whether the file's ``excused`` excuses ``student`` from ``lab``."""
        excused: dict[str, frozenset[str]] = self._excused  # type: ignore[attr-defined]
        return lab in excused.get(match_key(student), frozenset())

    def student_keys(self) -> list[tuple[str, str]]:
        """Every student id the file names, with its key (``extensions.alice``)."""
        return [(student, f"{section}.{student}")
                for section, ids in (("extensions", self.extensions), ("excused", self.excused))
                for student in ids]


def describe_duration(delta: dt.timedelta) -> str:
    hours = delta.total_seconds() / 3600
    if hours % 24 == 0:
        days = int(hours // 24)
        return f"{days} day{'s' * (days != 1)}"
    return f"{hours:g} hour{'s' * (hours != 1)}"


def find_course(explicit: Path | None) -> Course | None:
    """The course file given, else ``course.yaml`` at the course root, else None."""
    if explicit is not None:
        if not explicit.is_file():
            raise CourseError(f"{explicit}: no such course file")
        return load_course(explicit)
    default = course_root() / FILENAME
    return load_course(default) if default.is_file() else None


def load_course(path: Path, known_labs: set[str] | None = None) -> Course:
    """Read and check a course file; ``known_labs`` defaults to the labs of this course."""
    data = load_mapping(path, CourseError)
    if known_labs is None:
        from rnngrade.labs import LABS

        known_labs = set(LABS)
    return _Reader(path).course(data, known_labs)


class _Reader:
    """Checks one file's data, naming the file and the key of every problem."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tz: dt.tzinfo = dt.timezone.utc

    def fail(self, key: str, problem: str) -> CourseError:
        return CourseError(f"{self.path}: {key}: {problem}")

    def wrong(self, key: str, expected: str | Field, value: Any) -> CourseError:
        """A value of the wrong kind, in the declared words: ``KEY: must be EXPECTED, found V``."""
        words = expected.expected if isinstance(expected, Field) else expected
        return self.fail(key, f"must be {words}, found {_shown(value)}")

    def mapping(self, value: Any, key: str, allowed: Section | None = None,
                expected: str | Field = "a mapping") -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.wrong(key or "(top level)", expected, value)
        for name in value:
            if not isinstance(name, str):
                raise self.fail(key, f"keys must be text, found {name!r}")
            if allowed is not None and name not in allowed.names:
                raise self.fail(f"{key}.{name}" if key else name,
                                allowed.unknown_message([name]))
        return value

    def course(self, data: Any, known_labs: set[str]) -> Course:
        top = self.mapping(data, "", COURSE, "a mapping of the course file's fields")
        title = self.text(top.get("title", ""), "title", COURSE["title"])
        timezone = self.text(top.get("timezone", "UTC"), "timezone", COURSE["timezone"])
        try:
            self.tz = dt.timezone.utc if timezone == "UTC" else ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise self.wrong("timezone", COURSE["timezone"], timezone) from None
        late = self.late(top.get("late_policy"), "late_policy", LatePolicy(),
                         COURSE["late_policy"])
        missing = self.missing(top.get("missing", "zero"), "missing")
        labs = {}
        for name, value in self.mapping(top.get("labs"), "labs", None, COURSE["labs"]).items():
            if name not in known_labs:
                raise self.fail(f"labs.{name}", f"no such lab; this course has: "
                                                f"{', '.join(sorted(known_labs))}")
            labs[name] = self.lab(name, value, late, missing)
        extensions = {}
        for student, value in self.students(top.get("extensions"), COURSE["extensions"]).items():
            per_lab = {}
            for lab, amount in self.mapping(value, f"extensions.{student}", None,
                                            "a mapping of labs to extensions").items():
                key = f"extensions.{student}.{lab}"
                if lab not in known_labs:
                    raise self.fail(key, "no such lab")
                per_lab[lab] = self.extension(amount, key)
            extensions[student] = per_lab
        excused = {student: self.excused(value, f"excused.{student}", known_labs)
                   for student, value in self.students(top.get("excused"),
                                                       COURSE["excused"]).items()}
        for student, per_lab in extensions.items():
            for lab, extension in per_lab.items():
                due = labs[lab].due if lab in labs else None
                if due is not None and isinstance(extension, dt.timedelta):
                    try:
                        moved = in_range(due + extension)
                    except OverflowError:
                        moved = None
                    if moved is None:
                        raise self.fail(f"extensions.{student}.{lab}",
                                        f"moves the due date out of range ({RANGE})")
        return Course(self.path, title, timezone, labs, extensions, excused)

    def students(self, value: Any, field: Field) -> dict:
        """A mapping keyed by student id, no id twice (ids match without regard to case)."""
        key = field.name
        data = self.mapping(value, key, None, field)
        seen: dict[str, str] = {}
        for student in data:
            if not student.strip():
                raise self.fail(key, "a student id is empty")
            other = seen.setdefault(match_key(student), student)
            if other != student:
                raise self.fail(f"{key}.{student}", f"the same student as {key}.{other} (ids "
                                                    "match without regard to case): merge them")
        return data

    def excused(self, value: Any, key: str, known_labs: set[str]) -> frozenset[str]:
        labs = [value] if isinstance(value, str) else value
        if not isinstance(labs, list) or not labs:
            raise self.wrong(key, LAB_LIST, value)
        for lab in labs:
            if not isinstance(lab, str) or lab not in known_labs:
                raise self.fail(key, f"{lab!r}: no such lab; this course has: "
                                     f"{', '.join(sorted(known_labs))}")
        return frozenset(labs)

    def lab(self, name: str, value: Any, late: LatePolicy, missing: str) -> LabPlan:
        key = f"labs.{name}"
        data = self.mapping(value, key, COURSE_LAB, "a mapping of a lab plan's fields")
        release = self.date(data.get("release"), f"{key}.release", end_of_day=False)
        due = self.date(data.get("due"), f"{key}.due", end_of_day=True)
        if release and due and due <= release:
            raise self.fail(f"{key}.due", "the due date must come after the release date")
        points = data.get("points")
        if points is not None:
            points = self.number(points, f"{key}.points", COURSE_LAB["points"], low=0,
                                 low_included=False)
        return LabPlan(name, release, due, points,
                       self.late(data.get("late_policy"), f"{key}.late_policy", late,
                                 COURSE_LAB["late_policy"]),
                       self.missing(data.get("missing", missing), f"{key}.missing"))

    def late(self, value: Any, key: str, base: LatePolicy, field: Field) -> LatePolicy:
        data = self.mapping(value, key, LATE_POLICY, field)
        policy = base
        if "penalty_per_day" in data:
            penalty = self.number(data["penalty_per_day"], f"{key}.penalty_per_day",
                                  LATE_POLICY["penalty_per_day"], low=0, high=100)
            policy = replace(policy, penalty_per_day=penalty)
        if "max_days" in data:
            days = data["max_days"]
            if days is not None and (isinstance(days, bool) or not isinstance(days, int)
                                     or days < 0):
                raise self.wrong(f"{key}.max_days", LATE_POLICY["max_days"], days)
            policy = replace(policy, max_days=days)
        if "grace_minutes" in data:
            grace = self.number(data["grace_minutes"], f"{key}.grace_minutes",
                                LATE_POLICY["grace_minutes"], low=0, high=MAX_DAYS * 24 * 60)
            policy = replace(policy, grace_minutes=grace)
        return policy

    def missing(self, value: Any, key: str) -> str:
        if value not in MISSING_CHOICES:
            raise self.wrong(key, COURSE["missing"], value)
        return str(value)

    def text(self, value: Any, key: str, field: Field) -> str:
        if not isinstance(value, str):
            raise self.wrong(key, field, value)
        return value

    def number(self, value: Any, key: str, field: Field, *, low: float, low_included: bool = True,
               high: float = float("inf")) -> float:
        """A number in [low, high] (or (low, high] when not ``low_included``)."""
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or value != value
                or not (low <= value if low_included else low < value) or value > high):
            raise self.wrong(key, field, value)
        return float(value)

    def date(self, value: Any, key: str, end_of_day: bool) -> dt.datetime | None:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            moment = value
        elif isinstance(value, dt.date):
            moment = dt.datetime.combine(value, dt.time(23, 59) if end_of_day else dt.time())
        elif isinstance(value, str):
            parsed = parse_moment(value, end_of_day)
            if parsed is None:
                raise self.wrong(key, DATE, value)
            moment = parsed
        else:
            raise self.wrong(key, DATE, value)
        moment = moment.replace(tzinfo=self.tz) if moment.tzinfo is None else moment
        if in_range(moment) is None:
            raise self.fail(key, f"{_shown(value)} is out of range ({RANGE})")
        return moment

    def extension(self, value: Any, key: str) -> dt.timedelta | dt.datetime:
        amount, unit = None, "d"
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            amount = float(value)
        elif isinstance(value, str) and (match := _DURATION.match(value)):
            amount, unit = float(match.group(1)), match.group(2)[0]
        if amount is not None and amount > 0:
            if amount > (MAX_DAYS if unit == "d" else MAX_DAYS * 24):
                raise self.wrong(key, EXTENSION, value)
            return dt.timedelta(days=amount) if unit == "d" else dt.timedelta(hours=amount)
        if isinstance(value, dt.date) or (isinstance(value, str)
                                          and parse_moment(value, True) is not None):
            moment = self.date(value, key, end_of_day=True)  # fails when out of range
            assert moment is not None
            return moment
        raise self.wrong(key, EXTENSION, value)


def _shown(value: Any) -> str:
    """A value as a complaint quotes it: a mapping or list by its kind, anything else by its
    ``repr``, cut short."""
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def in_range(moment: dt.datetime) -> dt.datetime | None:
    """``moment`` (aware) in UTC, or None when it lies outside 1970–9998 (times as far out as
    that come from a typing slip or a forged clock, and would overflow the arithmetic)."""
    try:
        utc = moment.astimezone(dt.timezone.utc)
    except (OverflowError, ValueError):
        return None
    return utc if EARLIEST <= utc < LATEST else None


def parse_moment(text: str, end_of_day: bool = False) -> dt.datetime | None:
    """An ISO date or date and time (``Z`` for UTC allowed); None when it is neither."""
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            return dt.datetime.combine(day, dt.time(23, 59) if end_of_day else dt.time())
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None

"""The class roster: who should have submitted, with what an LMS needs to match them.

``roster.csv`` has a header row and one row per student. Only the student id is required: it is
the name of the student's entry in the submissions folder (``alice`` for ``alice.py``). The other
columns are optional: name, email, SIS id and section. Headers are matched without regard to
case, spaces, ``_`` or ``-``, with the usual spellings of LMS exports (``Email address``, ``SIS
User ID``, ``Login``, ...); other columns are ignored. Ids are matched to entries after Unicode
NFC normalisation and case folding (``Alice.py`` is roster id ``alice``).

A roster is instructor input but its cells are treated like student text: each is cleaned
(``sanitize.clean_name``) before it is stored or shown, and escaped for every format it is
written in. A file that cannot be read as a roster raises ``RosterError`` (exit 2) naming the
line to fix. ``batch --roster`` keeps a copy (``roster.json``) next to the gradebook, so later
exports of the same folder use it without asking again.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from rnngrade.errors import UsageError
from rnngrade.files import write_atomic
from rnngrade.results.sanitize import clean_name

SAVED = "roster.json"  # the copy batch keeps in its output folder
MAX_BYTES = 5 * 1024 * 1024
MAX_STUDENTS = 20_000
FIELDS = ("id", "name", "email", "sis_id", "section")
ALIASES = {
    "id": {"id", "studentid", "login", "loginid", "username", "user", "userid", "sisloginid"},
    "name": {"name", "fullname", "studentname", "student"},
    "email": {"email", "emailaddress", "mail"},
    "sis_id": {"sisid", "sisuserid", "sis", "studentnumber", "idnumber", "sid"},
    "section": {"section", "sections", "group"},
}


class RosterError(UsageError):
    """The roster file cannot be used (unreadable, no id column, an empty or repeated id)."""


@dataclass(frozen=True)
class Student:
    """One roster row, every field cleaned."""

    id: str
    name: str = ""
    email: str = ""
    sis_id: str = ""
    section: str = ""


def match_key(student_id: str) -> str:
    """How ids are compared: NFC-normalised and case-folded."""
    return unicodedata.normalize("NFC", student_id).casefold()


@dataclass(frozen=True)
class Roster:
    students: tuple[Student, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {match_key(s.id): s for s in self.students})

    def find(self, student_id: str) -> Student | None:
        """The roster entry of a gradebook id (``None`` when the roster does not list it)."""
        found: dict[str, Student] = self._by_key  # type: ignore[attr-defined]
        return found.get(match_key(student_id))

    def __len__(self) -> int:
        return len(self.students)

    def to_json(self) -> str:
        return json.dumps([asdict(s) for s in self.students], ensure_ascii=False, indent=1)


@dataclass(frozen=True)
class MissingMark:
    """What a roster student without a submission gets for one lab.

    status: shown in the exports ("missing", or "excused" for a course that excuses them).
    score: points counted in the exports and means; ``None`` counts nothing (an excused
    student is left out of the lab's mean, as an LMS leaves out an excused grade).
    note: one line for the instructor."""

    status: str
    score: float | None
    note: str = ""


# Decides, per roster student and lab, how a missing submission is counted. The default gives 0;
# a course file that excuses students supplies its own.
MissingPolicy = Callable[[Student, str], MissingMark]


def zero_for_missing(student: Student, lab: str) -> MissingMark:
    """The default policy: no submission scores 0."""
    return MissingMark("missing", 0.0, "no submission")


def _column(header: str) -> str | None:
    key = "".join(ch for ch in header.casefold() if ch.isalnum())
    return next((field for field, names in ALIASES.items() if key in names), None)


def _columns(headers: list[str], source: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for index, header in enumerate(headers):
        field = _column(header)
        if field is not None and field not in found:
            found[field] = index
    if "id" not in found:
        shown = ", ".join(repr(clean_name(h, 40)) for h in headers[:12]) or "none"
        raise RosterError(f"{source} has no student id column (a header such as id, student_id, "
                          f"login or username); its headers are: {shown}")
    return found


def parse_roster(text: str, source: str = "the roster") -> Roster:
    """A Roster from CSV text (see the module docstring for the columns)."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise RosterError(f"{source} is not a readable CSV file: {clean_name(exc)}") from None
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise RosterError(f"{source} is empty: it needs a header row and one row per student")
    if len(rows) - 1 > MAX_STUDENTS:
        raise RosterError(f"{source} lists {len(rows) - 1} students; at most {MAX_STUDENTS}")
    columns = _columns(rows[0], source)
    students: list[Student] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        cells = {field: clean_name(row[i]).strip() if i < len(row) else ""
                 for field, i in columns.items()}
        if not cells["id"]:
            raise RosterError(f"{source}, line {line}: the student id is empty")
        key = match_key(cells["id"])
        if key in seen:
            raise RosterError(f"{source}, line {line}: student id {cells['id']!r} is already on "
                              f"line {seen[key]}")
        seen[key] = line
        students.append(Student(**{f: cells.get(f, "") for f in FIELDS}))
    return Roster(tuple(students))


def load_roster(path: Path) -> Roster:
    """Read ``path`` (UTF-8, with or without a byte-order mark) as a roster."""
    try:
        if not path.is_file():
            raise RosterError(f"roster {path} is not a file")
        if path.stat().st_size > MAX_BYTES:
            raise RosterError(f"roster {path} is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise RosterError(f"roster {path} cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterError(f"roster {path} is not UTF-8 text (byte {exc.start}); save it as "
                          "CSV UTF-8") from None
    if "\0" in text:
        raise RosterError(f"roster {path} is not a text file")
    return parse_roster(text, f"roster {path}")


def save_roster(roster: Roster, out: Path) -> Path:
    """Keep a copy of ``roster`` in the output folder ``out`` (written atomically)."""
    return write_atomic(out / SAVED, roster.to_json())


def saved_roster(out: Path) -> Roster | None:
    """The roster a batch kept in ``out``, if any."""
    path = out / SAVED
    if not path.is_file():
        return None
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return Roster(tuple(Student(**{f: clean_name(r.get(f, "")) for f in FIELDS})
                            for r in rows))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise RosterError(f"{path} is damaged ({type(exc).__name__}); run batch again with "
                          "--roster") from None


def unknown_ids(ids: Iterable[str], roster: Roster | None) -> list[str]:
    """The gradebook ids the roster does not list (none without a roster), sorted."""
    if roster is None:
        return []
    return sorted(i for i in ids if roster.find(i) is None)

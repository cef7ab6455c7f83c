"""``rnngrade export``: the gradebook in the import format of an LMS.

Each format is a CSV file with one row per student and one score column per lab, rebuilt from the
gradebook (and the roster a batch kept, or one given) like ``grades.csv``; every text cell goes
through ``csv_cell``, so no name or id is read as a formula.

- ``canvas``: Canvas's gradebook import. Columns ``Student``, ``ID``, ``SIS User ID``, ``SIS
  Login ID``, ``Section``, then one per lab named ``labN: title``; the second row is ``Points
  Possible`` with each lab's maximum. Canvas matches a student by ``ID`` (Canvas's own user id,
  unknown here and left empty), ``SIS User ID`` (the roster's SIS id) or ``SIS Login ID`` (the
  student id); a column whose name is not an existing assignment becomes a new assignment with
  those points. A missing student scores 0, an excused one ``EX`` (Canvas's excused mark).
- ``moodle``: Moodle's "Import grades from CSV file". Columns ``Full name``, ``Email address``,
  ``ID number`` (the SIS id), ``Username`` (the student id), then one per lab; on import the
  instructor maps one of these to Moodle's user field of the same name and each lab column to a
  grade item whose maximum grade is the lab's points. An excused student's cell is empty (no
  grade imported).
- ``gradescope-roster``: Gradescope's roster upload (Roster: Add Students or Staff, CSV): ``Name``,
  ``Email``, ``SID``, ``Section``, one row per roster student, no scores. Gradescope imports no
  scores from a CSV file (an autograder reports them: ``rnngrade gradescope``); it matches
  students by a unique email, so every student needs one. The name ``gradescope-csv`` (a roster
  with score columns, which no Gradescope page reads) is refused with a pointer to this one.

A result the grader failed on has no score in any format (the cell is empty: nothing is
imported for it). With a roster, only roster students are exported (entries it does not list are
named in the summary and by ``rnngrade batch``); without one, every gradebook student is, by id.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import UsageError
from rnngrade.files import write_atomic
from rnngrade.gradebook.export import GradeRow, course_rows, graded_labs, lab_points
from rnngrade.gradebook.roster import (
    MissingPolicy,
    Roster,
    Student,
    match_key,
    saved_roster,
    zero_for_missing,
)
from rnngrade.gradebook.store import FILENAME, Gradebook
from rnngrade.harness.formatting import format_points
from rnngrade.labs import UnknownLabError, get_lab
from rnngrade.results.escape import csv_cell

EXCUSED = "excused"


class ExportError(UsageError):
    """The export cannot be written (no gradebook, an unknown format or lab)."""


@dataclass
class Table:
    """Students (in order) and, per student, their row for each lab."""

    labs: list[str]
    students: list[Student]
    rows: dict[str, dict[str, GradeRow]]  # match_key(student id) → lab → row
    left_out: list[str] = field(default_factory=list)  # graded ids the roster does not list

    def row(self, student: Student, lab: str) -> GradeRow | None:
        return self.rows.get(match_key(student.id), {}).get(lab)


def _title(lab: str) -> str:
    try:
        return f"{lab}: {get_lab(lab).title}"
    except UnknownLabError:
        return lab


def _points(row: GradeRow | None, excused: str) -> str:
    """A score cell: points, ``excused`` for an excused student, empty when there is no score."""
    if row is None:
        return ""
    if row.score is None:
        return excused if row.status == EXCUSED else ""
    return format_points(row.score, 4)


def canvas(table: Table) -> list[list[str]]:
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
             *[_title(lab) for lab in table.labs]],
            ["Points Possible", "", "", "", "",
             *[format_points(_max(table, lab), 4) for lab in table.labs]]]
    for s in table.students:
        rows.append([s.name or s.id, "", s.sis_id, s.id, s.section,
                     *[_points(table.row(s, lab), "EX") for lab in table.labs]])
    return rows


def moodle(table: Table) -> list[list[str]]:
    rows = [["Full name", "Email address", "ID number", "Username",
             *[_title(lab) for lab in table.labs]]]
    for s in table.students:
        rows.append([s.name, s.email, s.sis_id, s.id,
                     *[_points(table.row(s, lab), "") for lab in table.labs]])
    return rows


def gradescope_roster(table: Table) -> list[list[str]]:
    no_email = [s.id for s in table.students if not s.email]
    if no_email:
        shown = ", ".join(no_email[:10]) + (f" and {len(no_email) - 10} more"
                                            if len(no_email) > 10 else "")
        raise ExportError(f"gradescope-roster: Gradescope matches students by email and "
                          f"{len(no_email)} student(s) have none ({shown}); give a roster with "
                          "an email column (--roster)")
    seen: dict[str, str] = {}
    for s in table.students:
        other = seen.setdefault(s.email.casefold(), s.id)
        if other != s.id:
            raise ExportError(f"gradescope-roster: {other} and {s.id} have the same email "
                              f"{s.email!r}; Gradescope needs a different one for each student")
    return [["Name", "Email", "SID", "Section"],
            *[[s.name or s.id, s.email, s.sis_id, s.section] for s in table.students]]


FORMATS: dict[str, Callable[[Table], list[list[str]]]] = {
    "canvas": canvas, "moodle": moodle, "gradescope-roster": gradescope_roster}
RETIRED = {"gradescope-csv": "--format gradescope-csv is gone: it wrote a roster with score "
                             "columns that no Gradescope import reads. Use --format "
                             "gradescope-roster for Gradescope's roster upload; Gradescope takes "
                             "scores from its autograder (`rnngrade gradescope`), not from a CSV"}


def _max(table: Table, lab: str) -> float:
    found = [r.max_score for per in table.rows.values() for name, r in per.items() if name == lab]
    return max(found, default=0.0) or lab_points(lab)


def build_table(book: Gradebook, roster: Roster | None, labs: list[str],
                missing: MissingPolicy = zero_for_missing) -> Table:
    rows: dict[str, dict[str, GradeRow]] = {}
    for row in course_rows(book, roster, missing, labs):
        rows.setdefault(match_key(row.student), {})[row.lab] = row
    ids = {match_key(r.student): r.student for per in rows.values() for r in per.values()}
    if roster is None:
        return Table(labs, [Student(ids[key]) for key in sorted(ids)], rows)
    left_out = sorted(ids[key] for key in ids if roster.find(ids[key]) is None)
    return Table(labs, list(roster.students), rows, left_out)


def render_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell(cell) for cell in row])
    return out.getvalue()


def export(out: Path, fmt: str, target: Path, *, labs: list[str] | None = None,
           roster: Roster | None = None,
           missing: MissingPolicy = zero_for_missing) -> tuple[Path, Table]:
    """Write the gradebook of the batch folder ``out`` as ``fmt`` to ``target``."""
    if fmt in RETIRED:
        raise ExportError(RETIRED[fmt])
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")
    if not (out / FILENAME).is_file():
        raise ExportError(f"{out} holds no gradebook ({FILENAME}): give the --out folder of "
                          "`rnngrade batch`")
    if target.is_dir():
        raise ExportError(f"{target} is a folder; give the file to write")
    book = Gradebook(out / FILENAME)
    try:
        known = graded_labs(book)
        for lab in labs or []:
            if lab not in known:
                raise ExportError(f"the gradebook in {out} has no results for {lab}; it has: "
                                  f"{', '.join(known) or 'none'}")
        table = build_table(book, roster if roster is not None else saved_roster(out),
                            labs or known, missing)
    finally:
        book.close()
    return write_atomic(target, render_csv(FORMATS[fmt](table))), table

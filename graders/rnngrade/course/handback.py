"""Feedback ready to hand back: one folder per student with what the student may read
(``feedback.html``, ``feedback.md``; never ``results.json``, which holds hidden tests' details),
and a manifest (``manifest.csv``, ``manifest.json``) that a bulk-upload script reads: per student
the final score, the points possible and the paths of their files, relative to the manifest,
with the name, email and SIS id the batch's roster gives.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rnngrade.files import write_atomic
from rnngrade.gradebook.store import GRADER_ERROR, Gradebook
from rnngrade.results.escape import csv_cell

FOLDER = "handback"
FILES = ("feedback.html", "feedback.md")


@dataclass
class HandbackRow:
    student_id: str
    name: str  # from the roster a batch kept ("" without one)
    email: str
    sis_id: str
    lab: str
    status: str
    final: float | None  # None: not graded yet (a grader error)
    points_possible: float
    late_days: int
    overrides: int
    feedback_html: str
    feedback_md: str
    sha256: str  # of feedback.html, so an upload can be checked


def write_handback(book: Gradebook, lab: str, folder_of: Callable[[str], Path],
                   out: Path) -> list[HandbackRow]:
    """Copy each student's feedback of ``lab`` to ``out/<student>/`` and write the manifest."""
    from rnngrade.gradebook.roster import saved_roster

    adjustments = book.adjustments(lab)
    roster = saved_roster(out.parent.parent)  # out: OUT/labN/handback
    rows = []
    for row in book.current_rows(lab):
        student = row["student_id"]
        source = folder_of(student)
        if not all((source / name).is_file() for name in FILES):
            continue  # reports not written (a disk or renderer fault, reported by the batch)
        target = out / student
        target.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.copyfile(source / name, target / name)
        adjusted = adjustments.get(student)
        graded = row["status"] != GRADER_ERROR
        final = (adjusted["final_points"] if adjusted else row["score"]) if graded else None
        who = roster.find(student) if roster is not None else None
        rows.append(HandbackRow(
            student, who.name if who else "", who.email if who else "",
            who.sis_id if who else "", lab, row["status"], final,
            adjusted["points_possible"] if adjusted else row["max_score"],
            adjusted["late_days"] if adjusted else 0, adjusted["overrides"] if adjusted else 0,
            f"{student}/feedback.html", f"{student}/feedback.md",
            hashlib.sha256((target / "feedback.html").read_bytes()).hexdigest()))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(list(HandbackRow.__dataclass_fields__))
    for item in rows:
        writer.writerow([csv_cell(v) if isinstance(v, str) else ("" if v is None else v)
                         for v in asdict(item).values()])
    write_atomic(out / "manifest.csv", text.getvalue())
    write_atomic(out / "manifest.json", json.dumps(
        {"lab": lab, "students": [asdict(r) for r in rows]}, indent=1, ensure_ascii=True) + "\n")
    return rows

"""Exports of a gradebook: ``grades.csv`` for an LMS, ``summary.html`` for the instructor.

Both are computed from the students' *current* results in the gradebook (never from what one run
happened to grade), and written atomically (a temporary file renamed over the old one). With a
roster, every roster student has a row for each lab: a student without a submission gets the
missing policy's mark (0 by default), and a gradebook id the roster does not list is flagged.

Layout under a batch's output folder ``OUT`` (one gradebook for the whole course)::

    OUT/gradebook.sqlite       every lab's results
    OUT/grades.csv             every student and lab, one row each, with a ``lab`` column
    OUT/labN/grades.csv        that lab's rows
    OUT/labN/summary.html      that lab's summary
    OUT/labN/students/<id>/    each student's reports for that lab

The summary's mean, median and histogram count exactly the rows whose ``score`` cell in
``grades.csv`` is filled: a submission that could not be loaded and a missing student count 0,
a result the grader failed on (and an excused student) counts nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import sqlite3
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.files import write_atomic
from rnngrade.gradebook.points import in_course_points
from rnngrade.gradebook.roster import (
    MissingMark,
    MissingPolicy,
    Roster,
    Student,
    match_key,
    zero_for_missing,
)
from rnngrade.gradebook.roster_table import GradeRow, RosterRow, roster_rows
from rnngrade.gradebook.store import ERROR, GRADED, GRADER_ERROR, LOAD_ERROR, TIMEOUT, Gradebook
from rnngrade.grading.rubric import load_rubric
from rnngrade.harness.formatting import format_points
from rnngrade.labs import get_lab
from rnngrade.results.escape import csv_cell
from rnngrade.results.model import Diagnosis, FailureKind
from rnngrade.results.render import render
from rnngrade.results.sanitize import clean_name, clean_text

CSV_COLUMNS = ("student_id", "lab", "score", "max_score", "percent", "graded_at",
               "submission_sha256", "name", "email", "sis_id", "section", "in_roster",
               # score is the final one; what the course file and the staff changed (course/);
               # every number in the course's points, but the last two: the lab rubric's
               "raw_score", "late_days", "penalty", "overrides", "status",
               "raw_rubric_score", "rubric_max_score")
STATUS_TEXT: dict[str, str] = {
    LOAD_ERROR: "could not be loaded", ERROR: "grader error", TIMEOUT: "timed out",
    GRADED: "graded", GRADER_ERROR: "not graded: grader error (graded again next run)"}
COURSE_CSV = "grades.csv"
MISSING = "missing"  # a roster student without a submission (zero_for_missing's status)


def lab_folder(out: Path, lab: str) -> Path:
    """Where one lab's exports and reports go under a batch's output folder."""
    return out / lab


def lab_points(lab: str, rows: list[GradeRow] | None = None) -> float:
    """A lab's maximum score: its rubric's points (else the most any result shows)."""
    try:
        return load_rubric(get_lab(lab).rubric_path()).max_points
    except Exception:  # noqa: BLE001 - no rubric to read: fall back on the results
        return max((r.max_score for r in rows or []), default=0.0)


def grade_rows(book: Gradebook, lab: str, roster: Roster | None = None,
               missing: MissingPolicy = zero_for_missing) -> list[GradeRow]:
    """Every current result of ``lab`` and, with a roster, a row per roster student who has
    none (``missing`` decides how it counts, unless the staff set the student's score: see
    ``missing_row``); sorted by student id."""
    rows = []
    adjustments = book.adjustments(lab)
    for row in book.current_rows(lab):
        scored = row["status"] != GRADER_ERROR  # not graded: no score, not even 0
        student = roster.find(row["student_id"]) if roster is not None else None
        raw = row["score"] if scored else None
        item = GradeRow(row["student_id"], row["lab"], row["status"], raw, row["max_score"],
                        row["graded_at"], row["sha256"], student,
                        None if roster is None else student is not None, raw_score=raw,
                        raw_rubric_score=raw, rubric_max_score=row["max_score"])
        adjusted = adjustments.get(row["student_id"])
        if adjusted is not None:
            possible = adjusted["points_possible"]
            item.score = adjusted["final_points"] if scored else None
            item.max_score = possible
            item.raw_score = None if raw is None else \
                in_course_points(raw, row["max_score"], possible)
            item.late_days = adjusted["late_days"]
            item.penalty = in_course_points(adjusted["penalty"], row["max_score"], possible)
            item.overrides = adjusted["overrides"]
        rows.append(item)
    if roster is not None:
        present = {match_key(r.student) for r in rows}
        scaled = {a["points_possible"] for a in adjustments.values()}
        points = scaled.pop() if len(scaled) == 1 else lab_points(lab, rows)
        overrides = {match_key(o["student_id"]): o for o in book.overrides(lab) if not o["test"]}
        for student in roster.students:
            if match_key(student.id) not in present:
                rows.append(missing_row(student, lab, points, missing(student, lab),
                                        overrides.get(match_key(student.id))))
    return sorted(rows, key=lambda r: (match_key(r.student), r.student))


def missing_row(student: Student, lab: str, points: float, mark: MissingMark,
                override: sqlite3.Row | None) -> GradeRow:
    """The row of a roster student without a submission: the missing policy's mark, or the
    score the staff set (``rnngrade override`` without ``--test``; the latest one counts)."""
    rubric = lab_points(lab)
    row = GradeRow(student.id, lab, mark.status, mark.score, points, roster=student,
                   in_roster=True, note=mark.note, submitted=False, rubric_max_score=rubric)
    if override is not None:
        row.status = MISSING
        row.score = in_course_points(override["score"], rubric, points)
        row.overrides = 1
        row.note = (f"no submission; the course staff set the score: "
                    f"{clean_text(override['comment'], 300)} ({clean_name(override['made_by'])}, "
                    f"{override['made_at'][:10]})")
    return row


def rows_csv(rows: list[GradeRow]) -> str:
    """``grades.csv`` of ``rows``: every text cell formula-safe (``csv_cell``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        percent = r.percent
        who = r.roster or Student(r.student)
        in_roster = "" if r.in_roster is None else ("yes" if r.in_roster else "no")
        # text cells through csv_cell: an id such as "=HYPERLINK(...)" is read as text
        writer.writerow([csv_cell(clean_name(r.student)), csv_cell(r.lab),
                         "" if r.score is None else format_points(r.score, 4),
                         format_points(r.max_score, 4),
                         "" if percent is None else f"{percent:.2f}",
                         csv_cell(r.graded_at), csv_cell(r.sha256), csv_cell(who.name),
                         csv_cell(who.email), csv_cell(who.sis_id), csv_cell(who.section),
                         in_roster,
                         "" if r.raw_score is None else format_points(r.raw_score, 4),
                         r.late_days, format_points(r.penalty, 4), r.overrides,
                         csv_cell(r.status),
                         "" if r.raw_rubric_score is None else format_points(r.raw_rubric_score, 4),
                         format_points(r.rubric_max_score, 4)])
    return out.getvalue()


def grades_csv(book: Gradebook, lab: str, roster: Roster | None = None,
               missing: MissingPolicy = zero_for_missing) -> str:
    """One row per student for ``lab``: the current result's score, for an LMS import."""
    return rows_csv(grade_rows(book, lab, roster, missing))


def graded_labs(book: Gradebook) -> list[str]:
    """The labs the gradebook holds results for, in course order (lab2 before lab10)."""
    labs = [row[0] for row in book.db.execute("SELECT DISTINCT lab FROM results").fetchall()]
    return sorted(labs, key=lambda name: (len(name), name))


def course_rows(book: Gradebook, roster: Roster | None = None,
                missing: MissingPolicy = zero_for_missing,
                labs: list[str] | None = None) -> list[GradeRow]:
    """Every student's row for every lab (``labs``: only these), by student then lab."""
    labs = labs or graded_labs(book)
    rows = [r for lab in labs for r in grade_rows(book, lab, roster, missing)]
    order = {lab: i for i, lab in enumerate(labs)}
    return sorted(rows, key=lambda r: (match_key(r.student), r.student, order[r.lab]))


def course_csv(book: Gradebook, roster: Roster | None = None,
               missing: MissingPolicy = zero_for_missing) -> str:
    """The course-wide ``grades.csv``: one row per student and lab."""
    return rows_csv(course_rows(book, roster, missing))


@dataclass
class TestStat:
    name: str
    title: str
    points: float
    total: int = 0
    passed: int = 0
    partial: int = 0
    failed: int = 0
    skipped: int = 0
    score_sum: float = 0.0

    @property
    def pass_rate(self) -> float:
        ran = self.total - self.skipped
        return 100.0 * self.passed / ran if ran else 0.0

    def share(self, count: int) -> float:
        return 100.0 * count / self.total if self.total else 0.0

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.total if self.total else 0.0


@dataclass
class DiagnosisStat:
    kind: str  # "mistake": a known mistake (a mutant) | "pattern": how a result is wrong
    name: str
    description: str
    students: int
    tests: list[str]
    hint: str


@dataclass
class Summary:
    lab: str
    lab_title: str
    generated_at: str
    grader_versions: list[str]
    students: int
    graded: int
    max_score: float
    mean: float
    median: float
    stdev: float
    full_marks: int
    zero: int
    errors: list[dict] = field(default_factory=list)
    timeouts: list[dict] = field(default_factory=list)
    slowest: list[dict] = field(default_factory=list)
    tests: list[TestStat] = field(default_factory=list)
    diagnoses: list[DiagnosisStat] = field(default_factory=list)
    bins: list[tuple[str, int]] = field(default_factory=list)  # the score histogram's bars
    run: dict = field(default_factory=dict)
    roster: int = 0  # students on the roster (0: no roster)
    missing: list[dict] = field(default_factory=list)  # roster students without a submission
    not_in_roster: list[str] = field(default_factory=list)  # entries the roster does not list
    table: list[RosterRow] = field(default_factory=list)  # every student's row, with links
    similarity: str = ""  # link to the similarity report, when there is one
    warnings: list[str] = field(default_factory=list)  # submission times that look wrong


SIMILARITY_PAGE = "similarity/index.html"
BINS = [f"{lo}–{lo + 9}" for lo in range(0, 100, 10)] + ["100"]


def histogram(percents: list[float]) -> list[tuple[str, int]]:
    """Scores in percent counted in 10-point bins and a bin for 100: ``(label, count)`` each."""
    counts = [0] * len(BINS)
    for p in percents:
        p = min(max(p, 0.0), 100.0)
        index = len(BINS) - 1 if p >= 99.995 else min(int(p // 10), len(BINS) - 2)
        counts[index] += 1
    return list(zip(BINS, counts))


def _topic(title: str) -> str:
    """What a test is about: its title up to the first colon, parenthesis or 'against'."""
    return re.split(r":|\(| against ", title, maxsplit=1)[0].strip() or title


def split_diagnosis(stored: object) -> tuple[str, str, str]:
    """(kind, name, description) of a stored diagnosis: one that names a known mistake, or a
    pattern (``a: your result is all zeros``, a structural localisation)."""
    diagnosis = Diagnosis.from_data(stored)
    if diagnosis.is_known_mistake:
        return "mistake", diagnosis.name, diagnosis.text
    return "pattern", "", diagnosis.text


def summarise(book: Gradebook, lab_name: str, slowest: int = 8, roster: Roster | None = None,
              missing: MissingPolicy = zero_for_missing,
              warnings: Sequence[str] = ()) -> Summary:
    """Everything summary.html shows, from the current results of ``lab_name`` (and the roster:
    its students without a submission, the entries it does not list); ``warnings``: what looks
    wrong with the lab's submission times (the course pass says)."""
    lab = get_lab(lab_name)
    rows = book.current_rows(lab_name)
    graded = [r for r in rows if r["status"] == GRADED]
    everyone = grade_rows(book, lab_name, roster, missing)
    # the same rows, and the same scores, as grades.csv: an empty submission counts 0 in both
    percents = [p for p in (r.percent for r in everyone) if p is not None]
    summary = Summary(
        lab=lab.name, lab_title=lab.title,
        generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        grader_versions=sorted({r["grader_version"] for r in rows}),
        students=len(everyone), graded=len(graded),
        max_score=max((r.max_score for r in everyone), default=0.0),
        mean=statistics.fmean(percents) if percents else 0.0,
        median=statistics.median(percents) if percents else 0.0,
        stdev=statistics.pstdev(percents) if len(percents) > 1 else 0.0,
        full_marks=sum(1 for p in percents if p >= 99.995),
        zero=sum(1 for p in percents if p <= 0.005), bins=histogram(percents),
        roster=len(roster) if roster is not None else 0)
    summary.missing = [{"student": clean_name(r.student), "status": r.status,
                        "note": clean_name(r.note)} for r in everyone if not r.submitted]
    summary.not_in_roster = [clean_name(r.student) for r in everyone if r.in_roster is False]
    summary.warnings = list(warnings)
    summary.errors = [{"student": clean_name(r["student_id"]),
                       "entry": clean_name(r["entry_name"]),
                       "status": STATUS_TEXT.get(r["status"], r["status"]),
                       "message": clean_text(r["error"])} for r in rows if r["status"] != GRADED]
    final = {r.student: r for r in everyone if r.submitted}
    summary.slowest = [{"student": clean_name(r["student_id"]), "seconds": r["execution_time"],
                        "score": final[r["student_id"]].score,
                        "max_score": final[r["student_id"]].max_score, "worker": r["worker"]}
                       for r in sorted(graded, key=lambda r: -r["execution_time"])[:slowest]]
    tests: dict[str, TestStat] = {}
    diagnosed: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    diagnosis_tests: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    hints: dict[tuple[str, str, str], str] = {}
    timeouts: dict[str, Counter] = defaultdict(Counter)
    for t in book.test_rows(lab_name):
        if t["result_status"] != GRADED:
            continue
        stat = tests.setdefault(t["test"], TestStat(t["test"], t["title"], t["max_score"]))
        stat.points = max(stat.points, t["max_score"])
        stat.total += 1
        stat.score_sum += t["score"]
        outcome = t["outcome"]
        if outcome == "passed":
            stat.passed += 1
        elif outcome == "partial":
            stat.partial += 1
        elif outcome == "skipped":
            stat.skipped += 1
        else:
            stat.failed += 1
        for diagnosis in json.loads(t["diagnosis"]):
            key = split_diagnosis(diagnosis)
            diagnosed[key].add(t["student_id"])
            diagnosis_tests[key][_topic(t["title"])] += 1
            if t["hint"] and key[0] == "mistake":
                hints.setdefault(key, t["hint"])
        if FailureKind.TIMEOUT in json.loads(t["failure_kinds"]):
            timeouts[t["student_id"]][_topic(t["title"])] += 1
    summary.tests = list(tests.values())
    stats = [DiagnosisStat(*key, len(students),
                           [name for name, _ in diagnosis_tests[key].most_common(3)],
                           hints.get(key, "")) for key, students in diagnosed.items()]
    summary.diagnoses = sorted(
        [d for d in stats if d.kind == "mistake"], key=lambda d: (-d.students, d.name))[:10]
    summary.diagnoses += sorted([d for d in stats if d.kind == "pattern"],
                                key=lambda d: (-d.students, d.description))[:5]
    summary.timeouts = [{"student": clean_name(s), "tests": [f"{topic} ({n} test{'s' * (n > 1)})"
                                                 for topic, n in topics.items()]}
                        for s, topics in sorted(timeouts.items())]
    summary.timeouts += [{"student": e["student"], "tests": []}
                         for e in summary.errors if e["status"] == STATUS_TEXT[TIMEOUT]]
    runs = book.runs()
    if runs:
        summary.run = dict(zip(runs[-1].keys(), runs[-1]))
    summary.table = roster_rows(everyone, STATUS_TEXT)
    return summary


def render_summary(summary: Summary) -> str:
    return render("summary.html.j2", s=summary)


def write_exports(book: Gradebook, lab: str, out: Path, roster: Roster | None = None,
                  missing: MissingPolicy = zero_for_missing,
                  warnings: Sequence[str] = ()) -> dict[str, Path]:
    """Write ``lab``'s ``grades.csv`` and ``summary.html`` into ``out/lab/`` and rebuild the
    course-wide ``out/grades.csv`` from the gradebook (every file atomically). The summary
    links the similarity report when ``out/lab/similarity/index.html`` exists, and shows
    ``warnings`` about the submission times."""
    folder = lab_folder(out, lab)
    summary = summarise(book, lab, roster=roster, missing=missing, warnings=warnings)
    if (folder / SIMILARITY_PAGE).is_file():
        summary.similarity = SIMILARITY_PAGE
    return {
        "summary.html": write_atomic(folder / "summary.html", render_summary(summary)),
        "grades.csv": write_atomic(folder / "grades.csv", grades_csv(book, lab, roster, missing)),
        "course csv": write_atomic(out / COURSE_CSV, course_csv(book, roster, missing)),
    }

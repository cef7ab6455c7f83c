"""A term run end to end, as a new instructor runs it: a course file with a time zone and a late
policy, a roster with a typo'd extension, a class copied with ``cp``, a late student, a wrong
submission, a student who never submitted, overrides, a regrade and the three exports. Every
refusal names what to do, and every final grade is what the course file says: checked against
an independent computation from the course file's numbers, in every place the grade is shown.

Grading is real (lab1 in-process, one worker): what is under test is that the number the grader
gives reaches the LMS unchanged but for the course's rules.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.times import MANIFEST
from rnngrade.paths import course_root

SAMPLES = course_root() / "fixtures" / "submissions" / "lab1"
POINTS = 10.0  # lab1 counts 10 course points; its rubric has 24
PENALTY = 20.0  # percent of the lab's points per started day late

COURSE = """title: Recurrent networks
timezone: Europe/Berlin
late_policy: {penalty_per_day: 20, max_days: 3}
labs:
  lab1: {release: 2026-09-01, due: "2026-09-21 23:59", points: 10}
extensions:
  TYPO: {lab1: 2d}
"""

ROSTER = """id,name,email
u1001,Ada Byron,ada@example.edu
u1002,Bo Li,bo@example.edu
u1003,Cy Young,cy@example.edu
u1042,Di Park,di@example.edu
u1050,Ed Moss,ed@example.edu
"""

# When each student handed in, as the LMS recorded it (UTC): u1002 a day and a bit late,
# u1042 two days late but inside the two days of their extension.
MANIFEST_TIMES = {
    "u1001": "2026-09-21T20:00:00Z",
    "u1002": "2026-09-22T23:30:00Z",  # 01:30 on the 23rd in Berlin: 2 started days late
    "u1003": "2026-09-21T21:00:00Z",
    "u1042": "2026-09-23T20:00:00Z",  # 22:00 on the 23rd in Berlin, before 23:59 on the 23rd
}
LATE_DAYS = {"u1001": 0, "u1002": 2, "u1003": 0, "u1042": 0}


def grades(out: Path) -> dict[str, dict[str, str]]:
    with (out / "lab1" / "grades.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def batch(subs: Path, out: Path, course: Path, roster: Path, *extra: str) -> int:
    return main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                 "-j", "1", "--quiet", "--course", str(course), "--roster", str(roster), *extra])


def expected_final(raw_rubric: float, late_days: int, override: float | None = None) -> float:
    """The course file's rule, computed here from its numbers: scale to the lab's points, an
    override replaces the graded total, then the penalty per started day, never below 0."""
    graded = override if override is not None else raw_rubric * POINTS / 24
    return max(0.0, graded - POINTS * PENALTY / 100 * late_days)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("term")
    subs = tmp / "submissions"
    subs.mkdir()
    for student in ("u1001", "u1002", "u1042"):
        shutil.copytree(SAMPLES / "reference", subs / student)  # as `cp -r` would
    shutil.copytree(SAMPLES / "buggy_feeds_a0", subs / "u1003")
    course = tmp / "course.yaml"
    course.write_text(COURSE.replace("TYPO", "u1024"))
    roster = tmp / "roster.csv"
    roster.write_text(ROSTER)
    return subs, course, roster, tmp / "grading"


def test_a_term_from_the_first_batch_to_the_lms(term, capsys):
    subs, course, roster, out = term

    # 1. the extension's id is a typo: refused before anything is graded, naming the fix
    assert batch(subs, out, course, roster) == 2
    err = capsys.readouterr().err
    assert "u1024" in err and "u1042" in err and "not on the roster" in err
    assert not (out / "lab1" / "grades.csv").exists()
    course.write_text(COURSE.replace("TYPO", "u1042"))

    # 2. a class copied with cp has no time anyone can trust: refused, naming the three fixes
    assert batch(subs, out, course, roster) == 2
    err = capsys.readouterr().err
    assert MANIFEST in err and "--times-from files" in err
    assert not (out / "lab1" / "grades.csv").exists()

    # 3. file times when asked: the whole class was copied a moment ago, months after the due
    #    date. Graded, but the warning is loud and says what to do
    assert batch(subs, out, course, roster, "--times-from", "files") == 0
    captured = capsys.readouterr()
    assert "WARNING" in captured.err and MANIFEST in captured.err
    summary = (out / "lab1" / "summary.html").read_text()
    assert "WARNING" in summary or "warning" in summary.lower()

    # 4. the manifest the LMS download gives: the grades are the course file's
    (subs / MANIFEST).write_text(json.dumps(
        {student: {"submitted_at": at} for student, at in MANIFEST_TIMES.items()}))
    assert batch(subs, out, course, roster) == 0
    captured = capsys.readouterr()
    assert "WARNING" not in captured.err
    table = grades(out)
    raw = {student: float(row["raw_rubric_score"]) for student, row in table.items()
           if student != "u1050"}
    assert raw["u1001"] == raw["u1002"] == raw["u1042"] == 24  # the reference, copied
    assert 0 < raw["u1003"] < 24  # a wrong rnn_forward loses points, not all of them
    for student, days in LATE_DAYS.items():
        row = table[student]
        assert int(row["late_days"]) == days, student
        assert float(row["score"]) == pytest.approx(expected_final(raw[student], days), abs=1e-3)
        assert float(row["max_score"]) == POINTS
    assert table["u1050"]["status"] == "missing" and float(table["u1050"]["score"]) == 0
    # the terminal's closing table shows the final grade in course points, not 24/24
    assert "course points" in captured.out and "6/10" in captured.out
    assert "24/24" not in captured.out
    # the student reads the due date in the course's time zone, UTC beside it
    feedback = (out / "lab1" / "students" / "u1002" / "feedback.html").read_text()
    assert "2026-09-21 23:59 Europe/Berlin (21:59 UTC)" in feedback
    assert "2 days late" in feedback
    assert "6 / 10 course points" in (out / "lab1" / "students" / "u1002" / "feedback.md"
                                      ).read_text()

    # 5. overrides in course points: one for a wrong submission, one for a student who never
    #    submitted (an oral exam)
    assert main(["override", "u1003", "--lab", "lab1", "--score", "7", "--comment",
                 "partial credit after a meeting", "--out", str(out), "--course",
                 str(course)]) == 0
    assert main(["override", "u1050", "--lab", "lab1", "--score", "5", "--comment",
                 "oral exam", "--out", str(out), "--course", str(course)]) == 0
    capsys.readouterr()

    # 6. a regrade of one student keeps the others' overrides and the penalties
    assert batch(subs, out, course, roster, "--only", "u1002", "--regrade") == 0
    printed = capsys.readouterr().out
    assert "kept the staff's overrides" not in printed  # u1002 has none
    table = grades(out)
    final = {student: float(row["score"]) for student, row in table.items()}
    want = {"u1001": expected_final(24, 0), "u1002": expected_final(24, 2),
            "u1003": expected_final(raw["u1003"], 0, override=7),
            "u1042": expected_final(24, 0), "u1050": 5.0}
    assert final == pytest.approx(want, abs=1e-3)

    # 7. the three exports carry the same final grades
    canvas = out / "canvas.csv"
    moodle = out / "moodle.csv"
    roster_upload = out / "gradescope.csv"
    assert main(["export", str(out), "--format", "canvas", "--out", str(canvas)]) == 0
    assert main(["export", str(out), "--format", "moodle", "--out", str(moodle)]) == 0
    assert main(["export", str(out), "--format", "gradescope-roster", "--out",
                 str(roster_upload)]) == 0
    with canvas.open(newline="") as handle:
        canvas_rows = list(csv.reader(handle))
    column = next(i for i, name in enumerate(canvas_rows[0]) if name.startswith("lab1"))
    # Canvas's "SIS Login ID"-style column holds the roster id; find it by value
    in_canvas = {}
    for row in canvas_rows[1:]:
        for student in want:
            if student in row:
                in_canvas[student] = float(row[column])
    assert in_canvas == pytest.approx(want, abs=1e-2)
    moodle_text = moodle.read_text()
    for student in want:
        assert student in moodle_text or table[student]["email"] in moodle_text
    with roster_upload.open(newline="") as handle:
        uploaded = list(csv.DictReader(handle))
    assert {row["Email"] for row in uploaded} == {
        "ada@example.edu", "bo@example.edu", "cy@example.edu", "di@example.edu",
        "ed@example.edu"}

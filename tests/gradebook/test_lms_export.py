"""rnngrade export: Canvas and Moodle scores and Gradescope's roster from the course gradebook."""

from __future__ import annotations

import csv
import io

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradebook.lms import export
from rnngrade.gradebook.roster import MissingMark, parse_roster

from .conftest import EMPTY, FULL, batch, entries
from .test_roster import ROSTER


def table(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture
def course(tmp_path, made_up_grading):
    """lab1 and lab2 batched into one folder, with a roster (dave never submits)."""
    out = tmp_path / "out"
    roster = parse_roster(ROSTER)
    batch(entries(tmp_path / "l1", alice=FULL, bob=EMPTY), "lab1", out, roster=roster)
    batch(entries(tmp_path / "l2", alice=FULL, mallory=FULL), "lab2", out)
    return out


def test_canvas_has_points_possible_and_matches_by_sis_ids(course, tmp_path, capsys):
    target = tmp_path / "canvas.csv"
    assert main(["export", str(course), "--format", "canvas", "--out", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "3 student(s) × 2 lab(s)" in printed
    assert "left out, not on the roster: mallory" in printed
    rows = table(target)
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[0][5].startswith("lab1: ") and rows[0][6].startswith("lab2: ")
    assert rows[1][0] == "Points Possible" and rows[1][5] == "24"
    by_login = {row[3]: row for row in rows[2:]}
    assert by_login["alice"][:3] == ["Alice Liddell", "", "1001"]
    assert by_login["alice"][5:] == ["24", by_login["alice"][6]] and by_login["alice"][6] != "0"
    assert by_login["Bob"][5] == "0"  # could not be loaded: 0 as in grades.csv
    assert by_login["dave"][5:] == ["0", "0"]  # on the roster, never submitted
    assert by_login["dave"][0].startswith("'=")  # formula-safe
    assert "mallory" not in by_login  # not on the roster: flagged, not exported


def test_moodle_columns(course, tmp_path):
    moodle, _ = export(course, "moodle", tmp_path / "moodle.csv", labs=["lab1"])
    rows = table(moodle)
    assert rows[0][:4] == ["Full name", "Email address", "ID number", "Username"]
    assert len(rows[0]) == 5 and rows[1] == ["Alice Liddell", "alice@example.edu", "1001",
                                             "alice", "24"]


def test_gradescope_roster_is_gradescopes_roster_upload_without_scores(course, tmp_path):
    """Gradescope's roster upload: a header row, a full name, a unique email (how Gradescope
    matches students), optional SID and a column whose header says "section"; it reads no
    scores, so none are written."""
    path, _ = export(course, "gradescope-roster", tmp_path / "gs.csv")
    rows = table(path)
    assert rows[0] == ["Name", "Email", "SID", "Section"]
    assert rows[1:] == [["Alice Liddell", "alice@example.edu", "1001", "A"],
                        ["Bob Smith", "bob@example.edu", "1002", "B"],
                        [rows[3][0], "dave@example.edu", "1004", "A"]]
    assert rows[3][0].startswith("'=")  # formula-safe, as in every format


def test_gradescope_roster_needs_an_email_for_every_student(tmp_path, made_up_grading, capsys):
    out = tmp_path / "out"
    batch(entries(tmp_path / "l1", alice=FULL, bob=EMPTY), "lab1", out)  # no roster: no emails
    assert main(["export", str(out), "--format", "gradescope-roster",
                 "--out", str(tmp_path / "gs.csv")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "matches students by email" in err and "(alice, bob)" in err
    assert "--roster" in err and "Traceback" not in err
    assert not (tmp_path / "gs.csv").exists()
    twins = tmp_path / "twins.csv"
    twins.write_text("id,email\nalice,a@x.edu\nbob,A@X.edu\n", encoding="utf-8")
    assert main(["export", str(out), "--format", "gradescope-roster", "--roster", str(twins),
                 "--out", str(tmp_path / "gs.csv")]) == ExitCode.USAGE
    assert "alice and bob have the same email" in capsys.readouterr().err


def test_the_retired_gradescope_csv_name_is_a_usage_error_naming_its_successor(course, tmp_path,
                                                                               capsys):
    target = tmp_path / "gs.csv"
    assert main(["export", str(course), "--format", "gradescope-csv", "--out", str(target)]) \
        == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "--format gradescope-roster" in err and "no Gradescope import reads" in err
    assert "Traceback" not in err and not target.exists()
    assert main(["export", str(course), "--format", "blackboard", "--out", str(target)]) \
        == ExitCode.USAGE
    assert "choose canvas, moodle, gradescope-roster" in capsys.readouterr().err


def test_excused_is_canvas_ex_and_empty_elsewhere(course, tmp_path):
    def excused(student, lab):
        return MissingMark("excused", None, "excused per course file")

    path, _ = export(course, "canvas", tmp_path / "c.csv", labs=["lab1"], missing=excused)
    assert {row[3]: row[5] for row in table(path)[2:]}["dave"] == "EX"
    path, _ = export(course, "moodle", tmp_path / "m.csv", labs=["lab1"], missing=excused)
    assert {row[3]: row[4] for row in table(path)[1:]}["dave"] == ""


def test_export_errors_are_usage_errors(course, tmp_path, capsys):
    for argv, message in (
            ([str(tmp_path / "nothing"), "--format", "canvas"], "holds no gradebook"),
            ([str(course), "--format", "canvas", "--lab", "lab5"], "has no results for lab5"),
            ([str(course), "--format", "moodle", "--roster", str(tmp_path / "none.csv")],
             "is not a file")):
        assert main(["export", *argv, "--out", str(tmp_path / "x.csv")]) == ExitCode.USAGE
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err

"""--roster: reading it (aliases, hostile cells, clear errors), missing students, entries not
on it, and the hook a course file uses to excuse a student."""

from __future__ import annotations

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradebook.roster import (
    MissingMark,
    RosterError,
    Student,
    load_roster,
    parse_roster,
    saved_roster,
)

from .conftest import FULL, batch, entries, read_rows

ROSTER = ("Login,Full Name,Email Address,SIS User ID,Section,Notes\n"
          "alice,Alice Liddell,alice@example.edu,1001,A,x\n"
          "Bob,Bob Smith,bob@example.edu,1002,B,\n"
          "dave,\"=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",dave@example.edu,1004,A,\n")
HOSTILE_IDS = "id\n<b>eve</b>\n[bold red]zed\n"


def test_headers_are_matched_by_their_usual_spellings_and_cells_are_cleaned():
    roster = parse_roster("\ufeffStudent ID,Name,E-mail,SIS ID,Sections\n"
                          "al\x1b[31mice,Alice\x07 Liddell,a@x.edu,7,\"A\nB\"\n")
    (alice,) = roster.students
    assert alice == Student("alice", "Alice Liddell", "a@x.edu", "7", "A B")
    assert roster.find("ALICE") is alice  # ids compare case-folded


@pytest.mark.parametrize("text, message", [
    ("name,email\nAlice,a@x\n", "no student id column"),
    ("id,name\n,Alice\n", "line 2: the student id is empty"),
    ("id,name\nalice,A\nALICE,B\n", "line 3: student id 'ALICE' is already on line 2"),
    ("", "is empty"),
])
def test_bad_rosters_say_what_to_fix(text, message):
    with pytest.raises(RosterError, match=message):
        parse_roster(text)


def test_unreadable_roster_files_are_usage_errors_without_traceback(tmp_path, capsys):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,name\nz\xe9,Zoé\n".encode("latin-1"))
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"id\n\0\0\0")
    (tmp_path / "subs").mkdir()
    for roster, message in ((latin, "is not UTF-8"), (binary, "not a text file"),
                            (tmp_path / "absent.csv", "is not a file")):
        code = main(["batch", str(tmp_path / "subs"), "--lab", "lab1", "--out",
                     str(tmp_path / "out"), "--roster", str(roster), "--inprocess", "--quiet"])
        err = capsys.readouterr().err
        assert code == ExitCode.USAGE and message in err and "Traceback" not in err
    with pytest.raises(RosterError):
        load_roster(tmp_path)


def test_missing_students_count_zero_and_strangers_are_flagged(tmp_path, made_up_grading,
                                                               capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    subs = entries(tmp_path / "subs", alice=FULL, bob=FULL, mallory=FULL)
    out = tmp_path / "out"
    code = main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--roster",
                 str(roster), "--inprocess", "--quiet", "-j", "1"])
    printed = capsys.readouterr().out
    assert code == ExitCode.OK
    assert "3 student(s); 1 without a submission" in printed
    assert "missing: dave" in printed and "not on the roster: mallory" in printed
    rows = {r["student_id"]: r for r in read_rows(out / "lab1" / "grades.csv")}
    assert (rows["dave"]["status"], rows["dave"]["score"], rows["dave"]["max_score"]) == \
        ("missing", "0", "24")
    assert rows["dave"]["name"] == "'=HYPERLINK(\"http://evil\",\"x\")"  # formula-safe
    assert (rows["bob"]["email"], rows["bob"]["section"], rows["bob"]["in_roster"]) == \
        ("bob@example.edu", "B", "yes")  # entry "bob" is roster id "Bob"
    assert rows["mallory"]["in_roster"] == "no" and rows["mallory"]["name"] == ""
    page = (out / "lab1" / "summary.html").read_text()
    assert 'id="not-in-roster"' in page and "mallory" in page and 'id="missing"' in page
    assert "=HYPERLINK" not in page or "&#34;" in page or "&quot;" in page
    # the mean counts dave's 0 as grades.csv does: 3 of 4 rows at 100%
    assert "75.0%" in page
    # a later run without --roster uses the copy kept in the output folder
    assert saved_roster(out) is not None
    report = batch(subs, "lab1", out)
    assert report.missing == ["dave"] and report.not_in_roster == ["mallory"]


def test_a_missing_policy_can_excuse_a_student(tmp_path, made_up_grading):
    def excuse_dave(student: Student, lab: str) -> MissingMark:
        if student.id == "dave":
            return MissingMark("excused", None, "excused per course file")
        return MissingMark("missing", 0.0, "no submission")

    subs = entries(tmp_path / "subs", alice=FULL, bob=FULL)
    out = tmp_path / "out"
    batch(subs, "lab1", out, roster=parse_roster(ROSTER), missing=excuse_dave)
    rows = {r["student_id"]: r for r in read_rows(out / "lab1" / "grades.csv")}
    assert (rows["dave"]["status"], rows["dave"]["score"], rows["dave"]["percent"]) == \
        ("excused", "", "")
    page = (out / "lab1" / "summary.html").read_text()
    assert "excused per course file" in page and "100.0%" in page  # left out of the mean


def test_a_damaged_kept_roster_is_a_clear_error_and_leaves_the_folder_unlocked(
        tmp_path, made_up_grading, capsys):
    subs = entries(tmp_path / "subs", alice=FULL)
    out = tmp_path / "out"
    out.mkdir()
    (out / "roster.json").write_text("{not json")
    args = ["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess", "--quiet"]
    assert main(args) == ExitCode.USAGE
    assert "roster.json is damaged" in capsys.readouterr().err
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    assert main([*args, "--roster", str(roster)]) == ExitCode.OK  # not locked by the failure
    assert len(saved_roster(out)) == 3


def test_hostile_roster_ids_are_text_in_the_summary_and_on_the_terminal(tmp_path, made_up_grading,
                                                                     capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text(HOSTILE_IDS, encoding="utf-8")
    subs = entries(tmp_path / "subs", alice=FULL)
    out = tmp_path / "out"
    assert main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--roster",
                 str(roster), "--inprocess", "--quiet", "-j", "1"]) == ExitCode.OK
    printed = capsys.readouterr().out
    assert "missing: <b>eve</b>, [bold red]zed" in printed  # rich read no markup in it
    page = (out / "lab1" / "summary.html").read_text()
    assert "<b>eve" not in page and "&lt;b&gt;eve&lt;/b&gt;" in page

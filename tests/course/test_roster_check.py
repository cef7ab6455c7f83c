"""The course file against the roster: an extension, excuse or override for an id the roster
does not list stops the command (exit 2) with the nearest roster ids; a student excused in the
course file has no score for that lab, like a lab-wide ``missing: excused``."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.config import CourseError, load_course
from rnngrade.gradebook import batch
from rnngrade.gradebook.roster import parse_roster
from rnngrade.gradebook.store import FILENAME
from rnngrade.labs import get_lab

from .test_course_batch import InlinePool, rows

ROSTER = "id,name\nalice,Alice A\nu1042,Una\nu2001,Two\n"
LAB1 = 'labs:\n  lab1: {release: 2026-09-01, due: "2026-09-21 23:59", points: 10}\n'


@pytest.fixture(autouse=True)
def inline(monkeypatch):
    monkeypatch.setattr(batch, "LocalPool", InlinePool)


@pytest.fixture
def term(tmp_path: Path) -> tuple[Path, Path]:
    """Submissions (alice only; u1042 and u2001 submitted nothing) and the roster."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(get_lab("lab1").solution_path().read_text())
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    return subs, roster


def course_file(tmp_path: Path, extra: str, name: str = "course.yaml") -> Path:
    path = tmp_path / name
    path.write_text(LAB1 + extra)
    return path


def batch_args(subs: Path, out: Path, course: Path, *extra: str) -> list[str]:
    return ["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess", "--quiet",
            "--course", str(course), *extra]


def test_nearest_ids_find_the_transposed_digits():
    from rnngrade.course.roster_check import nearest_ids

    roster = parse_roster(ROSTER)
    assert nearest_ids("u1024", roster) == ["u1042"]
    assert nearest_ids("ALICE", roster) == ["alice"] and nearest_ids("zz", roster) == []


def test_every_unknown_id_is_named_with_its_key(tmp_path):
    from rnngrade.course.roster_check import check_course

    course = load_course(course_file(tmp_path, "extensions:\n  u1024: {lab1: 2}\n  alice: "
                                               "{lab1: 1}\nexcused:\n  U1042: [lab1]\n"
                                               "  u201: [lab1]\n"))
    with pytest.raises(CourseError) as caught:
        check_course(course, parse_roster(ROSTER), "roster.csv")
    message = str(caught.value)
    assert message.startswith(f"{course.path}: extensions.u1024: 'u1024' is not on the roster "
                              "(roster.csv); nearest: u1042")
    assert "excused.u201: 'u201' is not on the roster (roster.csv); nearest: u2001" in message
    assert "alice" not in message and "U1042" not in message  # on the roster (any case)


def test_a_typo_in_an_extension_stops_the_batch_before_grading(tmp_path, term, capsys):
    subs, roster = term
    course = course_file(tmp_path, "extensions:\n  u1024: {lab1: 2}\n")
    out = tmp_path / "out"
    assert main(batch_args(subs, out, course, "--roster", str(roster))) == 2
    err = capsys.readouterr().err
    assert "extensions.u1024: 'u1024' is not on the roster" in err and "nearest: u1042" in err
    assert str(course) in err and "Traceback" not in err
    assert not (out / FILENAME).exists()


def test_the_kept_roster_checks_batch_export_and_override(tmp_path, term, capsys):
    subs, roster = term
    good, typo = course_file(tmp_path, ""), course_file(tmp_path, "excused:\n  u1024: [lab1]\n",
                                                        "typo.yaml")
    out = tmp_path / "out"
    assert main(batch_args(subs, out, good, "--roster", str(roster))) == 0
    capsys.readouterr()
    kept = str(out / "roster.json")
    for args in (batch_args(subs, out, typo),
                 ["export", str(out), "--format", "canvas", "--out", str(tmp_path / "c.csv"),
                  "--course", str(typo)],
                 ["override", "alice", "--lab", "lab1", "--score", "1", "--comment", "x",
                  "--out", str(out), "--course", str(typo)]):
        assert main(args) == 2, args[0]
        err = capsys.readouterr().err
        assert f"excused.u1024: 'u1024' is not on the roster ({kept}); nearest: u1042" in err
    assert not (tmp_path / "c.csv").exists()


def test_an_override_for_an_id_not_on_the_roster_names_the_nearest(tmp_path, term, capsys):
    subs, roster = term
    out = tmp_path / "out"
    assert main(batch_args(subs, out, course_file(tmp_path, ""), "--roster", str(roster))) == 0
    capsys.readouterr()
    assert main(["override", "u1024", "--lab", "lab1", "--score", "1", "--comment", "x",
                 "--out", str(out)]) == 2
    assert "'u1024' is not on the roster" in (err := capsys.readouterr().err)
    assert "nearest: u1042" in err


def test_one_missing_student_is_excused_and_the_others_count_zero(tmp_path, term):
    subs, roster = term
    course = course_file(tmp_path, "excused:\n  u1042: [lab1, lab2]\n")
    out = tmp_path / "out"
    assert main(batch_args(subs, out, course, "--roster", str(roster))) == 0
    grades = rows(out)
    assert (grades["u1042"]["status"], grades["u1042"]["score"]) == ("excused", "")
    assert (grades["u2001"]["status"], grades["u2001"]["score"]) == ("missing", "0")
    assert grades["alice"]["score"] == "10"
    target = tmp_path / "canvas.csv"
    assert main(["export", str(out), "--format", "canvas", "--out", str(target), "--course",
                 str(course)]) == 0
    with target.open(newline="") as handle:
        table = list(csv.reader(handle))
    column = next(i for i, name in enumerate(table[0]) if name.startswith("lab1"))
    by_login = {row[3]: row[column] for row in table[2:]}
    assert by_login == {"alice": "10", "u1042": "EX", "u2001": "0"}

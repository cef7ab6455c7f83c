"""The course file: what it means, and a clear error (file and key named) for every mistake."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.config import CourseError, find_course, load_course
from rnngrade.paths import course_root

UTC = dt.timezone.utc


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_example_loads_with_its_schedule_policy_and_extensions():
    course = load_course(course_root() / "docs" / "course.example.yaml")
    lab2 = course.plan("lab2")
    assert lab2.due == dt.datetime(2026, 10, 5, 21, 59, tzinfo=UTC)  # 23:59 in Berlin (CEST)
    assert lab2.late.penalty_per_day == 20 and lab2.late.max_days == 3  # per lab over the default
    assert lab2.late.grace_minutes == 15 and lab2.points == 10
    assert course.plan("lab3").missing == "excused" and course.plan("lab1").missing == "zero"
    assert course.due_for("alice", "lab1") == (dt.datetime(2026, 9, 23, 21, 59, tzinfo=UTC),
                                               "extended by 2 days")
    assert course.due_for("bob", "lab2")[0] == dt.datetime(2026, 10, 7, 9, 59, tzinfo=UTC)
    assert course.due_for("carol", "lab3")[0] == dt.datetime(2026, 10, 30, 11, 0, tzinfo=UTC)
    assert course.due_for("dave", "lab1") == (lab1_due := course.plan("lab1").due, "")
    assert lab1_due is not None and course.plan("lab7").due is None
    assert course.excuses("dave", "lab2") and not course.excuses("dave", "lab1")


def test_bare_dates_open_at_midnight_and_close_at_23_59(tmp_path):
    course = load_course(write(tmp_path, "labs:\n  lab1: {release: 2026-09-07, due: "
                                         "2026-09-21}\n"))
    assert course.plan("lab1").release == dt.datetime(2026, 9, 7, tzinfo=UTC)
    assert course.plan("lab1").due == dt.datetime(2026, 9, 21, 23, 59, tzinfo=UTC)


@pytest.mark.parametrize("text, key", [
    ("labs:\n  lab1: {due: tomorrow}\n", "labs.lab1.due"),
    ("labs:\n  lab1: {deu: 2026-09-21}\n", "labs.lab1.deu"),
    ("labs:\n  lab99: {due: 2026-09-21}\n", "labs.lab99"),
    ("labs:\n  lab1: {release: 2026-09-22, due: 2026-09-21}\n", "labs.lab1.due"),
    ("late_policy: {penalty_per_day: 150}\n", "late_policy.penalty_per_day"),
    ("late_policy: {max_days: -1}\n", "late_policy.max_days"),
    ("labs:\n  lab1: {late_policy: {grace_minutes: many}}\n",
     "labs.lab1.late_policy.grace_minutes"),
    ("labs:\n  lab1: {points: 0}\n", "labs.lab1.points"),
    ("missing: forgiven\n", "missing"),
    ("timezone: Mars/Olympus\n", "timezone"),
    ("extensions:\n  alice: {lab1: forever}\n", "extensions.alice.lab1"),
    ("extensions:\n  alice: {lab42: 2}\n", "extensions.alice.lab42"),
    ("labs: [lab1]\n", "labs"),
    ("excused:\n  alice: [lab42]\n", "excused.alice"),
    ("excused:\n  alice: {lab1: yes}\n", "excused.alice"),
    ("excused:\n  alice: []\n", "excused.alice"),
    ("excused: [alice]\n", "excused"),
    ("extensions:\n  alice: {lab1: 2}\n  Alice: {lab2: 1}\n", "extensions.Alice"),
    ("grading: strict\n", "grading"),
])
def test_every_mistake_names_the_file_and_the_key(tmp_path, text, key):
    path = write(tmp_path, text)
    with pytest.raises(CourseError) as caught:
        load_course(path)
    assert str(caught.value).startswith(f"{path}: {key}: ")


@pytest.mark.parametrize("text, key", [
    ("labs:\n  lab1: {due: 9999-12-31}\n", "labs.lab1.due"),
    ("labs:\n  lab1: {release: 1900-01-01}\n", "labs.lab1.release"),
    ("labs:\n  lab1: {due: '0001-01-01T00:00:00+01:00'}\n", "labs.lab1.due"),
    ("labs:\n  lab1: {due: '9999-12-31T23:59:59-23:59'}\n", "labs.lab1.due"),
    ("labs:\n  lab1: {due: 2026-09-21}\nextensions:\n  alice: {lab1: 1000000000000}\n",
     "extensions.alice.lab1"),
    ("labs:\n  lab1: {due: 2026-09-21}\nextensions:\n  alice: {lab1: 1.0e+12}\n",
     "extensions.alice.lab1"),
    ("labs:\n  lab1: {due: 2026-09-21}\nextensions:\n  alice: {lab1: .inf}\n",
     "extensions.alice.lab1"),
    ("extensions:\n  alice: {lab1: '99999999999999999999h'}\n", "extensions.alice.lab1"),
    ("labs:\n  lab1: {due: 9998-12-30}\nextensions:\n  alice: {lab1: 3}\n",
     "extensions.alice.lab1"),
    ("extensions:\n  alice: {lab1: 9999-12-31}\n", "extensions.alice.lab1"),
    ("late_policy: {grace_minutes: 1.0e+300}\n", "late_policy.grace_minutes"),
    ("late_policy: {grace_minutes: .inf}\n", "late_policy.grace_minutes"),
])
def test_a_date_or_duration_out_of_range_names_the_key(tmp_path, text, key):
    path = write(tmp_path, text)
    with pytest.raises(CourseError) as caught:
        load_course(path)
    assert str(caught.value).startswith(f"{path}: {key}: ")


def test_a_due_date_near_the_end_of_the_range_with_an_extension_is_a_usage_error(tmp_path,
                                                                                   capsys):
    path = write(tmp_path, "labs:\n  lab1: {due: 9998-12-31}\nextensions:\n  bob: {lab1: 2}\n")
    code = main(["batch", str(tmp_path), "--lab", "lab1", "--out", str(tmp_path / "out"),
                 "--inprocess", "--quiet", "--course", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "extensions.bob.lab1" in err and "out of range" in err
    assert "Traceback" not in err


def test_times_near_the_range_still_load_and_extend(tmp_path):
    course = load_course(write(tmp_path, "labs:\n  lab1: {release: 1970-01-02, due: 9998-12-01}"
                                         "\nextensions:\n  bob: {lab1: '36h'}\n"))
    assert course.due_for("bob", "lab1") == (dt.datetime(9998, 12, 3, 11, 59, tzinfo=UTC),
                                             "extended by 36 hours")


def test_a_bad_course_file_is_exit_2_with_one_line(tmp_path, capsys):
    path = write(tmp_path, "labs:\n  lab1: {due: tomorrow}\n")
    assert main(["release", "--out", str(tmp_path / "rel"), "--course", str(path)]) == 2
    err = capsys.readouterr().err
    assert "labs.lab1.due" in err and str(path) in err and "Traceback" not in err
    assert main(["release", "--out", str(tmp_path / "rel"), "--course",
                 str(tmp_path / "nope.yaml")]) == 2
    assert "no such course file" in capsys.readouterr().err
    assert main(["release", "--out", str(tmp_path / "rel"), "--course",
                 str(write(tmp_path, "labs: {lab1: [\n"))]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_without_a_course_file_there_is_none(tmp_path, monkeypatch):
    assert not (course_root() / "course.yaml").exists()  # the checkout ships only the example
    assert find_course(None) is None


def test_a_student_is_excused_from_the_labs_listed_and_ids_match_without_case(tmp_path):
    course = load_course(write(tmp_path, "labs:\n  lab1: {due: 2026-09-21}\n"
                                         "extensions:\n  U1042: {lab1: 2}\n"
                                         "excused:\n  u1042: [lab2, lab3]\n  bob: lab1\n"))
    assert course.excuses("u1042", "lab2") and course.excuses("U1042", "lab3")
    assert not course.excuses("u1042", "lab1") and course.excuses("bob", "lab1")
    assert not course.excuses("alice", "lab1")
    assert course.due_for("u1042", "lab1") == (dt.datetime(2026, 9, 23, 23, 59, tzinfo=UTC),
                                               "extended by 2 days")
    assert course.student_keys() == [("U1042", "extensions.U1042"), ("u1042", "excused.u1042"),
                                     ("bob", "excused.bob")]

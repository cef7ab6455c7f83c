"""``rnngrade release`` with a course file: labs go out on their release dates, and a lab whose
shipped code answers a lab still open is refused, with the reason, unless ``--force``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.config import load_course
from rnngrade.course.schedule import answer_leaks, due_out, implemented_functions
from rnngrade.labs import available_labs, get_lab
from rnngrade.paths import course_root
from rnngrade.release.build import ReleaseError, build_release, lab_files

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 9, 30, 12, tzinfo=UTC)


def course(tmp_path: Path, lab1_due: str, zone: str = "UTC"):
    path = tmp_path / "course.yaml"
    path.write_text(f"timezone: {zone}\nlabs:\n  lab1: {{release: 2026-09-01, due: {lab1_due}}}\n"
                    "  lab2: {release: 2026-09-22, due: 2026-10-05}\n"
                    "  lab3: {release: 2026-10-06, due: 2026-10-19}\n")
    return load_course(path)


def test_lab2_ships_working_copies_of_lab1s_functions_and_stubs_of_its_own():
    source = (course_root() / "assignments" / "lab2" / "bptt.py").read_text()
    found = implemented_functions(source)
    assert {"softmax", "rnn_cell_forward", "rnn_forward"} <= found
    assert not found & set(get_lab("lab2").functions)  # its own graded functions are stubs
    assert implemented_functions("def f():\n    '''doc'''\n    ...\n"
                                 "def g():\n    raise NotImplementedError\n") == set()


def test_labs_go_out_when_their_release_date_has_come(tmp_path):
    ready, held = due_out(course(tmp_path, "2026-09-21"), available_labs(), NOW)
    assert [lab.name for lab in ready] == ["lab1", "lab2"]
    assert any(h.startswith("lab3: to be released on 2026-10-06") for h in held)
    assert any(h.startswith("lab4: no release date") for h in held)


@pytest.fixture(scope="module")
def lab2_files() -> dict[str, bytes]:
    return lab_files(get_lab("lab2"), course_root(), [])


def test_releasing_lab2_before_lab1_is_due_gives_its_answers_away(tmp_path, lab2_files):
    leaks = answer_leaks(course(tmp_path, "2026-10-01"), [get_lab("lab2")], available_labs(),
                         lab2_files, NOW)
    assert [(leak.lab, leak.answers) for leak in leaks] == [("lab2", "lab1")]
    assert leaks[0].functions == ("softmax", "rnn_cell_forward", "rnn_forward")
    assert "due 2026-10-01 23:59 UTC" in leaks[0].reason()
    assert answer_leaks(course(tmp_path, "2026-09-21"), [get_lab("lab2")], available_labs(),
                        lab2_files, NOW) == []  # lab1 is past its due date


def test_release_and_due_dates_are_shown_in_the_courses_time_zone(tmp_path, lab2_files):
    berlin = course(tmp_path, "2026-10-01", "Europe/Berlin")
    [leak] = answer_leaks(berlin, [get_lab("lab2")], available_labs(), lab2_files, NOW)
    assert "due 2026-10-01 23:59 Europe/Berlin (21:59 UTC)" in leak.reason()
    held = due_out(berlin, available_labs(), NOW)[1]
    assert "lab3: to be released on 2026-10-06 00:00 Europe/Berlin (2026-10-05 22:00 UTC)" in held


def test_release_refuses_with_the_reason_unless_forced(tmp_path, lab2_files, monkeypatch):
    import rnngrade.release.build as build

    monkeypatch.setattr(build, "build_files", lambda labs, root, **kw: (lab2_files, []))
    plan = course(tmp_path, "2027-01-01")
    with pytest.raises(ReleaseError, match="lab2's assignments/lab2/bptt.py ships working "
                                           "softmax, rnn_cell_forward, rnn_forward, graded in "
                                           "lab1 .due 2027-01-01"):
        build_release(tmp_path / "rel", [get_lab("lab2")], course=plan, verify=False)
    assert not (tmp_path / "rel").exists()
    report = build_release(tmp_path / "rel", [get_lab("lab2")], course=plan, force=True,
                           verify=False)
    assert any(w.startswith("released anyway (--force): lab2's") for w in report.warnings)
    assert (tmp_path / "rel" / "assignments" / "lab2" / "bptt.py").is_file()
    build_release(tmp_path / "rel2", [get_lab("lab2")], verify=False)  # no course: as before


def test_release_command_without_a_date_come_says_so(tmp_path, capsys):
    path = tmp_path / "course.yaml"
    path.write_text("labs:\n  lab1: {release: 2999-01-01, due: 2999-02-01}\n")
    assert main(["release", "--out", str(tmp_path / "rel"), "--course", str(path)]) == 1
    captured = capsys.readouterr()
    assert "lab1: to be released on 2999-01-01" in captured.out
    assert "no lab's release date" in captured.err


def test_a_lab_named_before_its_release_date_waits_unless_forced(tmp_path, capsys, monkeypatch):
    import rnngrade.release as release

    built: list[list[str]] = []

    def build(out, labs, **kw):
        built.append([lab.name for lab in labs])
        return build_release(out, labs, verify=False, **kw)

    monkeypatch.setattr(release, "build_release", build)
    path = tmp_path / "course.yaml"
    path.write_text("labs:\n  lab1: {release: 2026-09-01, due: 2026-09-21}\n"
                    "  lab6: {release: 2999-01-11 09:00, due: 2999-02-01}\n")
    args = ["release", "--out", str(tmp_path / "rel"), "--course", str(path)]
    assert main([*args, "--lab", "lab1", "--lab", "lab6"]) == 1
    err = capsys.readouterr().err
    assert "not released before its release date" in err and str(path) in err
    assert "lab6: to be released on 2999-01-11 09:00 UTC" in err and "--force" in err
    assert "lab1:" not in err and built == [] and not (tmp_path / "rel").exists()
    assert main([*args, "--lab", "lab6", "--force"]) == 0
    out = capsys.readouterr().out
    assert "released before its date (--force): lab6: to be released on 2999-01-11" in out
    assert built == [["lab6"]] and (tmp_path / "rel" / "assignments" / "lab6").is_dir()
    assert main([*args, "--lab", "lab5"]) == 0  # no release date: named, it goes out
    assert built[-1] == ["lab5"]

"""Labs are discovered from their folders: metadata in ``graders/suites/labN/lab.yaml``, checked on
load; a new lab needs its own folders and nothing in the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.errors import GraderError
from rnngrade.labs import LABS, LabConfigError, available_labs, get_lab, load_lab
from rnngrade.limits import Limits
from rnngrade.paths import course_root

from .toy_course import TOY, toy_course

ROOT = course_root()

TOY_LAB = """\
title: "Toy: doubling"
module: toy
functions: [double, halve]
uses_torch: false
budget_seconds: 30
limits: {call_seconds: 2.5, memory_bytes: 1 GiB}
"""
TOY_SOLUTION = '''\
"""Toy lab: doubling and halving."""


def double(x):
    """2·x."""
    # BEGIN SOLUTION
    return 2 * x
    # END SOLUTION


def halve(x):
    """x / 2."""
    # BEGIN SOLUTION
    return x / 2
    # END SOLUTION
'''
TOY_SUITE = '''\
"""Hidden suite of the toy lab."""

import pytest


@pytest.mark.parametrize("x", [1.0, -3.0, 0.5])
def test_double(check, x):
    check.expect("double(x)", lambda m, x: m.double(x), (x,))


def test_halve(check):
    check.expect("halve(x)", lambda m, x: m.halve(x), (5.0,))
'''
TOY_RUBRIC = """\
lab: lab90
tests:
  test_double: {points: 3, title: "double"}
  test_halve: {points: 1, title: "halve"}
"""


@pytest.fixture
def toy(tmp_path: Path):
    files = {f"graders/suites/{TOY}/lab.yaml": TOY_LAB,
             f"graders/suites/{TOY}/rubric.yaml": TOY_RUBRIC,
             f"graders/suites/{TOY}/test_toy_hidden.py": TOY_SUITE,
             f"solutions/{TOY}/toy.py": TOY_SOLUTION,
             f"assignments/{TOY}/README.md": "# Toy lab\n"}
    with toy_course(tmp_path, files) as root:
        yield root


def test_course_labs_come_from_their_folders():
    names = list(LABS)
    assert names[:7] == [f"lab{n}" for n in range(1, 8)]  # in number order (lab10 after lab9)
    assert names == sorted(names, key=lambda name: int(name[3:]))
    assert all((ROOT / "graders" / "suites" / name / "lab.yaml").is_file() for name in names)
    lab = get_lab("lab6")
    assert (lab.module, lab.functions[0], lab.uses_torch) == ("decoding",
                                                              "softmax_with_temperature", False)
    assert lab.limits == Limits() and lab.budget_seconds == 300.0


def test_a_new_lab_grades_without_engine_changes(toy: Path, tmp_path: Path):
    from rnngrade.grading.engine import grade_isolated

    lab = get_lab("lab90")
    assert list(LABS) == ["lab90"]
    assert lab.limits == Limits(call_seconds=2.5, memory_bytes=1 << 30)
    assert lab.budget_seconds == 30.0 and lab.functions == ("double", "halve")
    submission = tmp_path / "toy.py"
    submission.write_text("def double(x):\n    return x + x\n\n\ndef halve(x):\n    return x\n")
    result = grade_isolated(submission, "lab90", device="cpu", inprocess=True)
    scores = {t.name: (t.score, t.max_score) for t in result.tests}
    assert scores == {"test_double": (3.0, 3.0), "test_halve": (0.0, 1.0)}, \
        [(t.name, t.message) for t in result.tests]
    assert result.lab_title == "Toy: doubling"


@pytest.mark.parametrize("text, complaint", [
    ("title: [unclosed", "not valid YAML"),
    ("- a list", "expected a mapping"),
    (TOY_LAB.replace("module: toy", "module: toy.py"), "module must be a Python module name"),
    (TOY_LAB.replace("functions: [double, halve]", "functions: []"), "functions must be"),
    (TOY_LAB.replace("functions: [double, halve]", "functions: [double, double]"), "twice"),
    (TOY_LAB.replace("uses_torch: false", "uses_torch: maybe"), "uses_torch must be"),
    (TOY_LAB.replace("title: \"Toy: doubling\"\n", ""), "missing field(s) title"),
    (TOY_LAB + "points: 3\n", "unknown field(s) points"),
    (TOY_LAB.replace("budget_seconds: 30", "budget_seconds: -1"), "budget_seconds must"),
    (TOY_LAB.replace("call_seconds: 2.5", "wall_secs: 2.5"), "unknown limit 'wall_secs'"),
    (TOY_LAB.replace("1 GiB", "lots"), "memory_bytes must be a number of bytes"),
    (TOY_LAB.replace("call_seconds: 2.5", "call_seconds: 0"), "call_seconds must be a positive"),
])
def test_a_malformed_lab_yaml_names_the_field(tmp_path: Path, text: str, complaint: str):
    path = tmp_path / "lab90" / "lab.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabConfigError) as raised:
        load_lab(path)
    assert complaint in str(raised.value) and str(path) in str(raised.value)
    assert isinstance(raised.value, GraderError)


def test_limits_accept_sizes_and_reject_unknown_fields():
    limits = Limits().overridden({"memory_bytes": "512 MiB", "cpu_seconds": 5}, "here")
    assert (limits.memory_bytes, limits.cpu_seconds) == (512 << 20, 5)
    with pytest.raises(ValueError, match="here: unknown limit 'cpu'"):
        Limits().overridden({"cpu": 1}, "here")


def test_an_edited_lab_yaml_is_read_again(toy: Path):
    import time

    from rnngrade.labs import RECHECK_SECONDS

    assert get_lab(TOY).budget_seconds == 30.0
    path = toy / "graders" / "suites" / TOY / "lab.yaml"
    path.write_text(TOY_LAB.replace("budget_seconds: 30", "budget_seconds: 45"))
    time.sleep(RECHECK_SECONDS + 0.1)
    assert get_lab(TOY).budget_seconds == 45.0


def test_a_lab_knows_where_each_of_its_files_is():
    for lab in available_labs():
        assert lab.rubric_path().is_file(), lab.name
        assert lab.mutants_path().is_file(), lab.name
        assert lab.public_cases_path().is_file(), lab.name
        assert lab.helpers_path().parent == lab.suite_dir(), lab.name

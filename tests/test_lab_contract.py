"""The lab contract is declared once (``rnngrade.lab_contract``): the readers accept exactly the
declared fields and word their complaints from it, docs/AUTHORING.md's tables are its rendering,
and the structural diagnosis reads the names a lab's own lab.yaml declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from rnngrade import lab_contract as contract
from rnngrade.authoring.contract_docs import AUTHORING, stale_contract_tables
from rnngrade.course.config import CourseError, load_course
from rnngrade.diagnosis import structural
from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.errors import MutantError, RubricError
from rnngrade.grading.rubric import parse_rubric
from rnngrade.harness import markers
from rnngrade.labs import LabConfigError, get_lab, load_lab
from rnngrade.paths import course_root
from rnngrade.results.model import CaseResult
from rnngrade.suite import worker

# A valid value of every declared field: a field declared without one fails the coverage test.
LAB_VALUES: dict[str, Any] = {
    "title": "Toy", "module": "toy", "functions": ["double"], "uses_torch": False,
    "budget_seconds": 30, "limits": {"call_seconds": 2}, "worker_imports": ["json"],
    "structure": {"initial_state_zeroed": ["s0"], "previous_state_zeroed": ["s_prev"],
                  "gates": {"reset": {"gradient": "dzr", "parameters": ["dWr", "dbr"]}}},
}
LAB_WRONG: dict[str, Any] = {
    "title": "", "module": "toy.py", "functions": [], "uses_torch": "maybe",
    "budget_seconds": 0, "limits": [1], "worker_imports": "json", "structure": [1],
}
RUBRIC_VALUES: dict[str, Any] = {"lab": "lab90", "tests": {}, "visibility": "hidden",
                                 "outcome": False}
ENTRY_VALUES: dict[str, Any] = {"points": 2, "title": "Doubles", "visibility": "visible"}
COURSE_VALUES: dict[str, Any] = {
    "title": "RNNs", "timezone": "Europe/Berlin", "late_policy": {}, "missing": "excused",
    "labs": {}, "extensions": {"alice": {"lab90": 2}}, "excused": {"bob": ["lab90"]},
}
COURSE_LAB_VALUES: dict[str, Any] = {"release": "2026-09-01", "due": "2026-09-08",
                                     "points": 10, "late_policy": {}, "missing": "zero"}
LATE_VALUES: dict[str, Any] = {"penalty_per_day": 10, "max_days": 3, "grace_minutes": 5}


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / "lab90" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("section, values", [
    (contract.LAB, LAB_VALUES), (contract.STRUCTURE, LAB_VALUES["structure"]),
    (contract.GATE, LAB_VALUES["structure"]["gates"]["reset"]),
    (contract.RUBRIC, RUBRIC_VALUES), (contract.RUBRIC_ENTRY, ENTRY_VALUES),
    (contract.COURSE, COURSE_VALUES), (contract.COURSE_LAB, COURSE_LAB_VALUES),
    (contract.LATE_POLICY, LATE_VALUES)], ids=lambda s: getattr(s, "title", ""))
def test_every_declared_field_has_an_example_here(section, values):
    assert set(values) == set(section.names)


def test_lab_yaml_accepts_every_declared_field_and_no_other(tmp_path):
    lab = load_lab(_write(tmp_path, "lab.yaml", LAB_VALUES))
    assert (lab.title, lab.module, lab.functions, lab.uses_torch) == ("Toy", "toy", ("double",),
                                                                      False)
    assert (lab.budget_seconds, lab.limits.call_seconds, lab.worker_imports) == (30, 2,
                                                                                 ("json",))
    assert lab.structure == contract.Structure(
        ("s0",), ("s_prev",), (contract.Gate("reset", "dzr", ("dWr", "dbr")),))
    gate = {"gradient": "d", "parameters": ["W"], "bias": 1}
    for section, data in [(contract.LAB, {**LAB_VALUES, "points": 3}),
                          (contract.STRUCTURE, {**LAB_VALUES, "structure": {"zeroed": []}}),
                          (contract.GATE, {**LAB_VALUES, "structure": {"gates": {"g": gate}}})]:
        with pytest.raises(LabConfigError) as raised:
            load_lab(_write(tmp_path, "lab.yaml", data))
        unknown = {contract.LAB: "points", contract.STRUCTURE: "zeroed"}.get(section, "bias")
        assert str(raised.value).endswith(section.unknown_message([unknown]))


@pytest.mark.parametrize("name", list(LAB_WRONG))
def test_a_wrong_lab_field_is_named_in_the_declared_words(tmp_path, name):
    assert set(LAB_WRONG) == set(contract.LAB.names)
    path = _write(tmp_path, "lab.yaml", {**LAB_VALUES, name: LAB_WRONG[name]})
    with pytest.raises(LabConfigError) as raised:
        load_lab(path)
    assert str(raised.value).startswith(contract.LAB[name].wrong(str(path)))


def test_rubric_yaml_accepts_every_declared_field_and_no_other(tmp_path):
    path = tmp_path / "rubric.yaml"
    data = {**RUBRIC_VALUES, "tests": {"test_double": ENTRY_VALUES}}
    rubric = parse_rubric(yaml.safe_dump(data), path)
    assert rubric.entries["test_double"].title == "Doubles" and rubric.outcome is False
    assert (rubric.lab, rubric.max_points, rubric.entries["test_double"].visibility) == (
        "lab90", 2, "visible")
    hidden = parse_rubric(yaml.safe_dump({**data, "tests": {"test_double": {"points": 1}}}), path)
    assert hidden.entries["test_double"].visibility == "hidden"  # the file's visibility
    with pytest.raises(RubricError, match=r"unknown field\(s\) points; the fields are lab, "):
        parse_rubric(yaml.safe_dump({**data, "points": 1}), path)
    misspelt = {**data, "tests": {"test_double": {"point": 2}}}
    with pytest.raises(RubricError, match=r"test_double: unknown field\(s\) point; the fields"):
        parse_rubric(yaml.safe_dump(misspelt), path)
    wrong = {**data, "tests": {"test_double": {"points": -1}}}
    with pytest.raises(RubricError) as raised:
        parse_rubric(yaml.safe_dump(wrong), path)
    assert str(raised.value).endswith(contract.RUBRIC_ENTRY["points"].wrong("test_double"))


def test_the_course_file_accepts_every_declared_field_and_no_other(tmp_path):
    data = {**COURSE_VALUES, "late_policy": LATE_VALUES,
            "labs": {"lab90": {**COURSE_LAB_VALUES, "late_policy": LATE_VALUES}}}
    path = tmp_path / "course.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    course = load_course(path, {"lab90"})
    assert course.plan("lab90").late.grace_minutes == 5 and course.title == "RNNs"
    assert (course.timezone, course.plan("lab90").points, course.plan("lab90").missing) == (
        "Europe/Berlin", 10, "zero")
    assert course.due_for("alice", "lab90")[1] == "extended by 2 days"
    assert course.excuses("bob", "lab90")
    for key, section, bad in [("deadline", contract.COURSE, {**data, "deadline": 1}),
                              ("labs.lab90.weight", contract.COURSE_LAB,
                               {**data, "labs": {"lab90": {"weight": 1}}}),
                              ("late_policy.cap", contract.LATE_POLICY,
                               {**data, "late_policy": {"cap": 1}})]:
        path.write_text(yaml.safe_dump(bad), encoding="utf-8")
        with pytest.raises(CourseError) as raised:
            load_course(path, {"lab90"})
        name = key.rpartition(".")[2]
        assert str(raised.value) == f"{path}: {key}: {section.unknown_message([name])}"


# A wrong value of every course-file field, where it sits, and the declared words it must get.
COURSE_WRONG: list[tuple[str, Any, str]] = [
    ("title", 3, contract.COURSE["title"].expected),
    ("timezone", "Mars/Olympus", contract.COURSE["timezone"].expected),
    ("late_policy", [1], contract.COURSE["late_policy"].expected),
    ("missing", "forgiven", contract.COURSE["missing"].expected),
    ("labs", ["lab90"], contract.COURSE["labs"].expected),
    ("extensions", ["alice"], contract.COURSE["extensions"].expected),
    ("extensions.alice.lab90", "forever", contract.EXTENSION),
    ("extensions.alice.lab90", 4000, contract.EXTENSION),
    ("excused", "bob", contract.COURSE["excused"].expected),
    ("excused.bob", [], contract.LAB_LIST),
    ("labs.lab90.release", "soon", contract.DATE),
    ("labs.lab90.due", 5, contract.DATE),
    ("labs.lab90.points", 0, contract.COURSE_LAB["points"].expected),
    ("labs.lab90.late_policy", "strict", contract.COURSE_LAB["late_policy"].expected),
    ("labs.lab90.missing", "maybe", contract.COURSE_LAB["missing"].expected),
    ("late_policy.penalty_per_day", 101, contract.LATE_POLICY["penalty_per_day"].expected),
    ("late_policy.max_days", 1.5, contract.LATE_POLICY["max_days"].expected),
    ("late_policy.grace_minutes", -1, contract.LATE_POLICY["grace_minutes"].expected),
]


def _nest(key: str, value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for ``"a.b"``."""
    head, _, rest = key.partition(".")
    return {head: _nest(rest, value) if rest else value}


def test_every_course_field_is_covered_by_a_wrong_value():
    covered = {key.rpartition(".")[2] for key, _, _ in COURSE_WRONG}
    for section in (contract.COURSE, contract.COURSE_LAB, contract.LATE_POLICY):
        assert set(section.names) <= covered | {"lab90", "alice", "bob"}, section.title


@pytest.mark.parametrize("key, value, words", COURSE_WRONG,
                         ids=[f"{k}={v!r}" for k, v, _ in COURSE_WRONG])
def test_a_wrong_course_value_is_named_in_the_declared_words(tmp_path, key, value, words):
    path = tmp_path / "course.yaml"
    path.write_text(yaml.safe_dump(_nest(key, value)), encoding="utf-8")
    with pytest.raises(CourseError) as raised:
        load_course(path, {"lab90"})
    assert str(raised.value).startswith(f"{path}: {key}: must be {words}, found ")


def test_a_mutant_table_is_read_by_its_declared_names(tmp_path):
    path = tmp_path / "lab90" / contract.MUTANTS_FILE
    path.parent.mkdir()
    table = load_mutant_table(path, "from rnngrade.suite import Mutant\n"
                                    "MUTANTS = [Mutant('a', 'f', 'd', 'h'), Mutant('b', 'f', "
                                    "'d', 'h')]\nINDISTINGUISHABLE = {('a', 'b'): 'same'}\n")
    assert [m.name for m in table.mutants] == ["a", "b"]
    assert table.indistinguishable == {frozenset({"a", "b"}): "same"}
    with pytest.raises(MutantError, match="defines no MUTANTS"):
        load_mutant_table(path, "MISTAKES = []\n")


def test_the_declared_markers_are_the_registered_ones(pytestconfig):
    """Every marker is registered in the declared words, and no other of the grader's."""
    registered = set(pytestconfig.getini("markers"))
    assert {f"{m.form}: {m.meaning}" for m in contract.MARKERS} <= registered
    assert [m.name for m in contract.MARKERS] == [m.name for m in markers.MARKERS]


def test_the_student_side_registers_the_public_markers_from_the_declaration(tmp_path):
    """``pytest assignments/labN`` (the student plugin alone) knows the public markers by their
    declared words, and not the grader's ``limits``."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                          "rnngrade.harness.checks.plugin", "--markers"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=True)
    lines = run.stdout
    for marker in markers.MARKERS:
        assert (f"@pytest.mark.{marker.line}" in lines) is marker.public, marker.name


def test_the_declared_decorators_are_those_of_the_suite_worker():
    assert {d.name for d in contract.HELPER_DECORATORS} == \
        {name for name in worker.__all__ if name != "watch_training"}
    assert all(callable(getattr(worker, d.name)) for d in contract.HELPER_DECORATORS)


def test_authoring_md_tables_are_rendered_from_the_declaration():
    assert stale_contract_tables() == [], \
        f"{AUTHORING}'s contract tables are stale: run `rnngrade generate` to rewrite them"


def test_a_changed_declaration_makes_the_tables_stale(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / AUTHORING).write_text((course_root() / AUTHORING).read_text(encoding="utf-8"))
    assert stale_contract_tables(tmp_path) == []
    changed = contract.Section("lab.yaml", "", (*contract.LAB.fields,
                                                contract.Field("extra", "text", "new")))
    monkeypatch.setattr(contract, "SECTIONS", (changed, *contract.SECTIONS[1:]))
    assert stale_contract_tables(tmp_path) == [
        f"{tmp_path / AUTHORING}: the table 'lab.yaml:top' differs from lab_contract's "
        "declaration"]


def _case(case: str, outcome: str) -> CaseResult:
    return CaseResult(case, outcome, kind="" if outcome == "passed" else "check")


def test_the_structural_diagnosis_reads_the_lab_s_declared_names(tmp_path):
    """A lab naming its cases otherwise (an attention lab: ``s_prev``, ``s0``) gets the same
    diagnoses from its own names, and none from lab 1's."""
    structure = load_lab(_write(tmp_path, "lab.yaml", LAB_VALUES)).structure
    previous = [_case("s_prev", "passed"), _case("x", "failed"), _case("U", "failed")]
    found = structural.localise_cases(previous, structure=structure)
    assert found is not None and found.name == structural.RECURRENT_TERM
    assert "s_prev = 0" in found.evidence
    initial = [_case("s0", "passed"), _case("x", "failed")]
    found = structural.localise_cases(initial, structure=structure)
    assert found is not None and found.name == structural.INITIAL_STATE
    lab1 = [_case("a_prev", "passed"), _case("x", "failed")]
    assert structural.localise_cases(lab1, structure=structure) is None
    assert structural.localise_cases(lab1, structure=get_lab("lab1").structure) is not None

    rng = np.random.default_rng(0)
    want = {f"g['{k}']": rng.standard_normal((2, 3)) for k in ("dx", "dWr", "dbr", "dWu", "dbu")}
    got = {**want, "g['dWr']": want["g['dWr']"] + 1}
    gate = structural.localise_check(got, want, ["g['dWr']"], 1e-10, 1e-8, None,
                                     gates=structure.gates)
    assert gate is not None and gate.name == "reset_gate_path" and "dzr" in gate.hint
    assert structural.localise_check(got, want, ["g['dWr']"], 1e-10, 1e-8, None,
                                     gates=get_lab("lab3").structure.gates) is None

"""One lab object owns what is derived from the course files, keyed by one content digest."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.errors import ExitCode, MutantError, SuiteError, exit_code_for
from rnngrade.grading.engine import grade, grade_isolated
from rnngrade.grading.lab_assets import lab_digest, load_lab_assets
from rnngrade.paths import course_root
from rnngrade.results.model import Status

from .course_env import course_at, edit

REFERENCE = Path("fixtures/submissions/lab1/reference")
PACKAGE = Path(__file__).resolve().parents[1] / "graders" / "rnngrade"


def test_an_edited_reference_is_seen_by_the_next_grade_in_the_same_process(course_copy):
    """Before the lab object: the shared grader kept the cached reference (24/24 stale)."""
    with course_at(course_copy):
        before = grade(course_copy / REFERENCE, "lab1", device="cpu", inprocess=True)
        assert before.score == before.max_score == 24
        solution = course_copy / "solutions/lab1/rnn.py"
        solution.write_text(solution.read_text() + "\n\ndef softmax(x):\n"
                            "    return np.ones_like(x) / x.shape[0]\n")
        after = grade(course_copy / REFERENCE, "lab1", device="cpu", inprocess=True)
        fresh = grade_isolated(course_copy / REFERENCE, "lab1", device="cpu", inprocess=True)
    assert after.score == fresh.score < 24
    assert after.grader_version == fresh.grader_version != before.grader_version


def test_the_digest_follows_content_not_timestamps(course_copy):
    with course_at(course_copy):
        digest = lab_digest("lab1")
        suite = course_copy / "graders/suites/lab1/test_rnn_hidden.py"
        os.utime(suite, (1, 1))
        assert lab_digest("lab1") == digest
        suite.write_text(suite.read_text() + "\n# a comment\n")
        assert lab_digest("lab1") != digest
        assert load_lab_assets("lab1").digest == lab_digest("lab1")


def test_a_mutant_that_does_not_apply_is_left_out_with_a_warning_naming_its_line(course_copy,
                                                                                 capsys):
    path = course_copy / "graders/suites/lab1/mutants.py"
    edit(path, '"np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba", "np.dot(Wax, xt) + ba"',
         '"np.dot(Waa, a_prev)+np.dot(Wax, xt) + ba", "np.dot(Wax, xt) + ba"')
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if "a_prev)+np.dot" in text)
    with course_at(course_copy):
        assets = load_lab_assets("lab1")
    names = [m.name for m in assets.mutant_table]
    assert "recurrent_term_dropped" not in names and "prediction_from_a_prev" in names
    (warning,) = assets.warnings
    assert f"mutants.py:{line}: mutant 'recurrent_term_dropped'" in warning
    assert "left out of diagnosis" in warning
    assert f"rnngrade: warning: {warning}" in capsys.readouterr().err


def test_a_mutant_table_that_does_not_load_leaves_diagnosis_without_mutants(course_copy):
    path = course_copy / "graders/suites/lab1/mutants.py"
    path.write_text(path.read_text() + "\nMUTANTS.append(\n")
    with course_at(course_copy):
        assets = load_lab_assets("lab1")
    assert assets.mutant_table == []
    (warning,) = assets.warnings
    assert "mutants.py:" in warning and "the mutant table of lab1 does not load" in warning
    assert "no mutant is used in diagnosis" in warning


TABLE = """from rnngrade.diagnosis.mutants import Mutant

MUTANTS = [
    Mutant(name="first", function="f", description="d", hint="h"),
    Mutant(name="second", function="f", description="d", hint="h"),
]
INDISTINGUISHABLE = {("first", "second"): "no check separates them"}
"""


def _table_error(tmp_path: Path, text: str) -> MutantError:
    path = tmp_path / "labx" / "mutants.py"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(MutantError) as caught:
        load_mutant_table(path)
    assert exit_code_for(caught.value) == ExitCode.GRADER  # the grader's fault, never 1
    return caught.value


def test_the_mutant_table_loads_its_mutants_and_what_no_check_separates(tmp_path):
    path = tmp_path / "labx" / "mutants.py"
    path.parent.mkdir()
    path.write_text(TABLE)
    table = load_mutant_table(path)
    assert [m.name for m in table.mutants] == ["first", "second"]
    assert table.indistinguishable == {frozenset({"first", "second"}): "no check separates them"}
    assert load_mutant_table(path, TABLE.replace('"second"', '"other"')).mutants[1].name == "other"


def test_a_broken_mutant_table_names_the_line_to_fix(tmp_path):
    error = _table_error(tmp_path, TABLE.replace('hint="h"),\n]', 'hint="h"),\n]\n1 / 0'))
    assert "mutants.py:7: the mutant table of labx does not load: ZeroDivisionError" in str(error)


def test_a_duplicated_mutant_name_is_named_with_its_line(tmp_path):
    error = _table_error(tmp_path, TABLE.replace('"second"', '"first"'))
    assert "mutants.py:4: duplicate mutant name(s) ['first']" in str(error)


def test_a_table_of_something_else_than_mutants_is_refused(tmp_path):
    error = _table_error(tmp_path, TABLE + "MUTANTS.append(('first', 'f'))\n")
    assert "MUTANTS holds tuple, not Mutant" in str(error)


def test_a_reference_that_does_not_load_names_its_line(course_copy):
    edit(course_copy / "solutions/lab1/rnn.py", "def softmax(x):\n", "def softmax(x):\n    )\n")
    with course_at(course_copy), pytest.raises(SuiteError, match=r"rnn\.py:\d+: the reference"):
        load_lab_assets("lab1")


def test_nothing_derived_from_course_files_is_cached_at_module_level():
    """No functools caches in the trusted grading packages (the lab object owns that state)."""
    pattern = re.compile(r"@(functools\.)?(lru_)?cache\b|\blru_cache\(")
    offenders = [str(path.relative_to(PACKAGE))
                 for folder in ("grading", "diagnosis", "harness")
                 for path in (PACKAGE / folder).rglob("*.py")
                 if pattern.search(path.read_text())]
    offenders += [str(p) for p in (course_root() / "graders" / "suites").rglob("conftest.py")
                  if pattern.search(p.read_text())]
    assert offenders == []


def test_the_lab_s_helpers_are_part_of_its_assets_and_of_its_digest(course_copy):
    path = course_copy / "graders/suites/lab6/helpers.py"
    with course_at(course_copy):
        first = load_lab_assets("lab6")
        assert "toy_constant" not in first.helpers.registry.functions
        path.write_text(path.read_text() + "\n\n@function\ndef toy_constant(c):\n"
                        "    return lambda: c\n")
        assert not first.is_current()
        second = load_lab_assets("lab6")
    assert second.digest != first.digest
    assert second.helpers.registry.functions["toy_constant"](3)() == 3
    assert "toy_constant" in second.helpers.source


def test_the_reference_facts_are_read_from_the_snapshot(course_copy):
    """What the source notes compare with is rebuilt with the digest."""
    with course_at(course_copy):
        lab1 = load_lab_assets("lab1")
        assert lab1.facts.signatures["rnn_cell_forward"] == (("xt", "a_prev", "parameters"), 3)
        assert {"Waa", "Wax", "Wya"} <= lab1.facts.parameter_keys
        edit(course_copy / "solutions/lab1/rnn.py", "def rnn_cell_forward(xt, a_prev, parameters):",
             "def rnn_cell_forward(xt, a_prev, parameters, scale=1.0):")
        edited = load_lab_assets("lab1")
    assert edited.digest != lab1.digest
    assert edited.facts.signatures["rnn_cell_forward"] == (
        ("xt", "a_prev", "parameters", "scale"), 3)


def test_an_edited_reference_signature_changes_the_next_grades_notes(course_copy, tmp_path):
    """Source notes compare with the reference as it is now, not as first read."""
    signature = "def rnn_cell_forward(xt, a_prev, parameters):"
    student = tmp_path / "rnn.py"
    student.write_text((course_copy / REFERENCE / "rnn.py").read_text().replace(
        signature, "def rnn_cell_forward(xt, a_prev):"))
    note = "`rnn_cell_forward` takes (xt, a_prev); the lab calls it as"
    with course_at(course_copy):
        before = grade(student, "lab1", device="cpu", inprocess=True)
        edit(course_copy / "solutions/lab1/rnn.py", signature,
             "def rnn_cell_forward(xt, a_prev, parameters=None):")
        after = grade(student, "lab1", device="cpu", inprocess=True)
    assert before.status == after.status == Status.GRADED
    assert any(note in n for n in before.notes)
    assert not any(note in n for n in after.notes)

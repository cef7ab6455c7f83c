"""The public tests name a formula slip as the grader does, from sealed edit tables that ship no
formula: the same sentence for the same slip, none for the reference or a known mistake."""

from __future__ import annotations

import ast
import copy
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rnngrade.authoring.edit_tables import _about
from rnngrade.authoring.generate import _load_cases, stale_files
from rnngrade.diagnosis.mutants import load_mutant_table, load_source_as_module, strip_markers
from rnngrade.grading.engine import grade
from rnngrade.harness.checks import edit_prints
from rnngrade.harness.checks.mistakes import explain, fingerprints_path, known_mistakes
from rnngrade.harness.checks.tolerance import FLOAT64, tolerance_for
from rnngrade.harness.checks.vectors import PublicVectors, dump_vectors
from rnngrade.labs import available_labs, get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import DiagnosisSource

from .data.slips.cell_backward import SLIPS, Slip

EDIT_LINE = "(your result equals the course's formula with this one change"
ROOT = course_root()
CELL_CASE = "cell_backward_small"  # the float64 case of each cell backward (float32: no table)


def slipped_source(slip: Slip, root: Path | None = None) -> str:
    lab = get_lab(slip.lab)
    source = strip_markers(lab.solution_path(root).read_text())
    assert source.count(slip.old) == 1, slip.name
    return source.replace(slip.old, slip.new)


def public_case_outputs(lab_name: str, case_name: str, module: Any) -> Any:
    """A public case's chain (``f_of_forward``) run on ``module``, as the public test runs it."""
    path = get_lab(lab_name).public_cases_path()
    spec = importlib.util.spec_from_file_location(f"_cases_{lab_name}", path)
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    function = cases.CASES[case_name][0]
    case = PublicVectors(get_lab(lab_name).public_fixture_path()).case(case_name)
    return function(module, *copy.deepcopy(case.args))


def public_lines(lab_name: str, case_name: str, got: Any) -> list[str]:
    path = get_lab(lab_name).public_fixture_path()
    case = PublicVectors(path).case(case_name)
    return explain(got, case.outputs, tolerance_for(*case.args), "f", None, path)


@pytest.mark.parametrize("slip", [s for s in SLIPS if not s.known], ids=lambda s: s.name)
def test_a_formula_slip_gets_the_graders_sentence(slip):
    module = load_source_as_module(slipped_source(slip), f"_slip_{slip.name}")
    lines = public_lines(slip.lab, CELL_CASE, public_case_outputs(slip.lab, CELL_CASE, module))
    assert lines == [f"{slip.named} {EDIT_LINE}, on this test's inputs)"], lines


def test_a_known_mistake_keeps_its_own_line():
    """A slip a mutant describes is named by the mutant (with its hint), as in the grader."""
    slip = next(s for s in SLIPS if s.known)
    mistake = next(m for m in load_mutant_table(get_lab(slip.lab).mutants_path())
                   .mutants if m.name == slip.named)
    module = load_source_as_module(slipped_source(slip), f"_slip_{slip.name}")
    lines = public_lines(slip.lab, CELL_CASE, public_case_outputs(slip.lab, CELL_CASE, module))
    assert len(lines) == 1 and lines[0].startswith(mistake.description), lines


def test_a_slip_and_a_near_miss():
    """The row opens only for the edit's own outputs: 1e-3 off on one entry of one changed
    output (far above the grid's q / 4, about 1e-7 here) names nothing."""
    slip = SLIPS[0]
    module = load_source_as_module(slipped_source(slip), f"_slip_{slip.name}")
    got = public_case_outputs(slip.lab, CELL_CASE, module)
    got["dWf"] = got["dWf"].copy()
    got["dWf"][0, 0] += 1e-3
    assert public_lines(slip.lab, CELL_CASE, got) == []
    got["dWf"][0, 0] -= 1e-3  # back within rounding: named again
    assert public_lines(slip.lab, CELL_CASE, got)


def edit_tables(lab_name: str) -> list[str]:
    path = fingerprints_path(get_lab(lab_name).public_fixture_path())
    return [n for n in PublicVectors(path).names() if n.endswith(f"::{edit_prints.EDITS}")]


# lab3's fingerprints take about two minutes to replay (a second per call): with the slow tests.
@pytest.mark.parametrize("lab", [
    pytest.param(lab, marks=pytest.mark.slow) if lab.name == "lab3" else lab
    for lab in available_labs() if edit_tables(lab.name)], ids=lambda lab: lab.name)
def test_no_known_mistake_and_not_the_reference_gets_an_edit_sentence(lab):
    """Every mutant's outputs on every public case with a table: the public tests show its own
    line, never an edit's; the reference's outputs: nothing."""
    path = lab.public_fixture_path()
    vectors, prints = PublicVectors(path), PublicVectors(fingerprints_path(path))
    tables = {n.split("::")[0] for n in edit_tables(lab.name)}
    checked = 0
    for entry in prints.names():
        case_name, mistake = entry.split("::")
        if case_name not in tables or mistake == edit_prints.EDITS:
            continue
        case = vectors.case(case_name)
        tol = tolerance_for(*case.args)
        lines = explain(prints.case(entry).outputs["value"], case.outputs, tol, "f", None, path)
        assert not any(EDIT_LINE in line for line in lines), (entry, lines)
    for case_name in tables:  # a case with a table but no mutant's outputs counts too
        case = vectors.case(case_name)
        tol = tolerance_for(*case.args)
        assert known_mistakes(case.outputs, case.outputs, tol, "f", None, path) == []
        checked += 1
    assert checked


def test_the_tables_hold_no_sentence_and_no_formula():
    """The sentences are sealed: neither a sentence nor the reference's formula it quotes is in
    the shipped file, in any entry, compressed or not."""
    path = fingerprints_path(get_lab("lab3").public_fixture_path())
    with zipfile.ZipFile(path) as archive:
        raw = b"".join(archive.read(name) for name in archive.namelist())
    for slip in SLIPS:
        if slip.lab == "lab3" and not slip.known:  # a known mistake's line ships as it is
            for secret in (slip.named, slip.old, slip.old.split(" = ", 1)[-1]):
                assert secret.encode() not in raw, secret
    for formula in ("ft * (1 - ft)", "1 - cct ** 2", "1 - cct"):
        assert formula.encode() not in raw


def test_a_sealed_row_opens_only_with_its_values():
    values = [np.array([[0.25, -1.5], [3.0, 1e-3]])]
    want = [np.zeros((2, 2))]
    table = edit_prints.pack("case", [([0], values, "a sentence")], want, 1e-10, 1e-8)
    assert table is not None
    row = edit_prints.rows(table, want)[0]
    assert edit_prints.opened("case", row, {0: values[0] + 1e-12}, want) == "a sentence"
    assert edit_prints.opened("other case", row, {0: values[0]}, want) is None
    assert edit_prints.opened("case", row, {0: values[0] * (1 + 1e-6)}, want) is None
    assert edit_prints.opened("case", row, {0: values[0].T}, want) is None
    assert b"sentence" not in table["sealed"].tobytes()


def test_a_row_of_another_size_opens_only_with_that_shape():
    """A sum over the wrong axis with keepdims: ``(1, 4)`` where ``(5, 1)`` is expected. The
    row keeps the leaf in its own size (``sizes``, stored only when a row needs it), and only
    that shape opens it; a table of rows of the expected sizes stores no ``sizes``."""
    wrong = np.array([[0.25, -1.5, 3.0, 1e-3]])
    want = [np.arange(1.0, 6.0).reshape(5, 1), np.ones((2, 2))]
    table = edit_prints.pack("case", [([0], [wrong], "a sum over axis 0"),
                                      ([1], [np.full((2, 2), 2.0)], "twice")], want, 1e-10, 1e-8)
    assert table is not None and list(table["sizes"]) == [4, 4]
    first, second = edit_prints.rows(table, want)
    assert edit_prints.opened("case", first, {0: wrong + 1e-12}, want) == "a sum over axis 0"
    assert edit_prints.opened("case", first, {0: wrong.T}, want) is None
    assert edit_prints.opened("case", first, {0: np.zeros((5, 1))}, want) is None
    assert edit_prints.opened("case", second, {1: np.full((2, 2), 2.0)}, want) == "twice"
    same = edit_prints.pack("case", [([1], [np.full((2, 2), 2.0)], "twice")], want, 1e-10, 1e-8)
    assert same is not None and "sizes" not in same


def public_tests_on_slip(course_copy, name: str, selected: str) -> tuple:
    """The slip ``name`` written into its lab's stub in ``course_copy``, and what
    ``pytest assignments/labN -k selected`` prints there."""
    slip = next(s for s in SLIPS if s.name == name)
    lab = get_lab(slip.lab)
    lab.stub_path(course_copy).write_text(slipped_source(slip, course_copy))
    output = subprocess.run(
        [sys.executable, "-m", "pytest", f"assignments/{lab.name}", "-q", "-p", "no:randomly",
         "-k", selected],
        cwd=course_copy, capture_output=True, text=True, timeout=300).stdout
    return slip, output


def test_pytest_on_lab3_names_the_slip_in_lstm_cell_backward(course_copy):
    slip, output = public_tests_on_slip(course_copy, "dcct_sigmoid_derivative",
                                        "lstm_cell_backward_values")
    assert f"this looks like: {slip.named} {EDIT_LINE}" in output, output[-3000:]


def test_pytest_on_lab2_names_the_slip_in_rnn_cell_backward(course_copy):
    slip, output = public_tests_on_slip(course_copy, "dz_one_minus_a_next", "rnn_cell_backward")
    assert f"this looks like: {slip.named} {EDIT_LINE}" in output, output[-3000:]
    assert not re.search(r"this looks like: `d\w+` (?!uses `1 - a_next`)", output)


# the grader takes 2 to 20 s per slip: with the slow tests.
@pytest.mark.slow
@pytest.mark.parametrize("slip", SLIPS, ids=lambda s: s.name)
def test_the_grader_gives_the_same_sentence(slip, tmp_path):
    lab = get_lab(slip.lab)
    (tmp_path / lab.filename).write_text(slipped_source(slip))
    result = grade(tmp_path, slip.lab, inprocess=True, device="cpu")
    found = {(d.source, d.text if d.source == DiagnosisSource.EDIT.value else d.name)
             for test in result.tests for d in test.diagnosis}
    source = DiagnosisSource.KNOWN_MISTAKE if slip.known else DiagnosisSource.EDIT
    assert (source.value, slip.named) in found, found


def test_a_changed_edit_table_is_stale(course_copy):
    """A table whose rows no longer match what the reference gives (here: a tenth of its
    digests changed) is stale; the same table as generated is not."""
    lab = get_lab("lab2")
    path = fingerprints_path(lab.public_fixture_path(course_copy))
    prints = PublicVectors(path)
    stored = {n: prints.case(n).__dict__ for n in prints.names()}
    assert not stale_files(lab, course_copy)
    table = stored[f"{CELL_CASE}::{edit_prints.EDITS}"]["outputs"]
    table["digests"][::10] ^= 1
    path.write_bytes(dump_vectors({n: {k: v for k, v in case.items() if k != "name"}
                                   for n, case in stored.items()}))
    assert any(path.name in p for p in stale_files(lab, course_copy))


@pytest.mark.slow  # the whole corpus through the public tests (~10 s): each slip has its own test
def test_the_graders_edit_corpus_is_named_alike_in_the_public_tests(capsys):
    """tests/test_edits.py's one-bug variants of the cell backward passes (the grader names each
    by its edit): the public check of the cell names each with the same sentence, none
    otherwise."""
    from .test_edits import CORPUS

    named, misleading = 0, []
    for lab_name, old, new, sentence in CORPUS:
        source = strip_markers(get_lab(lab_name).solution_path().read_text())
        module = load_source_as_module(source.replace(old, new), "_corpus_variant")
        lines = public_lines(lab_name, CELL_CASE,
                             public_case_outputs(lab_name, CELL_CASE, module))
        named += lines == [f"{sentence} {EDIT_LINE}, on this test's inputs)"]
        misleading += [(new, line) for line in lines if not line.startswith(sentence)]
    with capsys.disabled():
        print(f"\npublic tests: {named} of {len(CORPUS)} edit variants named exactly, "
              f"{len(misleading)} misleading")
    assert not misleading, misleading
    assert named >= 0.8 * len(CORPUS)


def _cases_in_order(function: ast.FunctionDef, cases: set[str]) -> list[str]:
    """The public case names a test function's source mentions, in the order written."""
    found = [n for n in ast.walk(function) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and n.value in cases]
    return [n.value for n in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


def test_a_float32_case_comes_after_a_float64_case_that_names_the_slip():
    """Float32 cases carry no edit table (``authoring/edit_tables.py`` says why). Wherever a
    public test checks a float32 case of a function that float64 tables cover, it checks a
    float64 case of that function with a table first, so a slip fails, and is named, there; a
    test of float32 alone (lab6's rows in float32) has a float64 test with a table beside it."""
    covered, alone = 0, []
    for lab in available_labs():
        path = lab.public_fixture_path()
        if not path.exists() or not fingerprints_path(path).exists():
            continue
        vectors = PublicVectors(path)
        tables = {n.split("::")[0] for n in edit_tables(lab.name)}
        about = {n: _about(spec, lab.functions) for n, spec in _load_cases(lab, ROOT).items()}
        with_table = {about[t] for t in tables}
        for test_file in sorted(lab.assignment_dir().glob("test_*.py")):
            tests = [f for f in ast.parse(test_file.read_text()).body
                     if isinstance(f, ast.FunctionDef)]
            checked = [_cases_in_order(f, set(about)) for f in tests]
            for names in checked:
                for i, name in enumerate(names):
                    function = about[name]
                    if function not in with_table or \
                            tolerance_for(*vectors.case(name).args) == FLOAT64:
                        continue
                    if any(n in tables and about[n] == function for n in names[:i]):
                        covered += 1
                    elif any(n in tables and about[n] == function for other in checked
                             for n in other):
                        alone.append(f"{lab.name}:{name}")
                    else:
                        raise AssertionError(f"{lab.name}: {name} of {function} is checked "
                                             "with no float64 case of it that has a table")
    assert covered >= 13 and alone == ["lab6:softmax_batch_float32"], (covered, alone)


def test_a_sum_overwritten_in_a_loop_gets_no_edit_sentence():
    """``dWaa = grads["dWaa"]`` in rnn_backward's loop: the returned dWaa is the last step's
    gradient, which equals no edit of a formula (a loop's last-step value is never put in the
    place of a value of the function); the public test says which output is wrong, and names
    no edit."""
    source = strip_markers(get_lab("lab2").solution_path().read_text())
    old = 'dWaa += grads["dWaa"]'
    assert source.count(old) == 1
    module = load_source_as_module(source.replace(old, 'dWaa = grads["dWaa"]'),
                                   "_dWaa_overwritten")
    got = public_case_outputs("lab2", "backward_small", module)
    lines = public_lines("lab2", "backward_small", got)
    assert not any(EDIT_LINE in line for line in lines), lines

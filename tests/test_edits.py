"""A wrong value inside a cell's backward pass that one small edit of the reference's formula
explains is named by that edit (the right variable, the right change), through the real grader;
a right function, a mistake a mutant names and a value two edits explain name no edit."""

from __future__ import annotations

import ast
import functools
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from rnngrade.diagnosis.edits import MAX_CANDIDATES, Quantities, explaining_edit
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.grading.scoring import rank_diagnoses
from rnngrade.labs import get_lab
from rnngrade.results.model import CaseResult, Diagnosis, DiagnosisSource, GradeResult, Outcome
from rnngrade.results.render import render_feedback_md

EDIT = DiagnosisSource.EDIT.value
FILES = {"lab2": "bptt.py", "lab3": "lstm.py"}
FUNCTIONS = {"lab2": "rnn_cell_backward", "lab3": "lstm_cell_backward"}

# (lab, reference line, the one-bug line, the sentence that must name it); no mutant of either
# lab describes any of these mistakes
CORPUS = [
    ("lab3", "dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_prev",
     "`dft` is missing the factor `ft * (1 - ft)` (the derivative of the sigmoid)"),
    ("lab3", "dit = dc * cct * it * (1 - it)", "dit = dc * cct",
     "`dit` is missing the factor `it * (1 - it)` (the derivative of the sigmoid)"),
    ("lab3", "dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c * (1 - ot)",
     "`dot` is missing the factor `ot`"),
    ("lab3", "dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it",
     "`dcct` is missing the factor `(1 - cct ** 2)` (the derivative of tanh)"),
    ("lab3", "dc = dc_next + da_next * ot * (1 - tanh_c ** 2)",
     "dc = dc_next + da_next * ot * (1 - np.tanh(a_next) ** 2)",
     "`dc` uses `np.tanh(a_next)` where the formula has `np.tanh(c_next)`"),
    ("lab3", "dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * c_next * ot * (1 - ot)",
     "`dot` uses `c_next` where the formula has `tanh_c`"),
    ("lab3", '"dc_prev": dc * ft,', '"dc_prev": dc * dft,',
     "`dc_prev` uses `dft` where the formula has `ft`"),
    ("lab3", "dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * (1 - cct)",
     "`dcct` uses `1 - cct` where the formula has `1 - cct ** 2` (the derivative of tanh)"),
    ("lab3", "dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * cct * (1 - cct)",
     "`dcct` uses `cct * (1 - cct)` (the derivative of the sigmoid) where the formula has "
     "`1 - cct ** 2` (the derivative of tanh)"),
    ("lab3", "tanh_c = np.tanh(c_next)", "tanh_c = np.tanh(np.tanh(c_next))",
     "`tanh_c` uses `np.tanh(np.tanh(c_next))` where the formula has `np.tanh(c_next)`"),
    ("lab3", '"dWf": dft @ concat.T,', '"dWf": concat @ dft.T,',
     "`dWf` is transposed: its rows and columns are swapped"),
    ("lab3", '"dWc": dcct @ concat.T,', '"dWc": dit @ concat.T,',
     "`dWc` uses `dit` where the formula has `dcct`"),
    ("lab3", '"dbf": np.sum(dft, axis=1, keepdims=True),', '"dbf": np.sum(dft, axis=1),',
     "`dbf` uses `np.sum(dft, axis=1)` where the formula has "
     "`np.sum(dft, axis=1, keepdims=True)`"),
    ("lab2", "dz = (1 - a_next ** 2) * da_next", "dz = da_next",
     "`dz` is missing the factor `(1 - a_next ** 2)` (the derivative of tanh)"),
    ("lab2", "dz = (1 - a_next ** 2) * da_next", "dz = a_next * (1 - a_next) * da_next",
     "`dz` uses `a_next * (1 - a_next)` (the derivative of the sigmoid) where the formula has "
     "`1 - a_next ** 2` (the derivative of tanh)"),
    ("lab2", "dxt = Wax.T @ dz", "dxt = Wax.T @ da_next",
     "`dxt` uses `da_next` where the formula has `dz`"),
]
NUMBER = re.compile(r"\d\.\d|\de[-+]?\d")  # a captured value printed: never allowed
NAMED_SHARE = 0.8  # the bar: at least 8 of every 10 one-bug variants named exactly


_ROOT = ""  # where the graded variants are written: the session's temporary folder


@pytest.fixture(autouse=True, scope="module")
def _variants_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    global _ROOT
    _ROOT = str(tmp_path_factory.mktemp("edits"))


@functools.cache
def graded(lab: str, edits: tuple[tuple[str, str], ...]) -> GradeResult:
    """``lab``'s reference with ``edits`` applied, graded in-process on the CPU (once)."""
    source = strip_markers(get_lab(lab).solution_path().read_text())
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    folder = Path(tempfile.mkdtemp(prefix="edits-", dir=_ROOT)) / "sub"
    folder.mkdir()
    (folder / FILES[lab]).write_text(source)
    return grade(folder, lab, inprocess=True, device="cpu")


def edit_texts(result: GradeResult) -> set[str]:
    return {d.text for t in result.tests for d in t.diagnosis if d.source == EDIT}


def named_exactly(lab: str, old: str, new: str, sentence: str) -> bool:
    """Whether the variant is named by ``sentence`` and by no other edit, in the function it
    lies in, with the localisation still said beside it."""
    result = graded(lab, ((old, new),))
    found = [d for t in result.tests for d in t.diagnosis if d.source == EDIT]
    localised = [d for t in result.tests for d in t.diagnosis
                 if d.source == DiagnosisSource.LOCALISED.value]
    return (bool(found) and {d.text for d in found} == {sentence}
            and all(d.function == FUNCTIONS[lab] for d in found) and bool(localised)
            and not any(NUMBER.search(f"{d.text} {d.evidence}") for d in found))


# lab3's variants that the default suite grades: one of each kind of edit (a factor left out,
# an operand substituted, one derivative for another, a transpose, keepdims); the others of the
# same kinds run with the slow tests (each lab3 grade costs a few seconds)
DEFAULT_LAB3 = {0, 4, 8, 10, 12}


@pytest.mark.parametrize("lab, old, new, sentence", [
    pytest.param(*variant, id=f"{variant[0]}:{variant[2][:40]}",
                 marks=[pytest.mark.slow] if variant[0] == "lab3" and index not in DEFAULT_LAB3
                 else [])
    for index, variant in enumerate(CORPUS)])
def test_each_variant_is_named_by_its_edit(lab, old, new, sentence):
    result = graded(lab, ((old, new),))
    assert edit_texts(result) == {sentence}
    assert named_exactly(lab, old, new, sentence)


@pytest.mark.slow  # the count over every variant (each one is asserted named by its own test)
def test_the_corpus_is_named(capsys):
    named = [named_exactly(*variant) for variant in CORPUS]
    with capsys.disabled():
        print(f"\nedit diagnoses: {sum(named)} of {len(CORPUS)} one-bug variants named exactly")
    assert len(CORPUS) >= 10 and sum(named) >= NAMED_SHARE * len(CORPUS)


def test_the_feedback_calls_it_a_likely_mistake():
    lab, old, new, sentence = CORPUS[0]  # graded once, with its own test
    text = render_feedback_md(graded(lab, ((old, new),)))
    assert f"likely mistake:** {sentence}" in text
    # the localisation beside it is where it goes wrong, not another possible mistake
    assert "**Where it goes wrong:** the first of your values" in text
    assert "**Or:** the first" not in text


@pytest.mark.parametrize("lab", ["lab2", "lab3"])
def test_a_right_function_gets_no_edit(lab):
    result = graded(lab, ())
    assert result.score == result.max_score
    assert not edit_texts(result)


@pytest.mark.parametrize("edit, mutant", [
    (('"dc_prev": dc * ft,', '"dc_prev": dc,'), "dc_prev_without_forget_gate"),
    (("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c"),
     "output_gate_derivative_missing"),
    (("tanh_c = np.tanh(c_next)", "tanh_c = np.tanh(a_next)"), "tanh_of_a_next_for_c_next"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_mutants_mistake_keeps_its_name_alone(edit, mutant):
    result = graded("lab3", (edit,))
    names = {d.name for t in result.tests for d in t.diagnosis}
    assert mutant in names
    assert not edit_texts(result)


def test_two_mistakes_in_one_value_name_no_edit():
    edit = ("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * ft * (1 - cct)")
    result = graded("lab3", (edit,))
    assert any(d.source == DiagnosisSource.LOCALISED.value and "`dcct`" in d.text
               for t in result.tests for d in t.diagnosis)
    assert not edit_texts(result)


def test_two_edits_that_both_explain_name_neither():
    """Dropping ``y`` and dropping ``z`` give the same value when y == z: ambiguous."""
    rng = np.random.default_rng(0)
    x, y, w = (rng.standard_normal((3, 4)) for _ in range(3))
    values = {"x": x, "y": y, "z": y.copy(), "w": w}
    pool = Quantities(["x", "y", "w"], values, {})
    formula = ast.parse("x * y * z", mode="eval").body
    correct = x * y * y
    assert explaining_edit(formula, pool, correct, x * y, 1e-8, 1e-6) is None
    # without the coincidence the same student value is named: dropping z
    values["z"] = w
    found = explaining_edit(formula, Quantities(["x", "y", "w"], values, {}), x * y * w, x * y,
                            1e-8, 1e-6)
    assert found is not None and ast.unparse(found.edit.formula) == "x * y"
    assert found.tried <= MAX_CANDIDATES


def test_a_case_localised_to_the_same_value_without_the_edit_refutes_it():
    """Every failing case captured must agree: one that finds the same wrong value but not the
    edit leaves the edit out of the test's diagnoses; the localisation stays."""
    edit = Diagnosis("edit:f:dz:da_next", "`dz` is missing ...", "f", source=EDIT)
    where = Diagnosis("localised:f:dz", "the first ...", "f",
                      source=DiagnosisSource.LOCALISED.value)
    agreeing = [CaseResult(str(i), Outcome.FAILED, diagnosis=[edit, where]) for i in range(2)]
    named, _ = rank_diagnoses(agreeing)
    assert [d.source for d in named] == [EDIT, DiagnosisSource.LOCALISED.value]
    refuting = [*agreeing, CaseResult("2", Outcome.FAILED, diagnosis=[where])]
    named, _ = rank_diagnoses(refuting)
    assert [d.name for d in named] == ["localised:f:dz"]


@pytest.mark.parametrize("formula, student", [
    ("np.maximum(x, y)", "np.minimum(x, y)"),
    ("np.sqrt(x * x + y * y)", "x * x + y * y"),
    ("z[k:]", "z[:-k]"),
], ids=["minimum", "sqrt-left-out", "other-end"])
def test_the_new_edits_name_a_value_they_alone_give(formula, student):
    """np.minimum for np.maximum, a np.sqrt left out, rows taken from the other end: each
    found by one edit of the formula, evaluated on the captured values."""
    rng = np.random.default_rng(1)
    values = {"x": rng.standard_normal((3, 4)), "y": rng.standard_normal((3, 4)),
              "z": rng.standard_normal((7, 4)), "k": np.array([4.0])}
    assert_one_edit_explains(formula, student, values, ["x", "y", "z"])


def assert_one_edit_explains(formula: str, student: str, values: dict[str, np.ndarray],
                             operands: list[str]) -> None:
    """The student's formula, evaluated on ``values``, is found as the one edit of the course's
    (``operands``: the quantities an edit may substitute), and nothing explains a value off
    from it by 1e-3."""
    from rnngrade.diagnosis.edits import evaluate

    pool = Quantities(operands, values, {})
    tree = ast.parse(formula, mode="eval").body
    correct = evaluate(tree, values)
    mine = evaluate(ast.parse(student, mode="eval").body, values)
    found = explaining_edit(tree, pool, correct, mine, 1e-10, 1e-8)
    assert found is not None and ast.unparse(found.edit.formula) == student
    assert explaining_edit(tree, pool, correct, mine + 1e-3, 1e-10, 1e-8) is None


def test_a_sum_of_another_returned_value_is_an_edit_of_its_operand():
    """np.sum(dW, axis=1, keepdims=True) where the formula sums dz: the weight gradient the
    function returns, summed in place of the value it is computed from."""
    rng = np.random.default_rng(2)
    dz, x = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    values = {"dz": dz, "x": x, "dW": dz @ x.T}
    pool = Quantities(["dz", "x"], values, {}, ["dW"])
    tree = ast.parse("np.sum(dz, axis=1, keepdims=True)", mode="eval").body
    found = explaining_edit(tree, pool, dz.sum(axis=1, keepdims=True),
                            (dz @ x.T).sum(axis=1, keepdims=True), 1e-10, 1e-8)
    assert found is not None and ast.unparse(found.edit.formula) == \
        "np.sum(dW, axis=1, keepdims=True)"

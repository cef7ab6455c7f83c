"""The general rules the held-out corpus (tests/data/heldout) asked for, each on its own small
inputs: formula edits (a transpose inside ``np.dot``, a ReLU for an activation, a difference
the other way round, a NumPy function left out of every operand, an operand swapped inside the
course's ``softmax``), shapes (axes merged, steps missing), steps stored in reverse order, a
carried value added up or a term carried twice, and no case pattern beside an edit."""

from __future__ import annotations

import ast
import types

import numpy as np
import pytest

from rnngrade.diagnosis.carried import SUMMED, TWICE, carried_slips_of, explain_carried
from rnngrade.diagnosis.edits import evaluate
from rnngrade.diagnosis.mutants import load_source_as_module
from rnngrade.diagnosis.structural import REVERSED, localise_check
from rnngrade.grading.scoring import rank_diagnoses
from rnngrade.harness.checks.contract import (
    MERGED,
    STEPS_MISSING,
    explain_contract,
    merged_axes,
    steps_missing,
)
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.results.model import CaseResult, Diagnosis, DiagnosisSource, Outcome

from .test_edits import assert_one_edit_explains

TOL = Tolerance(1e-10, 1e-8, "float64 arithmetic on the same values: rounding only")


@pytest.mark.parametrize("formula, student", [
    ("np.dot(W, a) + np.dot(U, x)", "np.dot(W.T, a) + np.dot(U, x)"),
    ("np.tanh(z)", "np.maximum(z, 0)"),
    ("(1 - a ** 2) * g", "(a ** 2 - 1) * g"),
    ("np.maximum(np.abs(a), np.abs(g))", "np.maximum(a, g)"),
    ("softmax(W @ a + b)", "softmax(W @ z + b)"),
], ids=["dot-transpose", "relu", "difference-turned", "abs-everywhere", "softmax-operand"])
def test_an_edit_names_a_value_it_alone_gives(formula: str, student: str):
    rng = np.random.default_rng(3)
    values = {"W": rng.standard_normal((4, 4)), "U": rng.standard_normal((4, 3)),
              "a": rng.standard_normal((4, 5)), "x": rng.standard_normal((3, 5)),
              "z": rng.standard_normal((4, 5)), "g": rng.standard_normal((4, 5)),
              "b": rng.standard_normal((4, 1))}
    assert_one_edit_explains(formula, student, values, list(values))


def test_the_courses_softmax_is_evaluated_over_columns():
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    got = evaluate(ast.parse("softmax(x)", mode="eval").body, {"x": x})
    assert np.allclose(got.sum(axis=0), 1.0) and not np.allclose(got.sum(axis=1), 1.0)


def test_steps_concatenated_where_they_are_stacked_are_merged_axes():
    want = np.random.default_rng(4).standard_normal((4, 6, 5))
    found = merged_axes(want.reshape(4, 30), want, TOL, "out")
    assert found is not None and found.name == MERGED and "axes 1 and 2" in found.text
    assert merged_axes(want.reshape(4, 30) + 1e-3, want, TOL, "out") is None
    assert merged_axes(want.transpose(0, 2, 1).reshape(4, 30), want, TOL, "out") is None


@pytest.mark.parametrize("where, kept", [("last", slice(0, 5)), ("first", slice(1, 6))])
def test_a_result_without_its_last_or_first_step_names_the_missing_step(where, kept):
    want = np.random.default_rng(5).standard_normal((4, 6, 5))
    found = steps_missing(want[:, kept], want, TOL, "out")
    assert found is not None and found.name == STEPS_MISSING and f"{where} entry" in found.text
    assert steps_missing(want[:, kept] * 1.01, want, TOL, "out") is None
    assert steps_missing(want[:, :4], want[:, :5] * 0 + 1, TOL, "out") is None  # constant


def test_the_contract_names_merged_axes_and_missing_steps():
    """explain_contract asks the new rules for a shape failure (its own rules say nothing)."""
    from rnngrade.harness.checks.compare import compare

    want = np.random.default_rng(6).standard_normal((3, 5, 6))
    for got, name in ((want.reshape(3, 30), MERGED), (want[:, :4], STEPS_MISSING)):
        failed = [compare(got, want, TOL, "out")]
        found = explain_contract(got, want, failed, TOL, "out", None, "f")
        assert [d.name for d in found] == [name]


def test_steps_stored_in_reverse_order_are_named_not_a_carrying_mistake():
    want = np.random.default_rng(7).standard_normal((3, 4, 6))
    got = np.flip(want, axis=2).copy()
    found = localise_check({"dx": got}, {"dx": want}, ["dx"], 1e-10, 1e-8, 2)
    assert found is not None and found.name == REVERSED
    # a sequence the same forwards and backwards proves nothing
    symmetric = (want + np.flip(want, axis=2)) / 2
    found = localise_check({"dx": symmetric}, {"dx": symmetric * 2}, ["dx"], 1e-10, 1e-8, 2)
    assert found is None or found.name != REVERSED


BACKWARD = '''
import numpy as np

def step(upstream, w):
    return {"out": w * upstream, "back": 0.5 * w * upstream}

def backward(da, w):
    T = da.shape[1]
    outs = np.zeros_like(da)
    back = np.zeros(da.shape[0])
    for t in reversed(range(T)):
        grads = step(da[:, t] + back, w)
        outs[:, t] = grads["out"]
        back = grads["back"]
    return outs, back
'''


@pytest.fixture(scope="module")
def backward_module() -> types.ModuleType:
    return load_source_as_module(BACKWARD, "heldout_backward")


@pytest.mark.parametrize("slip, name", [
    ('back = grads["back"] + back', SUMMED),
    ('back = grads["back"] + da[:, t]', TWICE),
])
def test_a_carried_value_added_up_or_a_term_carried_twice_is_named(backward_module, slip,
                                                                   name):
    slips = carried_slips_of(backward_module, "backward")
    assert {s.added for s in slips} == {"back", "da[:, t]"}
    rng = np.random.default_rng(8)
    da, w = rng.standard_normal((4, 5)), rng.standard_normal(4)
    want = backward_module.backward(da, w)
    student = load_source_as_module(BACKWARD.replace('back = grads["back"]', slip), "student")
    got = student.backward(da, w)

    def run(s):
        return s.module.backward(da, w)

    found = explain_carried(slips, run, got, want, ["backward[0]", "backward[1]"], TOL, "backward",
                            None)
    assert [d.name for d in found] == [name]
    # one step: the slip and the correct code coincide, so nothing is named
    short = da[:, :1]
    found = explain_carried(slips, lambda s: s.module.backward(short, w),
                            student.backward(short, w), backward_module.backward(short, w),
                            ["backward[1]"], TOL, "backward", None)
    assert found == [] or name == TWICE  # the term twice changes even one step's back


def test_an_edit_makes_the_pattern_of_cases_no_headline():
    """Right only where the previous state is zero: the recurrent term is where the mistake
    is; an edit that names it leaves that location out of the headlines."""
    from rnngrade.lab_contract import Structure

    structure = Structure(previous_state_zeroed=("Waa",))
    edit = Diagnosis("edit:f:z:W.T", "`z` uses `W.T` where the formula has `W`", "f",
                     source=DiagnosisSource.EDIT.value)
    failing = [CaseResult("random", Outcome.FAILED, kind="check", diagnosis=[edit])]
    cases = [*failing, CaseResult("Waa", Outcome.PASSED)]
    named, _ = rank_diagnoses(failing, cases, structure=structure)
    assert [d.name for d in named] == [edit.name]
    named, _ = rank_diagnoses([CaseResult("random", Outcome.FAILED, kind="check")], cases,
                              structure=structure)
    assert [d.name for d in named] == ["recurrent_term"]


CALLER = '''
def cell(x):
    return x + 1

def sequence(xs):
    return [cell(x) for x in xs]

def other(x):
    return x
'''


def test_a_public_test_of_a_caller_of_a_failed_function_names_no_mistake(tmp_path):
    """The public plugin's rule: once ``cell`` failed its own test, a failing test of
    ``sequence`` (which calls it) blames ``cell``; a test of ``other`` blames nothing."""
    from types import SimpleNamespace

    from rnngrade.harness.checks.callees import callees, failed_callees, note, subject

    path = tmp_path / "student.py"
    path.write_text(CALLER)
    module = load_source_as_module(CALLER, "student", str(path))
    module.__name__ = "student"
    for f in ("cell", "sequence", "other"):
        getattr(module, f).__module__ = "student"
    assert callees(module, "sequence") == {"cell"} and callees(module, "other") == set()
    assert subject("test_sequence_values", {"cell", "sequence"}) == "sequence"
    session = SimpleNamespace(stash=pytest.Stash())

    def failed(name: str) -> tuple[str, list[str]]:
        return failed_callees(SimpleNamespace(name=name, session=session), module)  # type: ignore[arg-type]

    assert failed("test_sequence_values") == ("sequence", [])  # cell has not failed yet
    assert failed("test_cell_values") == ("cell", [])
    assert failed("test_sequence_values[T4]") == ("sequence", ["cell"])
    assert failed("test_other_values") == ("other", [])
    assert "fix `cell` first" in note("sequence", ["cell"])

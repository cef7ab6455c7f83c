"""The public tests name known mistakes from shipped fingerprints, and locate others in time."""

import re
import subprocess
import sys

import numpy as np
import pytest

from rnngrade.authoring.generate import stale_files
from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.harness.checks.edit_prints import EDITS
from rnngrade.harness.checks.mistakes import explain, fingerprints_path, known_mistakes, time_steps
from rnngrade.harness.checks.tolerance import Tolerance, tolerance_for
from rnngrade.harness.checks.vectors import PublicVectors
from rnngrade.labs import get_lab

TOL = Tolerance(1e-10, 1e-8, "float64")


# lab3's fingerprints take about 15 s to replay: with the slow tests.
@pytest.mark.parametrize("lab_name", ["lab1", "lab2",
                                      pytest.param("lab3", marks=pytest.mark.slow)])
def test_every_fingerprint_names_its_own_mistake_and_the_reference_none(lab_name):
    lab = get_lab(lab_name)
    vectors_path = lab.public_fixture_path()
    vectors, prints = PublicVectors(vectors_path), PublicVectors(fingerprints_path(vectors_path))
    table = load_mutant_table(lab.mutants_path())
    texts = {m.name: m.description for m in table.mutants}
    assert prints.names()
    for entry in prints.names():
        case_name, mistake = entry.split("::")
        if mistake == EDITS:
            continue  # a case's table of formula slips (tests/test_public_edits.py)
        case = vectors.case(case_name)
        got, tol = prints.case(entry).outputs["value"], tolerance_for(*case.args)
        lines = known_mistakes(got, case.outputs, tol, "f", None, vectors_path)
        assert any(line.startswith(texts[mistake]) for line in lines), (entry, lines)
        assert known_mistakes(case.outputs, case.outputs, tol, "f", None, vectors_path) == []


@pytest.mark.parametrize(("mistake", "word"), [("loop_feeds_a0", "a0"),
                                               ("loop_starts_at_one", "t = 1")])
def test_a_mistake_is_named_where_leaves_repeat_or_go_missing(mistake, word):
    """In lab 3's caches one step's ``a_next`` is the next step's ``a_prev``: each leaf is
    matched with its own place, not the first equal one, so feeding ``a0`` to every step (whose
    ``a_prev`` differs from the previous ``a_next``) is still named; and a loop that skips step 0
    returns one cache fewer, named because the whole result is that mistake's."""
    lab = get_lab("lab3")
    path = lab.public_fixture_path()
    case = PublicVectors(path).case("backward_float32_forward")
    got = PublicVectors(fingerprints_path(path)).case(
        f"backward_float32_forward::{mistake}").outputs["value"]
    lines = known_mistakes(got, case.outputs, tolerance_for(*case.args), "f", None, path)
    assert lines and word in lines[0], lines


def test_a_mistake_is_named_on_one_output_of_a_case_too():
    """A public test may check one output of a case (``case.outputs[0]``)."""
    path = get_lab("lab1").public_fixture_path()
    prints = PublicVectors(fingerprints_path(path))
    want = PublicVectors(path).case("forward_small").outputs
    got = prints.case("forward_small::loop_feeds_a0").outputs["value"]
    lines = known_mistakes(got[0], want[0], TOL, "a", None, path)
    assert lines and "a0" in lines[0]


def test_time_localisation_states_its_evidence():
    rng = np.random.default_rng(0)
    want = rng.standard_normal((3, 4, 5))
    got = want.copy()
    got[:, :, 1:] += 1.0
    line = time_steps(got, want, TOL, "a", None, 2)[0]
    assert "not carried" in line and "right for the first step, wrong from the second" in line
    backward = want.copy()
    backward[:, :, :4] -= 1.0
    assert "right for the last step" in time_steps(backward, want, TOL, "dx", None, 2)[0]
    assert time_steps(backward, want, TOL, "a", None, 2) == []  # a forward output: no claim
    mixed = want.copy()
    mixed[:, :, [1, 3]] += 1.0
    assert time_steps(mixed, want, TOL, "a", None, 2) == []
    assert explain(got, want, TOL, "a", None, None)  # no fingerprints: time still speaks
    # A dict of gradients: leaves are matched by key, whatever order the student used.
    grads = {"dW": np.ones((3, 3)), "dx": backward}
    expected = {"dx": want, "dW": np.ones((3, 3)) * 2}
    assert "right for the last step" in time_steps(grads, expected, TOL, "g", None, 2)[0]


def test_a_changed_fingerprint_is_stale(course_copy):
    lab = get_lab("lab1")
    path = fingerprints_path(lab.public_fixture_path(course_copy))
    suite = lab.mutants_path(course_copy)
    text = suite.read_text()
    suite.write_text(text.replace('"np.dot(Wax, xt) + ba"', '"np.dot(2 * Wax, xt) + ba"', 1))
    problems = stale_files(lab, course_copy)
    assert any(path.name in p for p in problems), problems


def test_pytest_on_the_public_tests_names_the_mistake(course_copy):
    lab = get_lab("lab1")
    mutant = next(m for m in load_mutant_table(lab.mutants_path()).mutants
                  if m.name == "loop_feeds_a0")
    lab.stub_path(course_copy).write_text(mutant.apply(lab.solution_path().read_text()))
    output = subprocess.run(
        [sys.executable, "-m", "pytest", "assignments/lab1", "-q", "-p", "no:randomly"],
        cwd=course_copy, capture_output=True, text=True, timeout=300).stdout
    assert re.search(r"this looks like: every step is fed .*a0", output), output[-3000:]
    assert f"hint: {mutant.hint}" in output


def test_a_contract_slip_is_named_as_the_grader_names_it():
    """The right values in another order, with their axes in another order, or with a length-1
    axis more: the public check says so in the grader's words (``checks.contract``, shipped),
    the outputs by the names the check gives them; a result whose values are also off, or
    whose entries are not informative, names nothing."""
    rng = np.random.default_rng(3)
    a, y = rng.standard_normal((5, 4)), rng.standard_normal((2, 4))
    names = ("lstm_forward (small) a", "lstm_forward (small) y")
    [line] = explain((y, a), (a, y), TOL, "lstm_forward (small)", names, None)
    assert line.startswith("lstm_forward returns (y, a) where (a, y) is expected"), line
    assert "\nhint: " in line
    states = rng.standard_normal((2, 5, 4))
    [line] = explain(states.transpose(1, 0, 2).copy(), states, TOL, "f states", None, None)
    assert "its axes are in another order (axes 0 and 1 swapped)" in line, line
    [line] = explain(a[None], a, TOL, "f", None, None)
    assert "has shape (1, 5, 4) where (5, 4) is expected; its values are right" in line, line
    off = states.transpose(1, 0, 2).copy()
    off[0, 0, 0] += 1.0
    assert not any("axes" in line for line in explain(off, states, TOL, "f", None, None))
    zeros = np.zeros((5, 4))
    assert explain((zeros, zeros + 1.0), (zeros + 1.0, zeros), TOL, "f", None, None) == []


@pytest.mark.parametrize(("old", "new", "case_name", "said"), [
    ('        dWax += grads["dWax"]\n        dWaa += grads["dWaa"]\n        dba += grads["dba"]\n',
     "", "backward_small", "in `rnn_backward`, `dWax`, `dWaa` and `dba` are never added to"),
    ("    return loss, grads, hs[-1]\n", "    return loss, grads, hs[-2]\n", "char_rnn_small",
     "the state after the last step but one is returned"),
    ("        dlogits *= scale\n", "", "char_rnn_small",
     "the loop leaves out the step the course's solution writes `dlogits *= scale`"),
], ids=["never-added", "last-entry-early", "update-left-out"])
def test_a_slip_of_the_loop_is_named_as_the_grader_names_it(old, new, case_name, said):
    """The grader's sequence slips (the reference's loop rewritten) reach the public tests as
    sealed rows of the case's table: the slip's own outputs open the grader's sentence and
    hint; a student who makes the slip on one sum only (the row's other outputs right) opens
    none."""
    from rnngrade.diagnosis.mutants import load_source_as_module, strip_markers

    from .test_public_edits import public_case_outputs, public_lines

    source = strip_markers(get_lab("lab2").solution_path().read_text())
    assert source.count(old) == 1
    module = load_source_as_module(source.replace(old, new), "_slipped")
    case = PublicVectors(get_lab("lab2").public_fixture_path()).case(case_name)
    got = (module.char_rnn_loss_and_grads(*case.args) if case_name.startswith("char_rnn")
           else public_case_outputs("lab2", case_name, module))
    lines = public_lines("lab2", case_name, got)
    assert len(lines) == 1 and said in lines[0] and "\nhint: " in lines[0], lines
    assert "this one change to its loop" in lines[0]
    if case_name == "backward_small":
        partly = load_source_as_module(source.replace('        dba += grads["dba"]\n', ""),
                                       "_one")
        lines = public_lines("lab2", case_name, public_case_outputs("lab2", case_name, partly))
        assert not any("never added" in line for line in lines), lines

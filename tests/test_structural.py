"""Structural localisation: a mistake no known mistake matches is located from which outputs,
steps and cases fail, and the diagnosis states that evidence."""

import dataclasses

import numpy as np
import pytest

from rnngrade.diagnosis import structural
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading import plugin as grading_plugin
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.model import CaseResult

ATOL, RTOL = 1e-10, 1e-8


def _sequence(seed=0, shape=(3, 4, 5)):
    return np.random.default_rng(seed).standard_normal(shape)


def test_first_steps_right_then_wrong_is_not_carried_across_time():
    want = _sequence()
    got = want.copy()
    got[:, :, 1:] *= 0.5
    found = structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, 2,
                                      initial_state_zero=False)
    assert found.name == structural.NOT_CARRIED and found.source == "structural"
    assert found.evidence == "a is right for the first step, wrong from the second step on"
    # From a zero state the first step is right whatever the recurrence does: no claim.
    assert structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, 2,
                                     initial_state_zero=True) is None
    # A forward output converging to the right values is not a gradient carried back.
    assert structural.localise_check({"a": want[:, :, ::-1]}, {"a": got[:, :, ::-1]}, ["a"],
                                     ATOL, RTOL, 2, initial_state_zero=False) is None
    # Another output already wrong at the first step: the step itself is wrong, no claim.
    other = want + 1.0
    assert structural.localise_check({"a": got, "y": other}, {"a": want, "y": want}, ["a", "y"],
                                     ATOL, RTOL, 2, initial_state_zero=False) is None


def test_last_steps_right_is_a_gradient_not_carried_back():
    want = _sequence(1)
    got = want.copy()
    got[:, :, :-1] += 0.1
    found = structural.localise_check({"dx": got}, {"dx": want}, ["dx"], ATOL, RTOL, 2)
    assert found.name == structural.NOT_CARRIED_BACK
    assert found.evidence == "dx is right for the last step, wrong for every earlier one"
    converging = want.copy()
    converging[:, :, :-2] += 0.1  # right for the last two steps: an error dying out, no claim
    assert structural.localise_check({"dx": converging}, {"dx": want}, ["dx"], ATOL, RTOL,
                                     2) is None


def test_later_steps_equal_to_a_fresh_start_is_a0_fed_every_step():
    want, fresh_steps = _sequence(2), _sequence(3)
    got = fresh_steps.copy()
    got[:, :, 0] = want[:, :, 0]

    def fresh(t):
        return {"a": fresh_steps[:, :, t:t + 1]}

    found = structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, 2, fresh,
                                      initial_state_zero=False)
    assert found.name == structural.FED_A0 and "fresh start from a0" in found.evidence


def test_one_step_late_is_off_by_one():
    want = _sequence(4)
    got = np.concatenate([np.zeros((3, 4, 1)), want[:, :, :-1]], axis=2)
    found = structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, 2)
    assert found.name == structural.OFF_BY_ONE and "t-1" in found.evidence


def test_only_the_forget_gate_gradients_wrong_is_the_forget_gate_path():
    rng = np.random.default_rng(5)
    keys = ["dx", "da0", "dWf", "dWi", "dWc", "dWo", "dbf", "dbi", "dbc", "dbo"]
    want = {f"g['{k}']": rng.standard_normal((3, 4)) for k in keys}
    got = dict(want)
    failing = ["g['dWf']", "g['dbf']"]
    for leaf in failing:
        got[leaf] = want[leaf] + 1
    gates = get_lab("lab3").structure.gates  # as lab 3's lab.yaml declares them
    found = structural.localise_check(got, want, failing, ATOL, RTOL, 2, gates=gates)
    assert found.name == "forget_gate_path" and found.evidence.startswith("only dWf, dbf differ")
    assert "gate gradient dft," in found.hint
    both = structural.localise_check(got, want, ["g['dWf']", "g['dWi']"], ATOL, RTOL, 2,
                                     gates=gates)
    assert both is None  # two gates: no single path to name
    # a lab that declares no gates: no gate's path
    assert structural.localise_check(got, want, failing, ATOL, RTOL, 2) is None


def test_a_few_wrong_entries_per_step_say_nothing_about_time():
    """Padded positions left non-zero: later steps are wrong in a few entries only."""
    want = _sequence(7)
    got = want.copy()
    got[0, 0, 1:] += 1.0
    assert structural.localise_check({"out": got}, {"out": want}, ["out"], ATOL, RTOL, 2,
                                     initial_state_zero=False) is None


def test_a_mixed_picture_says_nothing():
    want = _sequence(6)
    got = want.copy()
    got[:, :, [1, 3]] += 1
    assert structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, 2) is None
    assert structural.localise_check({"a": got}, {"a": want}, ["a"], ATOL, RTOL, None) is None


def _case(case, outcome):
    return CaseResult(case, outcome, kind="" if outcome == "passed" else "check")


def test_cases_right_only_at_t1_or_only_without_the_previous_state():
    at_t1 = [_case("T1", "passed"), _case("n_x3-T6", "failed"), _case("m1", "failed")]
    found = structural.localise_cases(at_t1)
    assert found.name == structural.NOT_CARRIED
    # Without checks along time, "T1" may be a temperature: no claim about time steps.
    assert structural.localise_cases(at_t1, timed=False) is None
    assert found.evidence == "right for T = 1, wrong for every longer sequence"
    no_state = [_case("a_prev", "passed"), _case("Waa", "passed"), _case("xt", "failed"),
                _case("ba", "failed")]
    lab1 = get_lab("lab1").structure  # the case names lab 1's lab.yaml declares
    found = structural.localise_cases(no_state, structure=lab1)
    assert found.name == structural.RECURRENT_TERM and "a_prev = 0 or Waa = 0" in found.evidence
    assert structural.localise_cases([_case("T1", "passed"), _case("T1-m2", "failed")]) is None
    from_zeros = [_case("a0", "passed"), _case("x", "failed"), _case("Waa", "failed")]
    found = structural.localise_cases(from_zeros, structure=lab1)
    assert found.name == structural.INITIAL_STATE and found.evidence.startswith("right with a0 = 0")
    # the names are the lab's: a lab that declares none gets no claim from them
    assert structural.localise_cases(no_state) is None
    assert structural.localise_cases(from_zeros) is None


@pytest.fixture
def without_known_mistakes(monkeypatch):
    """Grading as if the lab had no known mistakes: only localisation and heuristics speak."""
    assets = grading_plugin._assets
    monkeypatch.setattr(grading_plugin, "_assets",
                        lambda item: dataclasses.replace(assets(item), mutants=()))


def _grade_edited(tmp_path, lab_name, old, new):
    lab = get_lab(lab_name)
    source = strip_markers(lab.solution_path().read_text())
    assert source.count(old) == 1
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / lab.filename).write_text(source.replace(old, new))
    return grade(folder, lab_name, inprocess=True, device="cpu")


def _diagnoses(result, title_start):
    return [d for t in result.tests if t.title.startswith(title_start) for d in t.diagnosis]


def test_a0_fed_at_every_step_is_located_without_a_known_mistake(tmp_path,
                                                                 without_known_mistakes):
    result = _grade_edited(tmp_path, "lab1", "rnn_cell_forward(x[:, :, t], a_prev, parameters)",
                           "rnn_cell_forward(x[:, :, t], a0, parameters)")
    names = {d.name for d in _diagnoses(result, "rnn_forward:")}
    assert structural.FED_A0 in names, names


def test_a_backward_loop_that_scales_the_carried_gradient_is_located(tmp_path):
    """Not a known mistake: da_prev carried back at half its size."""
    result = _grade_edited(tmp_path, "lab2", 'da_prevt = grads["da_prev"]',
                           'da_prevt = 0.5 * grads["da_prev"]')
    found = _diagnoses(result, "rnn_backward")
    assert any(d.name in (structural.NOT_CARRIED, structural.NOT_CARRIED_BACK) for d in found), \
        [(d.name, d.evidence) for d in found]
    assert all(d.evidence for d in found)

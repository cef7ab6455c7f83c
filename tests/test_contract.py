"""Contract slips are named: the right values returned in another order, with a length-1 axis
more or less, or in a lower precision than the inputs (rnngrade.harness.checks.contract)."""

import numpy as np
import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.harness.checks.contract import AXES, LOW_PRECISION, REORDERED, explain_contract
from rnngrade.harness.checks.structure import compare_tree
from rnngrade.harness.checks.tolerance import FLOAT64
from rnngrade.labs import get_lab


def _graded(tmp_path, lab_name, old, new, inprocess=True):
    lab = get_lab(lab_name)
    source = strip_markers(lab.solution_path().read_text())
    assert source.count(old) == 1, old
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / lab.filename).write_text(source.replace(old, new))
    return grade(folder, lab_name, inprocess=inprocess, device="cpu")


def _named(result, prefix, name):
    tests = [t for t in result.tests if t.name.startswith(prefix) and t.score < t.max_score]
    assert tests, f"no failing {prefix} test"
    return [t for t in tests if any(d.name == name for d in t.diagnosis)], tests


@pytest.mark.parametrize("inprocess", [True, False], ids=["inprocess", "sandboxed"])
def test_outputs_returned_in_another_order_are_named(tmp_path, inprocess):
    result = _graded(tmp_path, "lab3", "return a_next, c_next, yt_pred, cache",
                     "return a_next, yt_pred, c_next, cache", inprocess)
    named, failing = _named(result, "test_lstm_cell_forward", REORDERED)
    assert named, [(t.name, t.diagnosis) for t in failing]
    diagnosis = next(d for d in named[0].diagnosis if d.name == REORDERED)
    assert "(a_next, yt_pred, c_next)" in diagnosis.text, diagnosis.text
    assert diagnosis.function == "lstm_cell_forward"


def test_a_flat_bias_gradient_is_named_as_a_shape_slip_with_right_values(tmp_path):
    result = _graded(tmp_path, "lab2", 'dba = np.sum(dz, axis=1, keepdims=True)\n'
                     '    return {"dxt"', 'dba = np.sum(dz, axis=1)\n    return {"dxt"')
    named, failing = _named(result, "test_rnn_cell_backward", AXES)
    assert named, [(t.name, t.diagnosis) for t in failing]
    assert "its values are right" in next(d.text for d in named[0].diagnosis if d.name == AXES)


def test_a_result_cast_down_to_float32_is_named_as_lost_precision(tmp_path):
    result = _graded(tmp_path, "lab1", "a_next = np.tanh(pre_activation)",
                     "a_next = np.tanh(pre_activation).astype(np.float32)")
    named, failing = _named(result, "test_rnn_cell_forward", LOW_PRECISION)
    assert named, [(t.name, t.diagnosis) for t in failing]


def test_no_slip_is_named_when_the_values_are_wrong_too():
    rng = np.random.default_rng(0)
    a, y = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    want, names = (a, y), ("a", "y")
    for got in [(a[:, :, None] * 2, y), (y, a + 1), (a.astype(np.float32) * 1.01, y)]:
        failed = [c for c in compare_tree(got, want, FLOAT64, "f", names, np.float64)
                  if not c.ok]
        assert failed and explain_contract(got, want, failed, FLOAT64, "f", names, "f") == []


def test_swapped_entries_that_cannot_be_told_apart_name_nothing():
    same = np.arange(1.0, 13.0).reshape(4, 3)
    other = np.linspace(-1, 1, 12).reshape(4, 3)
    # two entries equal to each other: a swap and no swap fit alike
    got, want = (same, same, other), (same, other, same)
    failed = [c for c in compare_tree(got, want, FLOAT64, "f", None, None) if not c.ok]
    assert explain_contract(got, want, failed, FLOAT64, "f", None, "f") == []


def test_a_final_state_returned_one_step_early_is_named(tmp_path):
    from rnngrade.diagnosis.structural import LAST_STEP_EARLY

    result = _graded(tmp_path, "lab2", "    return loss, grads, hs[-1]\n",
                     "    return loss, grads, hs[-2]\n")
    named, failing = _named(result, "test_char_rnn", LAST_STEP_EARLY)
    assert named, [(t.name, t.diagnosis) for t in failing]
    # named by the slip of the loop (hs[-2] for hs[-1]) before the structural note
    assert "the state after the last step but one is returned" in next(
        d.text for d in named[0].diagnosis if d.name == LAST_STEP_EARLY)


def test_axes_in_another_order_are_named_only_when_one_order_fits():
    """(T, B, H) for (B, T, H): the values are right once axes 0 and 1 are swapped; a result
    whose values are also off, or one two orders of the axes explain, names nothing."""
    from rnngrade.harness.checks.contract import AXES_ORDER

    want = np.random.default_rng(0).standard_normal((4, 6, 5))
    got = want.transpose(1, 0, 2).copy()
    failed = [c for c in compare_tree(got, want, FLOAT64, "f", None, None) if not c.ok]
    [found] = explain_contract(got, want, failed, FLOAT64, "f", None, "f")
    assert found.name == AXES_ORDER and "axes 0 and 1 swapped" in found.text
    got[0, 0, 0] += 1.0
    failed = [c for c in compare_tree(got, want, FLOAT64, "f", None, None) if not c.ok]
    assert explain_contract(got, want, failed, FLOAT64, "f", None, "f") == []
    same = np.ones((3, 3, 2))  # every order of its first two axes gives the same array
    failed = [c for c in compare_tree(same.reshape(3, 2, 3), same, FLOAT64, "f", None, None)
              if not c.ok]
    assert explain_contract(same.reshape(3, 2, 3), same, failed, FLOAT64, "f", None, "f") == []

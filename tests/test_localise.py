"""A failed check says where inside the function its values go wrong, in the student's own names,
and which outputs are still right; hostile locals never stop grading."""

from __future__ import annotations

import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.render import render_feedback_md

LAB2, LAB3 = get_lab("lab2"), get_lab("lab3")

# Locals no grader may trust: a huge array, an object that raises on every attribute and
# comparison, an ndarray subclass whose own code raises, a tensor that requires grad, a cycle.
HOSTILE = '''
class _Evil:
    def __getattr__(self, name):
        raise RuntimeError("no")
    def __eq__(self, other):
        raise RuntimeError("no")
    def __array__(self, *a, **k):
        raise RuntimeError("no")
    __hash__ = None


class _Sub(np.ndarray):
    def __array__(self, *a, **k):
        raise RuntimeError("no")
    def __eq__(self, other):
        raise RuntimeError("no")
    def __array_finalize__(self, obj):
        if obj is not None and getattr(obj, "_armed", False):
            raise RuntimeError("no")


def _hostile():
    import torch
    huge = np.ones(3_000_000)
    evil = _Evil()
    sub = np.zeros((2, 2)).view(_Sub)
    sub._armed = True
    grad = torch.ones(3, requires_grad=True) * 2
    cycle = []
    cycle.append(cycle)
    return huge, evil, sub, grad, cycle
'''


def _submission(tmp_path, lab, name, edits, extra=""):
    source = strip_markers(lab.solution_path().read_text())
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / name).write_text(source + extra)
    return folder


def _localised(result, function):
    return [d for t in result.tests for d in t.diagnosis
            if d.source == "localised" and d.function == function]


# the tanh derivative dropped from the candidate's gradient (no mutant describes it)
DCCT = ("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it")


def test_lstm_cell_backward_names_the_first_wrong_value_and_the_right_outputs(tmp_path):
    result = grade(_submission(tmp_path, LAB3, "lstm.py", [DCCT]), "lab3", inprocess=True,
                   device="cpu")
    found = _localised(result, "lstm_cell_backward")
    assert found and all("`dcct`" in d.text for d in found)
    text = found[0].text
    assert "`dc_prev`" in text.split("wrong;")[1]  # right
    assert "`dWc`" in text.split("wrong;")[0] and "`dxt`" in text.split("wrong;")[0]
    assert "`dc`" in text  # what it is computed from, right
    assert "where it goes wrong" in render_feedback_md(result).lower()
    # no other function is blamed: the forward pass is right
    assert not _localised(result, "lstm_cell_forward")


def test_lstm_cell_forward_wrong_hidden_state(tmp_path):
    edit = ("a_next = ot * np.tanh(c_next)", "a_next = ot * np.tanh(a_prev)")
    result = grade(_submission(tmp_path, LAB3, "lstm.py", [edit]), "lab3", inprocess=True,
                   device="cpu")
    found = _localised(result, "lstm_cell_forward")
    assert found and "`a_next`" in found[0].text
    wrong, right = found[0].text.split(". ", 1)[1].split("wrong;")
    assert "`c_next`" in right and "`a_next`" in wrong and "`yt_pred`" in wrong


def test_rnn_cell_backward_in_the_sandbox(tmp_path):
    edit = ("dz = (1 - a_next ** 2) * da_next", "dz = (1 - a_next) * da_next")
    result = grade(_submission(tmp_path, LAB2, "bptt.py", [edit]), "lab2", inprocess=False,
                   device="cpu")
    assert result.status == "graded"
    found = _localised(result, "rnn_cell_backward")
    assert found and all("`dz`" in d.text for d in found)


@pytest.mark.parametrize("inprocess", [True, False], ids=["inprocess", "sandbox"])
def test_hostile_locals_never_stop_grading(tmp_path, inprocess):
    edits = [DCCT, ("    n_a = a_next.shape[0]\n",
                    "    n_a = a_next.shape[0]\n    h1, h2, h3, h4, h5 = _hostile()\n")]
    result = grade(_submission(tmp_path, LAB3, "lstm.py", edits, HOSTILE), "lab3",
                   inprocess=inprocess, device="cpu")
    assert result.status == "graded"
    found = _localised(result, "lstm_cell_backward")
    assert found and "`dcct`" in found[0].text
    assert "h2" not in found[0].text and "h3" not in found[0].text


def test_a_correct_submission_gets_no_localisation(tmp_path):
    result = grade(_submission(tmp_path, LAB2, "bptt.py", []), "lab2", inprocess=True,
                   device="cpu")
    assert result.score == result.max_score
    assert not any(d.source == "localised" for t in result.tests for d in t.diagnosis)

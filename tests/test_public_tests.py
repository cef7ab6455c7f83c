"""`pytest assignments/labN` on the course itself, as a student sees a wrong value. (Each lab's
public suite on the stub and on the reference runs once, on the released repository: see
tests/release/test_release_run.py.)"""

import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import get_lab

from .conftest import run_public_inprocess


def test_a_wrong_value_is_reported_with_place_and_size(course_copy, capsys, monkeypatch):
    lab = get_lab("lab1")
    source = strip_markers(lab.solution_path(course_copy).read_text())
    lab.stub_path(course_copy).write_text(source.replace("yt_pred = softmax(logits)",
                                                         "yt_pred = softmax(2 * logits)"))
    code, output = run_public_inprocess(capsys, monkeypatch, course_copy, lab.name)
    assert code == 1, output[-3000:]
    assert "yt_pred: values differ beyond tolerance" in output
    assert "largest error" in output and "expected" in output
    assert "lab1: 14/22 public points" in output  # cell and sequence values fail: 8 points


def _public_lab3(course_copy, capsys, monkeypatch, old, new):
    lab = get_lab("lab3")
    source = strip_markers(lab.solution_path(course_copy).read_text())
    assert source.count(old) == 1
    lab.stub_path(course_copy).write_text(source.replace(old, new))
    return run_public_inprocess(capsys, monkeypatch, course_copy, lab.name, "-rs")


def test_lab3_backward_is_checked_on_classic_caches_when_the_forward_is_wrong(
        course_copy, capsys, monkeypatch):
    """A wrong lstm_cell_forward (so lstm_forward too) costs no backward points: the backward
    passes are fed the vectors' classic caches, and the gradient checks that tie backward to
    the student's forward are skipped, saying why."""
    code, output = _public_lab3(course_copy, capsys, monkeypatch,
                                "a_next = ot * np.tanh(c_next)", "a_next = np.tanh(c_next)")
    assert code == 1, output[-3000:]
    assert "test_lstm_cell_backward_values" not in output.split("short test summary")[-1], \
        output[-3000:]
    assert "test_lstm_backward_values" not in output.split("short test summary")[-1]
    assert "needs a correct lstm_forward: yours fails its own checks" in output
    assert "needs a correct lstm_cell_forward: yours fails its own checks" in output


@pytest.mark.slow  # the classic-cache path alone is the default test below
def test_lab3_a_wrong_backward_still_fails_on_either_cache(course_copy, capsys, monkeypatch):
    wrong_forward = ("a_next = ot * np.tanh(c_next)", "a_next = np.tanh(c_next)")
    not_carried = ('        dc_prevt = grads["dc_prev"]\n', "")
    for edits in ([not_carried], [not_carried, wrong_forward]):
        lab = get_lab("lab3")
        source = strip_markers(lab.solution_path(course_copy).read_text())
        for old, new in edits:
            source = source.replace(old, new)
        lab.stub_path(course_copy).write_text(source)
        code, output = run_public_inprocess(capsys, monkeypatch, course_copy, lab.name)
        summary = output.split("short test summary")[-1]
        assert "test_lstm_backward_values" in summary, output[-3000:]
        if len(edits) == 2:
            assert "checked on the course's cache in the classic layout: your `lstm_forward` " \
                   "fails its own checks" in output

"""Caches that hold one array where the course's hold distinct ones (issue #36, kind 3), graded end
to end: a forward pass that keeps every step's state in one buffer loses its own points and is
named; a cell that writes its new state into ``c_prev`` loses the cell's points only (the time loop
is graded with a correct cell in its place); sandboxed grading sees the same array as in-process
grading does (the codec keeps an object sent twice in one reply as one object)."""

from __future__ import annotations

import pytest

from rnngrade.diagnosis.aliasing import SHARED_CACHE
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.model import GradeResult

LAB1, LAB3 = get_lab("lab1"), get_lab("lab3")

# lstm_forward copies each new cell state into the array it passes as c_prev and that the cell
# caches: the cached c_prev of every step is that one array, holding the last state.
LSTM_FORWARD_ONE_BUFFER = (
    "        a_next, c_next, yt, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, "
    "parameters)\n",
    "        a_next, c_new, yt, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, "
    "parameters)\n        c_next[:] = c_new\n")
# lstm_cell_forward builds c_next in the c_prev array it was given.
CELL_WRITES_C_PREV = ("    c_next = ft * c_prev + it * cct\n",
                      "    c_prev *= ft\n    c_prev += it * cct\n    c_next = c_prev\n")
# rnn_forward copies each new state into one a_prev buffer.
RNN_FORWARD_ONE_BUFFER = [("    a_prev = a0\n", "    a_prev = a0.copy()\n"),
                          ("        a_prev = a_next\n", "        a_prev[:] = a_next\n")]


def graded(tmp_path, lab, edits: list[tuple[str, str]], inprocess: bool = True
           ) -> GradeResult:
    source = lab.solution_path().read_text(encoding="utf-8")
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / lab.filename).write_text(source, encoding="utf-8")
    return grade(folder, lab.name, device="cpu", inprocess=inprocess, outcome=False)


def losing(result: GradeResult) -> dict[str, list[str]]:
    """Each test that lost points, with the mistakes its diagnosis names."""
    return {t.name: [d.name for d in t.diagnosis] for t in result.tests
            if t.score < t.max_score}


@pytest.mark.slow  # lab1's rnn_forward below shows the same naming in the default suite
def test_lstm_forward_caching_one_buffer_loses_its_own_test_and_is_named(tmp_path):
    result = graded(tmp_path, LAB3, [LSTM_FORWARD_ONE_BUFFER])
    assert losing(result) == {"test_lstm_forward_random": [SHARED_CACHE]}
    test = next(t for t in result.tests if t.name == "test_lstm_forward_random")
    assert "the cached `c_prev` of steps 1–6 are one array" in test.message
    assert "`lstm_forward` keeps each step's state in the same buffer" in test.message


def test_a_cell_writing_into_c_prev_costs_lstm_forward_nothing(tmp_path):
    result = graded(tmp_path, LAB3, [CELL_WRITES_C_PREV])
    lost = losing(result)
    assert set(lost) == {"test_lstm_cell_forward_random", "test_lstm_cell_forward_term_isolation",
                         "test_lstm_cell_forward_float32"}, lost
    assert all(names == ["result_written_into_argument"] for names in lost.values()), lost
    assert any("`lstm_forward` was graded with a correct `lstm_cell_forward` in place of yours, "
               "which writes into its arguments" in note for note in result.notes)


def test_rnn_forward_with_one_state_buffer_loses_the_caches_test_and_is_named(tmp_path):
    result = graded(tmp_path, LAB1, RNN_FORWARD_ONE_BUFFER)
    lost = losing(result)
    assert list(lost) == ["test_rnn_forward_caches"], lost
    assert SHARED_CACHE in lost["test_rnn_forward_caches"]
    test = next(t for t in result.tests if t.name == "test_rnn_forward_caches")
    assert "the cached `a_prev` of steps 1–4 are one array" in test.message


@pytest.mark.slow
def test_sandboxed_grading_sees_the_one_buffer_too(tmp_path):
    result = graded(tmp_path, LAB3, [LSTM_FORWARD_ONE_BUFFER], inprocess=False)
    assert losing(result) == {"test_lstm_forward_random": [SHARED_CACHE]}

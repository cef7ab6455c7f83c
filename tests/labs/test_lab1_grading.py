"""Grading lab1 end to end (in-process): the caches' layout and the results' dtype.

lab2's backward passes read the caches of lab1's forward functions, so their layout is graded in
lab1 (rnn_cell_forward's and rnn_forward's docstrings); each costs only its own test, and a
function never loses points for the layout of another's cache. The dtype rule is SPEC's: float64
inputs need float64 results; float32 inputs may give float64 results (the classic template
allocates `np.zeros((n_a, m, T_x))`), so those keep full marks."""

from __future__ import annotations

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.labs import get_lab
from rnngrade.results.model import GradeResult

from .grading import assert_full_marks, grade_lab_source

LAB = get_lab("lab1")
MUTANTS = {m.name: m for m in load_mutant_table(LAB.mutants_path()).mutants}
CELL_CACHE = "    cache = (a_next, a_prev, xt, parameters)\n"
FORWARD_CACHES = "    return a, y_pred, (caches, x)\n"
ALLOCATION = ("    a = np.zeros((n_a, m, T_x), dtype=x.dtype)\n"
              "    y_pred = np.zeros((n_y, m, T_x), dtype=x.dtype)\n")


def graded(tmp_path, *edits: tuple[str, str]) -> GradeResult:
    source = LAB.solution_path().read_text(encoding="utf-8")
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return grade_lab_source(tmp_path, LAB, source)


def losing(result: GradeResult) -> dict[str, list[str]]:
    """Each test that lost points, with the mistakes its diagnosis names."""
    return {t.name: [d.name for d in t.diagnosis] for t in result.tests
            if t.score < t.max_score}


def test_a_cell_cache_in_another_order_loses_the_cache_test_only_and_is_named(tmp_path):
    result = graded(tmp_path, (CELL_CACHE, "    cache = (a_prev, a_next, xt, parameters)\n"))
    assert losing(result) == {"test_rnn_cell_forward_cache": ["cache_in_another_order"]}
    test = next(t for t in result.tests if t.name == "test_rnn_cell_forward_cache")
    assert "(a_prev, a_next, xt, parameters)" in test.message
    assert test.hint == MUTANTS["cache_in_another_order"].hint


@pytest.mark.parametrize("cache", ["(a_next, a_prev, xt)", "{'a_next': a_next}",
                                   "(a_next, a_prev, xt, parameters, yt_pred)"])
def test_a_cell_cache_of_another_shape_loses_the_cache_test_only(tmp_path, cache):
    result = graded(tmp_path, (CELL_CACHE, f"    cache = {cache}\n"))
    assert list(losing(result)) == ["test_rnn_cell_forward_cache"]


def test_rnn_forward_caches_in_a_dict_lose_the_caches_test_only(tmp_path):
    """The shape of fixtures/submissions/fair/rnn_forward_dict_caches.py."""
    result = graded(tmp_path, (FORWARD_CACHES,
                               '    return a, y_pred, {"steps": caches, "inputs": x}\n'))
    assert list(losing(result)) == ["test_rnn_forward_caches"]
    test = next(t for t in result.tests if t.name == "test_rnn_forward_caches")
    assert "a dict of 2 items" in test.message


@pytest.mark.parametrize("caches", ["(caches[::-1], x)", "(caches[1:], x)", "(x, caches)",
                                    "(caches, x[:, :, 0])"])
def test_rnn_forward_caches_collected_wrongly_lose_the_caches_test_only(tmp_path, caches):
    result = graded(tmp_path, (FORWARD_CACHES, f"    return a, y_pred, {caches}\n"))
    assert list(losing(result)) == ["test_rnn_forward_caches"]


def test_rnn_forward_collecting_its_cells_own_layout_keeps_full_marks(tmp_path):
    """A cell cache in another layout is the cell's mistake: rnn_forward, which collects
    whatever its cell returns, loses nothing."""
    result = graded(tmp_path, (CELL_CACHE, "    cache = {'next': a_next, 'prev': a_prev}\n"))
    assert list(losing(result)) == ["test_rnn_cell_forward_cache"]


def test_float64_results_for_float32_inputs_keep_full_marks(tmp_path):
    """The classic template's allocation: float64 whatever the inputs (SPEC: float32 inputs
    get float32 tolerances; a float64 result is at least as precise)."""
    assert_full_marks(graded(tmp_path, (ALLOCATION, "    a = np.zeros((n_a, m, T_x))\n"
                                                    "    y_pred = np.zeros((n_y, m, T_x))\n")))


def test_results_cast_to_float32_lose_points_and_are_named(tmp_path):
    result = graded(tmp_path, *MUTANTS["results_cast_to_float32"].edits)
    lost = losing(result)
    assert lost and all(name.startswith("test_rnn_forward_") for name in lost), lost
    values = {name: names for name, names in lost.items() if name != "test_rnn_forward_caches"}
    assert values and all(names == ["results_cast_to_float32"] for names in values.values())
    test = next(t for t in result.tests if t.name == "test_rnn_forward_random")
    assert "dtype float32, expected float64" in test.message


def test_rnn_forward_keeps_its_cache_point_when_its_cell_raises(tmp_path):
    """rnn_forward is graded with a correct cell in place of one that raises
    (rnngrade/grading/stand_ins.py): its caches, then the classic ones, keep the point."""
    result = graded(tmp_path, ('    Wax = parameters["Wax"]\n',
                               '    raise ValueError("not today")\n'))
    forward = [t for t in result.tests if t.name.startswith("test_rnn_forward_")
               and not t.name.startswith("test_rnn_forward_batch")]
    assert forward and all(t.score == t.max_score for t in forward), [
        (t.name, t.message[:300]) for t in forward if t.score < t.max_score]
    assert {t.name for t in forward} >= {"test_rnn_forward_caches"}

"""A function that calls another lab function loses no points for that function's mistake: it is
graded with a correct stand-in where the submission's own callee gives wrong results
(rnngrade.grading.stand_ins)."""

import builtins
from pathlib import Path

import numpy as np
import pytest

from rnngrade.diagnosis.fairness import Verdict, tally
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.grading.stand_ins import callees_of, record_calls
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.labs import get_lab
from rnngrade.results.model import CaseResult, GradeResult, Outcome, TestResult

WRONG_CELL = ("a_next = np.tanh(pre_activation)",
              "a_next = np.tanh(2 * pre_activation)")
FEEDS_A0 = ("rnn_cell_forward(x[:, :, t], a_prev, parameters)",
            "rnn_cell_forward(x[:, :, t], a0, parameters)")


def _grade_lab1(tmp_path, *edits, extra=""):
    lab = get_lab("lab1")
    source = strip_markers(lab.solution_path().read_text())
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / lab.filename).write_text(source + extra)
    result = grade(folder, "lab1", inprocess=True, device="cpu")
    return result, {t.name: t for t in result.tests}


def test_the_graph_of_lab_functions_comes_from_the_reference():
    lab = get_lab("lab3")
    graph = callees_of(strip_markers(lab.solution_path().read_text()), lab.functions)
    assert graph["lstm_forward"] == {"lstm_cell_forward"}
    assert graph["lstm_backward"] == {"lstm_cell_backward"}
    assert graph["lstm_layer"] == {"lstm_cell"}
    assert "lstm_cell_forward" not in graph  # sigmoid and softmax are not graded in lab3


def test_a_correct_sequence_function_keeps_its_points_when_its_cell_is_wrong(tmp_path):
    source = strip_markers(get_lab("lab1").solution_path().read_text())
    assert WRONG_CELL[0] in source, "the edit no longer applies: update WRONG_CELL"
    result, tests = _grade_lab1(tmp_path, WRONG_CELL)
    assert tests["test_rnn_cell_forward_random"].score == 0
    for name in ("test_rnn_forward_random", "test_rnn_forward_term_isolation",
                 "test_rnn_forward_long_sequence", "test_rnn_forward_float32"):
        assert tests[name].score == tests[name].max_score, tests[name].message
    assert any("`rnn_forward` was graded with a correct `rnn_cell_forward` in place of yours"
               in note for note in result.notes), result.notes


def test_a_wrong_sequence_function_still_fails_with_a_correct_cell_and_says_so(tmp_path):
    """Only the calls a correct rnn_forward makes have recorded answers: from the second step
    on, this one's calls (a0 again) go to its own wrong cell, and the check still fails."""
    result, tests = _grade_lab1(tmp_path, WRONG_CELL, FEEDS_A0)
    failing = tests["test_rnn_forward_random"]
    assert failing.score < failing.max_score
    assert "checked with a correct `rnn_cell_forward` in place of yours" in failing.message


def test_a_correct_cell_means_no_stand_in_and_no_note(tmp_path):
    result, tests = _grade_lab1(tmp_path, FEEDS_A0)
    assert tests["test_rnn_forward_random"].score < tests["test_rnn_forward_random"].max_score
    assert "in place of yours" not in tests["test_rnn_forward_random"].message
    assert not any("in place of yours" in note for note in result.notes)
    # the retry replaced nothing, so it ran as the first attempt did: its result is neither
    # compared (one record per case, not two for a failing one) nor diagnosed again
    failing = tests["test_rnn_forward_random"]
    assert [r["check"] for r in failing.checks] == ["rnn_forward"] * len(failing.cases)


CHEAT = '''

def rnn_forward(x, a0, parameters):
    """Makes one correct call, then reads the other answers out of the stand-in."""
    rnn_cell_forward(x[:, :, 0], a0, parameters)
    calls = rnn_cell_forward.answer.calls
    a = np.stack([np.asarray(c[1][0]) for c in calls], axis=2)
    y = np.stack([np.asarray(c[1][1]) for c in calls], axis=2)
    return a, y, ([c[1][2] for c in calls], x)
'''


def test_the_stand_in_counts_only_when_every_call_a_correct_caller_makes_was_made(tmp_path):
    """A function that takes the recorded answers without making the calls gains nothing
    beyond the single-step case, where one call is all a correct function makes."""
    result, tests = _grade_lab1(tmp_path, WRONG_CELL, extra=CHEAT)
    random_sizes = tests["test_rnn_forward_random"]
    assert [c.case for c in random_sizes.cases if c.outcome == Outcome.PASSED] == ["T1"]
    for name in ("test_rnn_forward_term_isolation", "test_rnn_forward_long_sequence",
                 "test_rnn_forward_float32"):
        assert tests[name].score == 0, name


def _test(name, title, cases):
    outcome = Outcome.FAILED if any(c.outcome == Outcome.FAILED for c in cases) \
        else Outcome.PASSED
    lost = sum(c.outcome == Outcome.FAILED for c in cases)
    return TestResult(name, title, 4.0 * (len(cases) - lost) / len(cases), 4.0, outcome,
                      "visible", cases=cases)


def test_the_tally_splits_a_test_of_several_functions_by_its_cases():
    """``every function: ...`` loses points only in the wrong function's cases: the other
    functions of that test count as correct and keeping their points."""
    def case(name, ok):
        return CaseResult(name, Outcome.PASSED if ok else Outcome.FAILED)

    tests = [_test("test_gradients_vs_reference", "every function: autograd gradients",
                   [case("masked_softmax", True), case("dot_attention", False),
                    case("scaled_dot_product_attention", True)])]
    result = GradeResult("lab5", "Attention", "s", 0, 4, 0, tests)
    counts = tally(result, {"dot_attention": Verdict("dot_attention", "some_mistake")})
    assert (counts.correct, counts.correct_losing, counts.wrong) == (2, 0, 1)
    assert counts.wrong_full_marks == 0
    wrong_elsewhere = tally(result, {"masked_softmax": Verdict("masked_softmax", "x")})
    assert wrong_elsewhere.correct_losing == 1 and wrong_elsewhere.wrong_full_marks == 1
    assert np.isclose(result.tests[0].score, 4 * 2 / 3)


def test_a_missing_callee_is_stood_in_for_and_the_note_says_it_is_missing(tmp_path):
    result, tests = _grade_lab1(tmp_path, ("def rnn_cell_forward(", "def my_cell("))
    assert tests["test_rnn_cell_forward_random"].score == 0
    assert tests["test_rnn_forward_random"].score == tests["test_rnn_forward_random"].max_score
    assert any("a correct `rnn_cell_forward` in place of yours, which is missing" in note
               for note in result.notes), result.notes


def test_an_unfinished_cell_is_stood_in_for_but_an_unfinished_caller_stays_unfinished(tmp_path):
    cell_body = "    a_next = np.tanh(pre_activation)\n"
    source = strip_markers(get_lab("lab1").solution_path().read_text())
    assert source.count(cell_body) == 1
    result, tests = _grade_lab1(tmp_path, (cell_body, "    raise NotImplementedError\n"))
    assert tests["test_rnn_forward_random"].score == tests["test_rnn_forward_random"].max_score
    stub = get_lab("lab1").stub_path()
    folder = tmp_path / "stub"
    folder.mkdir()
    (folder / stub.name).write_text(stub.read_text())
    graded = grade(folder, "lab1", inprocess=True, device="cpu")
    assert graded.score == 0
    assert not any("in place of yours" in t.message for t in graded.tests)
    assert not any("in place of yours" in note for note in graded.notes)


def test_a_recording_shares_what_stays_unchanged_and_snapshots_what_changes():
    """The calls of a loop share one copy of an array they all get unchanged (the replay then
    sends it once); an array the caller changes in place between calls is copied at each
    call, so every recorded call keeps the values it had."""
    import types

    module = types.ModuleType("loop")
    exec("import numpy as np\n"
         "def cell(x, p):\n    return x * p['w']\n"
         "def run(x, p):\n"
         "    out = []\n"
         "    for t in range(3):\n"
         "        out.append(cell(x, p))\n"
         "        x += 1.0  # in place: the next call sees other values\n"
         "    return out\n", module.__dict__)
    proxy = ModuleProxy(InProcessRunner(module))
    weights = {"w": np.full(2, 2.0)}
    calls = record_calls(proxy, frozenset({"cell"}), ("call", "run", (np.zeros(2), weights),
                                                     {}))["cell"]
    assert len(calls) == 3
    assert calls[0][0][1]["w"] is calls[1][0][1]["w"] is calls[2][0][1]["w"]
    assert [float(c[0][0][0]) for c in calls] == [0.0, 1.0, 2.0]
    assert [float(c[1][0]) for c in calls] == [0.0, 2.0, 4.0]
    assert calls[0][0][1]["w"] is not weights["w"]


CLASSIC_ALIAS = (Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "classic"
                 / "np_float_alias.py")
NO_RECURRENCE = ("    a_next = np.tanh(np.dot(Wax, xt) + np.dot(Waa, a_prev) + ba)",
                 "    a_next = np.tanh(np.dot(Wax, xt) + ba)")


@pytest.mark.parametrize("inprocess", [True, False], ids=["inprocess", "sandboxed"])
def test_a_wrong_cell_that_calls_rnn_utils_softmax_is_diagnosed_not_a_name_error(tmp_path,
                                                                                inprocess):
    """``from rnn_utils import *`` gives softmax through the module's builtins: when the retry
    of a failing rnn_cell_forward check stands in for that softmax (which scores as missing), a
    call the stand-in cannot answer still reaches it, so the feedback names the mistake instead
    of a NameError."""
    source = CLASSIC_ALIAS.read_text(encoding="utf-8")
    assert source.count(NO_RECURRENCE[0]) == 1, "the edit no longer applies"
    path = tmp_path / "rnn_notebook.py"
    path.write_text(source.replace(*NO_RECURRENCE), encoding="utf-8")
    result = grade(path, "lab1", inprocess=inprocess, device="cpu")
    cell = [t for t in result.tests if t.name.startswith("test_rnn_cell_forward")]
    text = "\n".join(f"{t.message}\n{[str(d) for d in t.diagnosis]}" for t in cell)
    assert "NameError" not in text
    assert any(d.name == "recurrent_term_dropped" for t in cell for d in t.diagnosis), text


def test_a_stand_in_that_declines_a_call_hands_it_to_the_helper_from_the_module_builtins():
    import types

    from rnngrade.harness import worker_helpers

    module = types.ModuleType("student")
    module.__dict__["__builtins__"] = {**vars(builtins), "softmax": lambda z: z + 1}
    exec("def cell(z):\n    return softmax(z)\n", module.__dict__)
    worker_helpers.install_stand_in(
        module, "softmax", worker_helpers.replay([[(np.zeros(2),), np.ones(2)]], 0.0, 0.0))
    try:
        assert np.array_equal(module.cell(np.zeros(2)), np.ones(2))  # a recorded call: answered
        assert np.array_equal(module.cell(np.full(2, 5.0)), np.full(2, 6.0))  # declined: own
    finally:
        worker_helpers.remove_stand_ins(module)
    assert "softmax" not in module.__dict__


def test_a_torch_cell_that_fails_under_autograd_costs_its_layer_nothing(tmp_path):
    """lab3's ``lstm_cell`` builds ``c_new`` in the caller's ``c`` (right values, but torch
    refuses the in-place write into a leaf under autograd): the checks of ``lstm_layer`` run
    through the ``autograd`` helper, fail inside the cell, and are retried with the lab's
    differentiable stand-in; the cell alone loses points."""
    lab = get_lab("lab3")
    source = strip_markers(lab.solution_path().read_text())
    old = "c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)"
    assert source.count(old) == 1, "the edit no longer applies"
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / lab.filename).write_text(source.replace(
        old, "c_new = c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))"))
    result = grade(folder, "lab3", inprocess=True, device="cpu")
    tests = {t.name: t for t in result.tests}
    assert tests["test_lstm_cell_vs_nn_lstmcell"].score == 0
    for name in ("test_lstm_layer_vs_nn_lstm", "test_lstm_layer_term_isolation",
                 "test_lstm_layer_float32", "test_lstm_layer_long_sequence"):
        assert tests[name].score == tests[name].max_score, tests[name].message
    assert any("`lstm_layer` was graded with a correct `lstm_cell` in place of yours" in note
               for note in result.notes), result.notes

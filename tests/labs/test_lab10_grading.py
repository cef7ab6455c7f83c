"""lab10: grading end to end in-process: the training runs' tests listed as not run when they are
switched off (`rnngrade validate --lab lab10` runs them), and a mistake in one function costs
only that function's tests. The reference, stub and mutants are graded by
test_lab_grading.py."""

import types

import pytest
import torch

from rnngrade.diagnosis.mutants import load_source_as_module, strip_markers
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab

from .grading import grade_lab_source, graded, mutants

LAB = get_lab("lab10")
OUTCOME_TESTS = {"test_lstm_forget_bias_5_solves_lag_25": 3,
                 "test_lstm_forget_bias_1_stays_at_chance": 2,
                 "test_diagonal_linear_solves_lag_100": 3}
pytestmark = pytest.mark.usefixtures("one_thread")


def test_without_the_training_runs_their_tests_are_listed_as_not_run_with_their_points():
    """The reference and stub graded as test_lab_grading.py grades them (lab10/quick_cases.yaml:
    outcome off)."""
    result = graded(LAB.name, "reference", False)
    for name, points in OUTCOME_TESTS.items():
        run = next(t for t in result.tests if t.name == name)
        assert run.outcome == "skipped" and run.max_score == 0
        assert "not run" in run.message and f"{points} points" in run.message
    assert graded(LAB.name, "stub", False).max_score == result.max_score


def _graded_mutant(tmp_path, name: str):
    """The reference with the known mistake ``name`` in it, graded without the training runs."""
    mutant = next(m for m in mutants(LAB.name) if m.name == name)
    source = mutant.apply(LAB.solution_path().read_text(encoding="utf-8"))
    return grade_lab_source(tmp_path, LAB, source, outcome=False)


def test_a_wrong_half_life_costs_only_the_closed_forms(tmp_path):
    """half_life as the time constant: forget_bias_half_life, gru_half_life and lru_half_life
    call it, and keep their points (the reference's half_life stands in for them)."""
    result = _graded_mutant(tmp_path, "half_life_is_time_constant")
    lost = {t.name: (t.score, t.max_score) for t in result.tests if t.score < t.max_score
            and t.outcome != "skipped"}
    assert set(lost) == {"test_closed_forms"}, lost
    score, max_score = lost["test_closed_forms"]
    assert score == pytest.approx(max_score * 7 / 8)  # one of the eight functions is wrong


def _wrong_recall_batch_module() -> types.ModuleType:
    """A submission whose recall_batch is wrong, and whose train_recall reports what its calls
    of recall_batch got: two calls of the README's data, one of another generator."""
    module = types.ModuleType("submission")
    exec(compile('''
import torch

def recall_batch(batch, lag, generator):
    return "own", batch

def train_recall(kind, lag, forget_bias, updates, seed):
    data = torch.Generator().manual_seed(seed + 1)
    first, second = recall_batch(64, lag, data), recall_batch(64, lag, data)
    other = recall_batch(64, lag, torch.Generator().manual_seed(99))
    return first, second, other, data.get_state()
''', "submission.py", "exec"), vars(module))
    return module


def test_the_recorded_batches_answer_only_the_calls_recorded():
    """A submission's wrong recall_batch is answered, during train_recall, only on the calls
    the reference's recall_batch was recorded on (the batches and the generator's state after
    them): the helpers hold no recall_batch of their own, and any other call is its own."""
    helpers = lab_helpers(LAB).registry.helpers
    assert "_recall_batch" not in lab_helpers(LAB).source
    reference = load_source_as_module(strip_markers(LAB.solution_path().read_text(
        encoding="utf-8")), "_lab10_reference_recall")
    recorded = helpers["recall_calls"](reference, 3, 2, 0)
    assert [(c[0], c[1]) for c in recorded] == [(64, 3), (64, 3), (1000, 3)]
    student = _wrong_recall_batch_module()
    own = student.recall_batch
    first, second, other, state = helpers["train_recall_alone"](student, "lstm", 3, 1.0, 2, 0,
                                                                recorded)
    for (x, y), call in ((first, recorded[0]), (second, recorded[1])):
        assert torch.equal(x, call[3]) and torch.equal(y, call[4])
    assert other == ("own", 64)
    assert torch.equal(state, recorded[1][5])
    assert student.recall_batch is own
    # without recorded calls (a recall_batch that gets them right) the submission's own answers
    first, *_ = helpers["train_recall_alone"](student, "lstm", 3, 1.0, 2, 0, None)
    assert first == ("own", 64)


@pytest.mark.slow
def test_a_wrong_recall_batch_costs_only_its_own_tests(tmp_path):
    """The target taken from the last token: recall_batch's tests lose points, train_recall's
    first updates keep theirs (its calls of recall_batch answered with the reference's
    batches)."""
    result = _graded_mutant(tmp_path, "label_from_last_token")
    lost = {t.name for t in result.tests if t.score < t.max_score and t.outcome != "skipped"}
    assert lost == {"test_recall_batch"}, lost
    first = next(t for t in result.tests if t.name == "test_train_recall_first_updates")
    assert first.score == first.max_score > 0

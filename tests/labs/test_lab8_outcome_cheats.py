"""lab8 Part B: the training run graded by outcome scores the forecasts the grader computes from
the parameters train_forecaster returns (the reference's forward pass on the lab's fold), never a
figure the function reports. A train_forecaster that returns the parameters it was given with a
made-up falling loss curve, and one that returns parameters of the wrong shape, score nothing."""

import pytest

from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .grading import grade_lab_source

LAB = get_lab("lab8")
REFERENCE = course_root() / "fixtures" / "submissions" / LAB.name / "reference" / LAB.filename
TEST = "test_forecaster_training_reproduces_the_lesson"
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

MADE_UP_HISTORY = '''

def _history(n, epochs):
    updates = epochs * ((n + 127) // 128)
    return {"loss": np.array([0.5 * 0.9 ** u for u in range(updates)]),
            "grad_norm": np.ones(updates)}
'''

CHEATS = {
    # nothing trained: the parameters given back, with a loss curve of a model that learnt
    "untrained": MADE_UP_HISTORY + '''

def train_forecaster(params, X, Y, epochs, seed):
    return {k: v.detach().clone() for k, v in params.items()}, _history(len(X), epochs)
''',
    # parameters of the wrong shape: the LSTM's input weights of one layer dropped
    "wrong_shape": MADE_UP_HISTORY + '''

def train_forecaster(params, X, Y, epochs, seed):
    kept = {k: v.detach().clone() for k, v in params.items() if k != "lstm.weight_ih_l0"}
    kept["lstm.weight_ih_l1"] = kept["lstm.weight_ih_l1"][:, :16]
    return kept, _history(len(X), epochs)
''',
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_a_cheat_scores_nothing_on_the_training_run(tmp_path, name):
    source = REFERENCE.read_text(encoding="utf-8") + CHEATS[name]
    result = grade_lab_source(tmp_path, LAB, source)
    run = next(t for t in result.tests if t.name == TEST)
    assert run.max_score > 0 and run.score == 0, run.message
    assert "RMSE of the per-window model" in run.message, run.message

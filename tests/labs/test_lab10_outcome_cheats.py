"""lab10: the training runs graded by outcome score what the grader measures of the trained
parameters, never the figures train_recall returns. A train_recall that trains nothing and
returns the README's figures, one that builds the model but never steps it and one that trains a
model of the wrong shape score nothing on the three runs, and the feedback names the figures that
disagree. One that trains for real but returns a made-up curve scores nothing on the run that
goes to its end; the two runs the grader stops once their band is reached return nothing, so
they score the genuine training the grader measured, as the reference's do."""

import pytest

from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .test_lab10_grading import OUTCOME_TESTS

LAB = get_lab("lab10")
REFERENCE = course_root() / "fixtures" / "submissions" / LAB.name / "reference" / LAB.filename
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

# The README's figures (seed 0): the one the band wants for each run.
README_FIGURES = '''

def _readme_figures(kind, forget_bias, updates):
    """A loss curve falling from chance, whose 'solved' follows the README's rule."""
    losses = [2.08 * 0.9 ** u for u in range(updates)]
    solved = next((u for u in range(10, updates + 1) if sum(losses[u - 10:u]) / 10 < 0.05), -1)
    accuracy = 0.118 if kind == "lstm" and forget_bias < 2 else 0.991
    return accuracy, solved, losses
'''

CHEATS = {
    # the cheat of the tracker issue: nothing trained, the README's figures returned
    "made_up": README_FIGURES + '''

def train_recall(kind, lag, forget_bias=1.0, updates=400, seed=0):
    return _readme_figures(kind, forget_bias, updates)
''',
    # the README's model, built and never trained, with the reference's accuracy
    "untrained": README_FIGURES + '''

def train_recall(kind, lag, forget_bias=1.0, updates=400, seed=0):
    torch.manual_seed(seed)
    nn.Embedding(9, 16)
    DiagLinearRecurrence(16, 64, N=64) if kind == "lin" else KINDS[kind](16, 64, batch_first=True)
    nn.Linear(64, 8)
    return _readme_figures(kind, forget_bias, updates)
''',
    # a real training run, returned with a curve that follows the rule but not the parameters
    "made_up_curve": README_FIGURES + '''

_trained = train_recall


def train_recall(kind, lag, forget_bias=1.0, updates=400, seed=0):
    accuracy, _, _ = _trained(kind, lag, forget_bias, updates, seed)
    _, solved, losses = _readme_figures(kind, forget_bias, updates)
    return accuracy, solved, losses
''',
}

# a real training run of a model half the README's width: parameters of the wrong shape
WRONG_SHAPE = (("core = KINDS[kind](16, 64, batch_first=True)\n        head = nn.Linear(64, 8)",
                "core = KINDS[kind](16, 32, batch_first=True)\n        head = nn.Linear(32, 8)"),
               ("core: nn.Module = DiagLinearRecurrence(16, 64, N=64)",
                "core: nn.Module = DiagLinearRecurrence(16, 64, N=32)"))


def cheat_source(name: str) -> str:
    source = REFERENCE.read_text(encoding="utf-8")
    if name == "wrong_shape":
        for old, new in WRONG_SHAPE:
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        return source
    return source + CHEATS[name]


# the runs the grader stops at the first checkpoint that reaches their band (the reference's do)
STOPPED = ("test_lstm_forget_bias_5_solves_lag_25", "test_diagonal_linear_solves_lag_100")


@pytest.mark.parametrize("name", [*CHEATS, "wrong_shape"])
def test_a_cheat_scores_nothing_on_the_training_runs(tmp_path, name):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / LAB.filename).write_text(cheat_source(name), encoding="utf-8")
    result = grade(folder, LAB.name, device="cpu", inprocess=True)
    runs = {t.name: t for t in result.tests if t.name in OUTCOME_TESTS}
    assert set(runs) == set(OUTCOME_TESTS)
    if name == "made_up_curve":
        stopped = {n: runs.pop(n) for n in STOPPED}
        assert all(t.score == t.max_score for t in stopped.values()), [
            (t.name, t.message) for t in stopped.values()]
    assert {n: t.score for n, t in runs.items()} == dict.fromkeys(runs, 0.0), [
        (t.name, t.message) for t in runs.values()]
    for run in runs.values():
        assert "disagree with the grader's measurements" in run.message, run.message
        if name == "wrong_shape":
            assert "has shape" in run.message and "not measured" in run.message, run.message
        elif name == "made_up_curve":
            assert "returned," in run.message and "measured" in run.message, run.message
        else:
            assert "a torch optimiser stepped 0 times" in run.message, run.message

"""The submission's time budget (once spent, no more student calls; those tests score 0) and the
grader's own (once spent, failures are no longer explained; no score changes)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rnngrade.cli import build_parser
from rnngrade.grading import budget as budget_module
from rnngrade.grading.budget import Budget, BudgetedRunner
from rnngrade.grading.checker import Checker
from rnngrade.grading.engine import grade
from rnngrade.harness.runner.base import TIMEOUT, CallResult, StudentError, Usage
from rnngrade.paths import course_root
from rnngrade.results.model import BUDGET_MESSAGE, FailureKind

REFERENCE = course_root() / "fixtures/submissions/lab1/reference/rnn.py"


class FakeRunner:
    def __init__(self, fail_with: StudentError | None = None) -> None:
        self.timeouts: list[float | None] = []
        self.fail_with = fail_with

    def call(self, function, args=(), kwargs=None, *, timeout=None, head=None):
        self.timeouts.append(timeout)
        if self.fail_with is not None:
            raise self.fail_with
        return CallResult(value=1)


def test_calls_get_at_most_the_time_left_and_none_once_it_is_spent():
    runner = FakeRunner()
    budgeted = BudgetedRunner(runner, Budget(5.0), call_limit=10.0)
    budgeted.call("f")
    assert runner.timeouts[-1] == 5.0  # the budget is shorter than the per-call limit
    budgeted.call("f", timeout=1.0)
    assert runner.timeouts[-1] == 1.0  # a shorter timeout is kept
    generous = BudgetedRunner(runner, Budget(60.0), call_limit=10.0)
    generous.call("f")
    assert runner.timeouts[-1] is None  # the runner's own limit applies
    spent = BudgetedRunner(runner, Budget(0.0))
    with pytest.raises(StudentError) as caught:
        spent.call("f")
    assert caught.value.kind == FailureKind.BUDGET and caught.value.message == BUDGET_MESSAGE
    assert len(runner.timeouts) == 3  # the refused call never reached the student


class FakeTime:
    """``time`` for the budget module: the real clock plus ``offset`` seconds, moved on by hand
    (a slow grader or a long call without waiting for one)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.offset


@pytest.fixture
def clock(monkeypatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(budget_module, "time", fake)
    return fake


def test_a_timeout_cut_short_by_the_budget_is_reported_as_the_budget():
    budget = Budget(10.0)

    class UsesItAll(FakeRunner):
        def call(self, function, args=(), kwargs=None, *, timeout=None, head=None):
            self.timeouts.append(timeout)
            error = StudentError(TIMEOUT, "f used 10 s of CPU time")
            error.usage = Usage(10.0, 10.5)  # it ran until the budget's end and was stopped
            raise error

    with pytest.raises(StudentError) as caught:
        BudgetedRunner(UsesItAll(), budget, call_limit=30.0).call("f")
    assert caught.value.kind == FailureKind.BUDGET and budget.spent
    own = FakeRunner(StudentError(TIMEOUT, "f took longer than 10 s"))
    with pytest.raises(StudentError) as caught:
        BudgetedRunner(own, Budget(60.0), call_limit=10.0).call("f")
    assert caught.value.kind == TIMEOUT  # its own per-call limit: an ordinary timeout


class Measured(FakeRunner):
    """Each call reports that it cost ``usage``."""

    def __init__(self, usage: Usage) -> None:
        super().__init__()
        self.usage = usage

    def call(self, function, args=(), kwargs=None, *, timeout=None, head=None):
        self.timeouts.append(timeout)
        return CallResult(value=1, usage=self.usage)


def test_the_budget_counts_cpu_time_so_a_busy_machine_does_not_spend_it():
    """Calls that each used 1 s of CPU time and ran a second or so (the rest of a long wall
    clock spent waiting for a busy CPU, not counted in ``waited``): ten of them fit a 10.5 s
    budget, whatever the wall clock said; the eleventh is refused."""
    budget = Budget(10.5)
    budgeted = BudgetedRunner(Measured(Usage(cpu=1.0, waited=1.2)), budget, call_limit=10.0)
    for _ in range(10):
        budgeted.call("f")
    assert budget.cpu == 10.0 and not budget.spent
    budgeted.call("f")
    assert budgeted.runner.timeouts[-1] == 0.5  # the CPU time left
    with pytest.raises(StudentError) as caught:
        budgeted.call("f")
    assert caught.value.kind == FailureKind.BUDGET and budget.spent


def test_code_that_sleeps_spends_the_budget_through_its_wall_clock_fallback():
    budget = Budget(10.0)
    budgeted = BudgetedRunner(Measured(Usage(cpu=0.01, waited=5.0)), budget, call_limit=10.0)
    for _ in range(4):  # 20 s waited: twice the budget
        budgeted.call("f")
    with pytest.raises(StudentError) as caught:
        budgeted.call("f")
    assert caught.value.kind == FailureKind.BUDGET and budget.cpu < 1


def test_only_the_submissions_calls_are_charged_to_it(clock):
    budget = Budget(10.0, grader_seconds=30.0)

    class Slow(FakeRunner):
        def call(self, function, args=(), kwargs=None, *, timeout=None, head=None):
            self.timeouts.append(timeout)
            clock.offset += 4  # the submission's code runs 4 s
            return CallResult(value=1)

    budgeted = BudgetedRunner(Slow(), budget, call_limit=60.0)
    budgeted.call("f")
    clock.offset += 1000  # the grader works between calls (a reference, a diagnosis)
    budgeted.call("f")
    assert 8 <= budget.cpu < 9 and budget.left() > 1 and not budget.spent
    assert budget.grader_used() >= 1000 and budget.grader_left() < 0
    with budget.grader_work():  # the grader's own calls (a retry with stand-ins)
        for _ in range(5):
            budgeted.call("f")
    assert budget.cpu < 9 and not budget.spent  # 20 s more, none of it the submission's
    budgeted.call("f")
    assert budget.left() < 0
    with pytest.raises(StudentError) as caught:
        budgeted.call("f")
    assert caught.value.kind == FailureKind.BUDGET
    with budget.grader_work():  # a spent submission's budget does not refuse the grader
        assert budgeted.call("f").value == 1


def test_a_diagnosis_stops_when_the_graders_time_runs_out(clock):
    budget = Budget(10.0, grader_seconds=5.0)
    steps: list[int] = []

    def explain() -> None:
        for step in range(4):
            budget.check_time()
            steps.append(step)
            clock.offset += 2

    assert not budget.diagnose(explain) and steps == [0, 1, 2] and budget.skipped == 1
    assert not budget.diagnose(lambda: steps.append(99)) and 99 not in steps  # not started
    assert budget.skipped == 2
    assert budget.timings()["diagnoses_skipped"] == 2
    assert Budget(7.0).grader_seconds == budget_module.GRADER_FACTOR * 7.0


def sleepy(tmp_path: Path, seconds: float) -> Path:
    """The lab1 reference, sleeping ``seconds`` in every call of every function."""
    folder = tmp_path / "sleepy"
    folder.mkdir(parents=True)
    source = REFERENCE.read_text()
    for name in ("softmax", "rnn_cell_forward", "rnn_forward", "rnn_forward_batch"):
        source = source.replace(f"def {name}(", f"def _{name}_inner(")
        source += (f"\n\ndef {name}(*args, **kwargs):\n    import time\n"
                   f"    time.sleep({seconds})\n    return _{name}_inner(*args, **kwargs)\n")
    (folder / "rnn.py").write_text(source)
    return folder


def test_a_slow_submission_stops_at_its_budget_and_loses_the_tests_not_run(tmp_path):
    started = time.monotonic()
    result = grade(sleepy(tmp_path, 0.3), "lab1", device="cpu", inprocess=True, budget=2.0)
    elapsed = time.monotonic() - started
    assert elapsed < 30, elapsed  # without the budget: one 0.3 s sleep per call, every case
    assert result.max_score == 24 and result.score < 12
    not_run = [t for t in result.tests if t.score == 0 and BUDGET_MESSAGE in t.message]
    assert not_run and all(t.max_score > 0 for t in not_run)
    assert any(BUDGET_MESSAGE in note for note in result.notes)
    generous = grade(sleepy(tmp_path / "b", 0.0), "lab1", device="cpu", inprocess=True,
                     budget=600.0)
    assert generous.score == 24 and not any(BUDGET_MESSAGE in n for n in generous.notes)


@pytest.mark.slow  # the sandbox: a call is cut short by the budget, not by its own 10 s limit
def test_a_sandboxed_submission_sleeping_under_the_call_limit_ends_at_its_budget(tmp_path):
    from rnngrade.sandbox import SandboxUnavailable

    started = time.monotonic()
    try:
        result = grade(sleepy(tmp_path, 9.0), "lab1", device="cpu", budget=15.0)
    except SandboxUnavailable:
        pytest.skip("no sandbox on this machine")
    if result.status == "grader_error" and "sandbox" in result.grader_detail.lower():
        pytest.skip("no sandbox on this machine")
    assert time.monotonic() - started < 90
    assert result.score < 6 and result.max_score == 24


def test_budget_option_on_grade_ci_and_batch():
    parser = build_parser()
    assert parser.parse_args(["grade", "x", "--lab", "lab1", "--out", "o",
                              "--budget", "12.5"]).budget == 12.5
    assert parser.parse_args(["ci", "--budget", "30"]).budget == 30.0
    assert parser.parse_args(["batch", "x", "--lab", "lab1", "--out", "o",
                              "--budget", "5"]).budget == 5.0
    assert parser.parse_args(["grade", "x", "--lab", "lab1", "--out", "o"]).budget is None
    for bad in ("0", "-1", "soon", "inf"):
        with pytest.raises(SystemExit):
            parser.parse_args(["grade", "x", "--lab", "lab1", "--out", "o", "--budget", bad])


def raising_trainer(tmp_path: Path) -> Path:
    """The lab9 reference whose ``train_tbptt`` raises at once on every call."""
    folder = tmp_path / "raising"
    folder.mkdir(parents=True)
    source = (course_root() / "fixtures/submissions/lab9/reference/charlm.py").read_text()
    (folder / "charlm.py").write_text(
        source + "\n\ndef train_tbptt(*args, **kwargs):\n"
                 "    raise RuntimeError('training is not written yet')\n")
    return folder


def test_the_score_does_not_depend_on_how_long_the_grader_takes(tmp_path, clock, monkeypatch):
    """A slow diagnosis (the grader's clock jumps by far more than the submission's whole budget
    each time it sets out to name a mistake) costs the correct functions nothing: every test but
    the four of the raising ``train_tbptt`` gets full marks, as with a fast diagnosis, and those
    four keep their verdicts, their hints left out with a note."""
    lab_budget = 300.0  # lab9's budget_seconds
    original = Checker._diagnose_error

    def slow_diagnosis(self, *args, **kwargs):
        clock.offset += 10 * lab_budget  # the diagnosis of a loaded machine, much exaggerated
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Checker, "_diagnose_error", slow_diagnosis)
    result = grade(raising_trainer(tmp_path), "lab9", device="cpu", inprocess=True,
                   outcome=False)
    training = [t for t in result.tests if t.name.startswith("test_train_tbptt")]
    assert len(training) == 4 and all(t.score == 0 for t in training)
    others = [t for t in result.tests if t not in training]
    assert all(t.score == t.max_score for t in others), [
        (t.name, t.message) for t in others if t.score < t.max_score]
    assert result.score == result.max_score - sum(t.max_score for t in training) > 0
    assert not any(BUDGET_MESSAGE in note for note in result.notes)
    skipped = budget_module.DIAGNOSIS_SKIPPED
    assert all(skipped in t.message and not t.hint for t in training)
    assert "training is not written yet" in training[0].message  # the verdict is kept
    assert budget_module.DIAGNOSIS_SKIPPED_NOTE in result.notes
    timings = result.timings
    assert timings["submission_cpu_seconds"] < timings["submission_budget"] == lab_budget
    assert timings["grader_seconds"] > timings["grader_budget"]
    assert timings["diagnoses_skipped"] >= 4


def test_the_retry_with_a_correct_callee_runs_on_the_graders_time(tmp_path, clock, monkeypatch):
    """lab1 with a wrong ``rnn_cell_forward``: each ``rnn_forward`` check is retried with a
    correct cell in its place. The calls of that retry (here each taking far longer than the
    whole budget) are the grader's: nothing after them is cut short, no point is lost."""
    from rnngrade.harness.runner.inprocess import InProcessRunner

    folder = tmp_path / "wrong_cell"
    folder.mkdir()
    (folder / "rnn.py").write_text(REFERENCE.read_text().replace(
        "a_next = np.tanh(pre_activation)", "a_next = np.tanh(2 * pre_activation)"))
    original = InProcessRunner.call_helper

    def slow_retry(self, helper, *args, **kwargs):
        if helper == "call_each":  # only the retry asks: is the submission's callee wrong?
            clock.offset += 3000
        return original(self, helper, *args, **kwargs)

    monkeypatch.setattr(InProcessRunner, "call_helper", slow_retry)
    result = grade(folder, "lab1", device="cpu", inprocess=True, budget=300.0)
    cell = [t for t in result.tests if t.name.startswith("test_rnn_cell_forward")]
    assert next(t for t in cell if t.name == "test_rnn_cell_forward_random").score == 0
    others = [t for t in result.tests if t not in cell]
    assert all(t.score == t.max_score for t in others), [
        (t.name, t.message) for t in others if t.score < t.max_score]
    assert any("in place of yours" in note for note in result.notes)  # the retry was made
    assert not any(BUDGET_MESSAGE in t.message for t in result.tests)
    assert result.timings["submission_cpu_seconds"] < 300 < result.timings["grader_seconds"]

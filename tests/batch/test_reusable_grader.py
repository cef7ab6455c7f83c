"""The long-lived grader: the same results as one pytest session per submission, and a memo of
trusted values whose key cannot confuse two computations."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from rnngrade.grading.engine import Grader, grade_isolated
from rnngrade.grading.memo import ExpectationMemo
from rnngrade.grading.session import report_sections
from rnngrade.harness.runner.base import EXCEPTION, StudentError
from rnngrade.paths import course_root

from ..synthetic import make_class

SUBMISSIONS = course_root() / "fixtures" / "submissions"
LAB1, BAD = SUBMISSIONS / "lab1", SUBMISSIONS / "bad"
FAST = [LAB1 / "reference", LAB1 / "stub", LAB1 / "buggy_feeds_a0", BAD / "import_error"]
EVERY = sorted(LAB1.iterdir()) + sorted(BAD.iterdir())


def comparable(result) -> dict:
    """A result without its timings."""
    data = result.to_dict()
    for key in ("execution_time", "graded_at"):
        data.pop(key)
    data["timings"] = {k: v for k, v in data["timings"].items() if not k.endswith("_seconds")}
    for test in data["tests"]:
        test.pop("seconds")
        for case in test["cases"]:
            case.pop("seconds")
    return data


@pytest.fixture(scope="module")
def grader():
    with Grader("lab1", device="cpu", inprocess=True) as grader:
        yield grader


def assert_same_as_fresh_sessions(grader: Grader, samples: list) -> None:
    # Twice through the reusable grader (memo cold, then warm), against fresh sessions.
    first = {path.name: comparable(grader.grade(path)) for path in samples}
    second = {path.name: comparable(grader.grade(path)) for path in reversed(samples)}
    for path in samples:
        fresh = comparable(grade_isolated(path, "lab1", device="cpu", inprocess=True))
        assert first[path.name] == fresh, path.name
        assert second[path.name] == fresh, path.name
    assert grader.memo.hits > 0


def test_reusable_grader_gives_the_per_submission_results(grader):
    assert_same_as_fresh_sessions(grader, FAST)


@pytest.mark.slow
def test_reusable_grader_gives_the_per_submission_results_on_every_sample(grader):
    assert_same_as_fresh_sessions(grader, EVERY)


def test_nothing_leaks_from_one_submission_into_the_next(grader, tmp_path):
    stub, reference = LAB1 / "stub", LAB1 / "reference"
    assert grader.grade(stub).score == 0
    assert grader.grade(reference).score == grader.grade(reference).max_score
    assert grader.grade(stub).score == 0
    noisy = tmp_path / "rnn.py"
    noisy.write_text((reference / "rnn.py").read_text() + "\nprint('hello ' * 10000)\n")
    assert grader.grade(noisy).score == grader.rubric.max_points
    item = grader._session.items[0]
    assert item.user_properties == [] or len(item.user_properties) < 5
    assert len(report_sections(item)) <= 3


def test_memo_key_sees_closures_arguments_and_code():
    memo = ExpectationMemo()
    x = np.arange(6.0).reshape(2, 3)

    def scaled(k):
        return lambda m, a: a * k

    key = memo.key("check", scaled(2), (x,))
    assert key == memo.key("check", scaled(2), (x.copy(),))
    assert key != memo.key("check", scaled(3), (x,))
    assert key != memo.key("check", scaled(2), (x.astype(np.float32),))
    assert key != memo.key("check", scaled(2), (x.T.copy(),))
    assert key != memo.key("other check", scaled(2), (x,))
    assert key != memo.key("check", lambda m, a: a * 2, (x,))
    assert memo.key("check", scaled(2), (torch.ones(2),)) != memo.key(
        "check", scaled(2), (torch.ones(2, dtype=torch.float64),))
    assert memo.key("check", scaled(2), (object(),)) is None  # unknown objects: no memo
    assert memo.key("check", scaled(np.random.default_rng(0)), (x,)) is None


def test_a_gradient_check_probe_stays_digestible_so_mutants_results_are_memoised():
    """The probe of ``expect_gradient_check`` is what a mutant's result is keyed by: it must
    not capture the checker (the student's proxy cannot be digested), or every mutant's
    central differences are computed again for every submission."""
    from rnngrade.grading.chained import expect_gradient_check
    from rnngrade.harness.checks.gradcheck import OutputLoss
    from rnngrade.harness.checks.tolerance import FLOAT64

    class Check:  # what the function needs of a checker; keeps the probe it is given
        memo = ExpectationMemo()
        student = object()

        def expect(self, name, probe, args, **options):
            self.probe = probe

    x = np.arange(1.0, 7.0).reshape(2, 3)
    check = Check()
    expect_gradient_check(check, None, "f", lambda m, a: {"dx": 2 * a},
                          OutputLoss("f", 1, ((0, np.ones((2, 3))),)), (x,),
                          {"dx": (x, None)}, np.random.default_rng(0), FLOAT64)
    assert check.memo.key("f gradient check", check.probe, (x,)) is not None


def test_memo_returns_copies_and_replays_random_draws():
    memo = ExpectationMemo()
    calls = []

    def draw():
        calls.append(1)
        return np.random.standard_normal(3) + torch.randn(1).item()

    key = memo.key("draw", draw, ())
    np.random.seed(1)
    torch.manual_seed(1)
    first = memo.compute(key, "reference", draw)
    after_first = (np.random.standard_normal(), torch.randn(1).item())
    np.random.seed(1)
    torch.manual_seed(1)
    again = memo.compute(key, "reference", draw)
    after_again = (np.random.standard_normal(), torch.randn(1).item())
    assert len(calls) == 1 and np.array_equal(first, again)
    assert after_first == after_again  # the hit left the generators where the draw had
    np.random.seed(2)
    memo.compute(key, "reference", draw)  # another state: computed again
    assert len(calls) == 2
    again[0] = 99.0
    np.random.seed(1)
    torch.manual_seed(1)
    assert memo.compute(key, "reference", draw)[0] != 99.0  # stored values are copies


def test_memo_copies_keep_shared_arrays_shared_and_count_them_once():
    """A forward pass's caches all hold the same parameters: the stored copy does too (as
    deepcopy would), apart from the original, and its size counts them once."""
    memo = ExpectationMemo()
    weights = np.ones((100, 100))
    value = [(np.zeros(2), {"W": weights}) for _ in range(10)]
    key = memo.key("shared", np.ones, ())
    memo.compute(key, "reference", lambda: value)
    assert memo.bytes < 2 * weights.nbytes  # not 10 copies
    copy = memo.compute(key, "reference", lambda: value)
    assert all(c[1]["W"] is copy[0][1]["W"] for c in copy)
    assert copy[0][1]["W"] is not weights and copy[0][0] is not copy[1][0]
    copy[0][1]["W"][0, 0] = 5.0
    assert weights[0, 0] == 1.0 and memo.compute(key, "reference", lambda: value)[3][1]["W"][
        0, 0] == 1.0


def test_memo_remembers_exceptions_and_stays_bounded():
    memo = ExpectationMemo(max_bytes=64 * 1024)

    def boom():
        raise ValueError("mutant raised")

    key = memo.key("boom", boom, ())
    for _ in range(2):
        with pytest.raises(ValueError, match="mutant raised"):
            memo.compute(key, "mutant m", boom)
    assert memo.hits == 1
    runs = []

    def fails_like_a_submission():  # a mutant's error: raised as the runner's StudentError
        runs.append(1)
        raise StudentError(EXCEPTION, "IndexError: list index out of range", function="f")

    key = memo.key("student error", fails_like_a_submission, ())
    for _ in range(3):
        with pytest.raises(StudentError, match="list index") as raised:
            memo.compute(key, "mutant m", fails_like_a_submission)
        assert raised.value.kind == EXCEPTION and raised.value.function == "f"
    assert len(runs) == 1  # remembered, not run again for every submission
    for i in range(200):
        value = np.zeros(1000)
        memo.compute(memo.key("big", np.zeros, (i,)), "reference", lambda v=value: v)
    assert memo.bytes <= memo.max_bytes and len(memo) < 200


def test_closed_grader_refuses_to_grade():
    grader = Grader("lab1", device="cpu", inprocess=True)
    grader.close()
    grader.close()
    with pytest.raises(Exception, match="closed"):
        grader.grade(LAB1 / "reference")


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_memory_stays_flat_over_many_submissions(tmp_path):
    samples = make_class(tmp_path / "class", "lab1", 60, bad=True)
    with Grader("lab1", device="cpu", inprocess=True) as grader:
        for sample in samples:  # warm: every test and mutant seen, memo filled
            grader.grade(sample.path)
        start = _rss_mib()
        for _ in range(5):
            for sample in samples:
                grader.grade(sample.path)
        grown = _rss_mib() - start
    assert grown < 40, f"RSS grew by {grown:.0f} MiB over {5 * len(samples)} submissions"


def test_only_the_session_driver_touches_pytest_internals():
    package = Path(__file__).resolve().parents[2] / "graders" / "rnngrade"
    private = re.compile(r"\b_pytest\b|\._report_sections\b|\._do_configure\b|"
                         r"\._ensure_unconfigure\b|\b_prepareconfig\b")
    users = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if private.search(p.read_text()))
    assert users == ["grading/session.py"]

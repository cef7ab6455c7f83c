"""lab9: the README's figures from the reference (make_log, the floors, the baselines, the
model's size and first loss, the first updates), and the training run's test listed as not run
when the training runs are off. The training run itself is a slow test; the reference, stub and
mutants are graded by test_lab_grading.py, the training run's test by `rnngrade validate --lab
lab9`."""

import math

import numpy as np
import pytest

from rnngrade.grading.lab_assets import load_lab_assets
from rnngrade.labs import get_lab

from .grading import graded

LAB = get_lab("lab9")


@pytest.fixture(scope="module")
def ref():
    return load_lab_assets("lab9").reference


@pytest.fixture(scope="module")
def log(ref):
    text = ref.make_log(1500, 0)
    chars, stoi = ref.build_vocab(text)
    train, val = ref.split_train_val(ref.encode(text, stoi))
    return text, chars, train, val


def test_make_log_reproduces_the_readme_figures(ref, log):
    text, chars, train, val = log
    assert (len(text), len(chars), len(train), len(val)) == (46196, 37, 41577, 4619)
    assert text.startswith("C1 vib 3.0 mm/s operator check ok /C1\n"
                           "P1 temp 80.7 C after restart high /P1\nF2 pres 4.0 bar ok /F2\n")
    lines = text.strip().split("\n")
    assert round(100 * sum(line.split()[-2] == "ok" for line in lines) / len(lines)) == 73
    assert all(ref.LINE.match(line) for line in lines)
    counts = [round((hi - lo) * 10) + 1 for _, lo, hi, _ in ref.QUANTITIES.values()]
    per_line, per_char, guessed = ref.entropy_floor(8, 3, counts, [1 / 7] * 4 + [3 / 7],
                                                    len(text) / 1500)
    assert (round(per_line, 2), round(per_char, 3), round(guessed, 3)) == (9.55, 0.310, 0.378)


def test_the_baselines_size_and_first_loss(ref, log):
    _, chars, train, val = log
    train_text, val_text = ("".join(chars[i] for i in part) for part in (train, val))
    losses = [round(ref.ngram_validation_loss(train_text, val_text, k), 3) for k in (1, 2, 3, 5)]
    assert losses == [3.201, 1.457, 0.653, 0.476]
    params = ref.init_params(128, 37, np.random.default_rng(0))
    assert sum(p.size for p in params.values()) == 26021
    X, Y = train[:1024].reshape(32, 32), train[1:1025].reshape(32, 32)
    first = ref.char_rnn_loss_and_grads(params, X, Y, np.zeros((128, 32)))[0]
    assert round(first, 3) == round(math.log(37), 3) == 3.611


def test_the_first_updates_match_the_readme(ref, log):
    _, chars, train, _ = log
    sx, sy = ref.make_streams(train, 32)
    _, history = ref.train_tbptt(ref.init_params(128, 37, np.random.default_rng(0)), sx, sy,
                                 32, 2)
    assert history["loss"][0] == pytest.approx(3.6109175893, abs=1e-10)
    assert history["grad_norm"][0] == pytest.approx(0.2082015234, abs=1e-10)
    assert list(history["chunk"]) == [0, 1] and history["chunk"].dtype == np.int64


def test_without_the_training_run_its_test_is_listed_as_not_run_with_its_points():
    """The reference graded as test_lab_grading.py grades it (lab9/quick_cases.yaml: outcome
    off); the stub with the training run on, which fails at once."""
    result = graded(LAB.name, "reference", False)
    run = next(t for t in result.tests if t.name == "test_training_reaches_band")
    assert run.outcome == "skipped" and run.max_score == 0
    assert "not run" in run.message and "5 points" in run.message
    stub = graded(LAB.name, "stub", True)
    assert stub.score == 0 and stub.max_score == result.max_score + 5
    assert all("not implemented yet" in t.message for t in stub.tests)


@pytest.mark.slow
def test_the_training_run_reaches_the_band(ref, log):
    _, chars, train, val = log
    sx, sy = ref.make_streams(train, 32)
    params, history = ref.train_tbptt(ref.init_params(128, 37, np.random.default_rng(0)), sx,
                                      sy, 32, 500)
    assert history["loss"][49] == pytest.approx(2.3770052831, abs=1e-9)
    assert round(ref.evaluate_loss(params, val), 3) == 0.391
    assert np.max(history["grad_norm"]) < 2
    audit = ref.audit(ref.sample_text(params, chars, 6000, 0.5, np.random.default_rng(1)))
    assert audit["lines"] == 217 and audit["well-formed"] == 1.0
    assert round(audit["status agrees"], 3) == 0.977
    assert round(audit["closing tag matches"], 3) == 0.217

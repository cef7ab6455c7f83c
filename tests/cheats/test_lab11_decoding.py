"""Lab 11's tests of greedy_decode_batch graded by outcome measure the decoding: a decoding that
feeds BOS at every step and draws its attention on the anti-diagonal by hand is worth nothing
(the grader replays the student's tokens on the reference model, ``measured_decoding``), and the
feedback says the returned figures disagree with the measured ones. The honest decoding counts
as it is."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from rnngrade.diagnosis.mutants import load_mutant_table, load_source_as_module, strip_markers
from rnngrade.labs import get_lab
from tests.cheats.fixtures import GREEDY_FABRICATED, with_function

LAB = get_lab("lab11")
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def suite():
    path = next(LAB.suite_dir().glob("test_*_hidden.py"))
    spec = importlib.util.spec_from_file_location("_lab11_hidden_for_cheats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_of(source: str, name: str):
    return load_source_as_module(source, name)


@pytest.fixture(scope="module")
def reference():
    return module_of(strip_markers(LAB.solution_path().read_text(encoding="utf-8")),
                     "_lab11_reference_for_cheats")


@pytest.fixture(scope="module")
def batch(reference, suite):
    params = suite.random_params(reference, np.random.default_rng(4), True,
                                 dtype=torch.float32, scale=1.5)
    src, _, _, lens = reference.make_reversal_batch(20, np.random.default_rng(5), 3, 12)
    return params, src, lens


def test_the_honest_decoding_is_measured_as_returned(suite, reference, batch):
    params, src, lens = batch
    tokens, alphas = reference.greedy_decode_batch(params, src, lens, 13, True)
    got, measured, why = suite.measured_decoding(reference, params, src, lens, tokens, alphas,
                                                 True)
    assert why is None and torch.equal(got, tokens)
    assert torch.allclose(measured, alphas.double(), atol=1e-6)


def test_a_fabricated_decoding_is_worth_nothing(suite, reference, batch):
    params, src, lens = batch
    cheat = module_of(with_function(LAB, GREEDY_FABRICATED), "_lab11_cheat")
    tokens, alphas = cheat.greedy_decode_batch(params, src, lens, 13, True)
    got, measured, why = suite.measured_decoding(reference, params, src, lens, tokens, alphas,
                                                 True)
    assert got is None and measured is None
    assert "disagree with the measured" in why


def test_drawn_weights_beside_honest_tokens_are_worth_nothing(suite, reference, batch):
    params, src, lens = batch
    tokens, _ = reference.greedy_decode_batch(params, src, lens, 13, True)
    _, drawn = module_of(with_function(LAB, GREEDY_FABRICATED),
                         "_lab11_cheat_weights").greedy_decode_batch(params, src, lens, 13, True)
    _, _, why = suite.measured_decoding(reference, params, src, lens, tokens, drawn, True)
    assert "attention weights greedy_decode_batch returned disagree" in why


def test_teacher_forcing_is_not_free_running(suite, reference, batch):
    params, src, lens = batch
    table = {m.name: m for m in load_mutant_table(LAB.mutants_path()).mutants}
    forced = module_of(strip_markers(table["greedy_teacher_forced"].apply(
        LAB.solution_path().read_text(encoding="utf-8"))), "_lab11_forced")
    tokens, alphas = forced.greedy_decode_batch(params, src, lens, 13, True)
    assert suite.measured_decoding(reference, params, src, lens, tokens, alphas, True)[0] is None


@pytest.mark.slow
def test_the_cheat_scores_nothing_on_the_outcome_tests(tmp_path):
    """The hidden suite's two decoding tests graded by outcome, run on the cheat: both fail and
    say why (before, the cheat passed both)."""
    import subprocess
    import sys

    from rnngrade.paths import course_root

    cheat = tmp_path / "seq2seq.py"
    cheat.write_text(with_function(LAB, GREEDY_FABRICATED), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(LAB.suite_dir()), "-q", "-p", "no:randomly",
         "-p", "no:xdist", "-p", "no:cacheprovider", "--submission", str(cheat), "-k",
         "exposure_bias or alignment", "-o", "addopts=", "--tb=line", "-rf"],
        capture_output=True, text=True, cwd=course_root(), timeout=1800)
    out = run.stdout + run.stderr
    assert "2 failed" in out, out[-3000:]
    assert out.count("disagree with the measured") >= 2, out[-3000:]

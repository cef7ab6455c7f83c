"""Lab 11's reference reproduces the course documents' figures (the lab README's): the batch
rows, the parameter counts, the first losses; the grader's helpers (graders/suites/lab11/
helpers.py) hold no model, their recorded training answers a loop with a broken model as the
reference, and their beam search is lab 6's. The training runs and the
figures they give (the no-attention table, beam against greedy, the alignment) are slow tests."""

import ast
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rnngrade.diagnosis.mutants import load_mutant_table, load_source_as_module, strip_markers
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab

LAB = get_lab("lab11")
pytestmark = pytest.mark.usefixtures("one_thread")  # the README's figures: one thread


@pytest.fixture(scope="module")
def m():
    source = strip_markers(LAB.solution_path().read_text(encoding="utf-8"))
    return load_source_as_module(source, "_lab11_reference_figures")


@pytest.fixture(scope="module")
def helpers():
    """The lab's helpers file as the grader builds it (running it by hand would register its
    helpers a second time): its namespace, through one of its functions."""
    return SimpleNamespace(**lab_helpers(LAB).registry.helpers["train_alone"].__globals__)


def test_batch_rows(m):
    src, dec_in, tgt, lens = m.make_reversal_batch(3, np.random.default_rng(0), 3, 12)
    assert lens.tolist() == [11, 9, 8] and src.dtype == lens.dtype == torch.int64
    assert src.tolist() == [[2, 3, 0, 0, 0, 1, 8, 6, 9, 5, 6, 10],
                            [9, 7, 6, 5, 5, 9, 2, 8, 6, 10, 10, 10],
                            [0, 3, 8, 5, 0, 7, 7, 8, 10, 10, 10, 10]]
    assert dec_in.tolist() == [[11, 6, 5, 9, 6, 8, 1, 0, 0, 0, 3, 2, 10],
                               [11, 6, 8, 2, 9, 5, 5, 6, 7, 9, 10, 10, 10],
                               [11, 8, 7, 7, 0, 5, 8, 3, 0, 10, 10, 10, 10]]
    assert tgt.tolist() == [[6, 5, 9, 6, 8, 1, 0, 0, 0, 3, 2, 12, 10],
                            [6, 8, 2, 9, 5, 5, 6, 7, 9, 12, 10, 10, 10],
                            [8, 7, 7, 0, 5, 8, 3, 0, 12, 10, 10, 10, 10]]


def test_parameter_counts(m):
    plain, attn = m.init_params(False, 0), m.init_params(True, 0)
    assert sum(v.numel() for v in plain.values()) == 66381
    assert sum(v.numel() for v in attn.values()) == 104973
    assert sum(attn[k].numel() for k in ("W_a.weight", "U_a.weight", "v_a.weight")) == 12352
    assert attn["cell.weight_ih"].shape == (192, 160) and plain["out.weight"].shape == (13, 64)


@pytest.mark.slow
def test_first_losses(m):
    for attention, want in ((True, [2.577949285507202, 2.5066587924957275, 2.454353094100952]),
                            (False, [2.6031928062438965, 2.572218179702759, 2.5389513969421387])):
        _, losses = m.train_seq2seq(m.init_params(attention, 0), 3, 0, attention)
        assert losses.dtype == torch.float32
        assert losses.tolist() == pytest.approx(want, rel=1e-6)


def test_recorded_training_answers_a_loop_whose_model_is_wrong(m, helpers):
    """The recorded calls of a correct loop (helper ``training_calls`` beside the reference)
    answer, with their derivatives, the calls of a loop whose model and loss are broken: its
    first losses and weights are the reference's; the loop's own mistake still shows."""
    table = {mu.name: mu for mu in load_mutant_table(LAB.mutants_path()).mutants}
    source = LAB.solution_path().read_text(encoding="utf-8")

    def broken(*names):
        edited = source
        for name in names:
            edited = table[name].apply(edited)
        return load_source_as_module(strip_markers(edited), "_lab11_broken_" + "_".join(names))

    p0 = m.init_params(True, 0)
    recorded = helpers.training_calls(m, p0, 3, 0, True)
    assert [len(recorded[k]) for k in ("batches", "logits", "losses")] == [3, 3, 3]
    want_params, want_losses = m.train_seq2seq(p0, 3, 0, True)
    replace = ("make_reversal_batch", "teacher_forced_logits", "masked_token_loss")
    wrong = broken("luong_order", "loss_includes_pad")
    assert not torch.allclose(wrong.train_seq2seq(p0, 3, 0, True)[1], want_losses)
    params, losses = helpers.train_alone(wrong, p0, 3, 0, True, recorded, replace)
    assert torch.equal(losses, want_losses)
    assert all(torch.equal(params[k], want_params[k]) for k in want_params)
    assert wrong.decoder_step is not None and not isinstance(wrong.masked_token_loss,
                                                             helpers._Recorded)
    loop = broken("same_batch_every_step")
    _, losses = helpers.train_alone(loop, p0, 3, 0, True, recorded, replace)
    assert not torch.allclose(losses, want_losses)


def test_the_worker_holds_no_model(helpers):
    """Nothing of the helpers computes the model: no GRU, embedding or cross-entropy."""
    text = (LAB.helpers_path()).read_text(encoding="utf-8")
    for word in ("GRU", "embedding", "cross_entropy", "pack_padded", "functional_call"):
        assert word not in text


def _function(path, name):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return [ast.dump(statement) for statement in node.body[1:]]  # the docstring aside


def test_grader_beam_search_is_lab6s():
    lab6 = get_lab("lab6").solution_path()
    assert _function(LAB.helpers_path(), "_beam_search") == _function(
        lab6, "beam_search")


# ------------------------------------------------------------------ training runs (slow)

def evaluate(m, params, attention, length, n=500):
    src, dec_in, tgt, lens = m.make_reversal_batch(n, np.random.default_rng(123 + length),
                                                   length, length)
    with torch.no_grad():
        forced = m.teacher_forced_logits(params, src, dec_in, lens, attention).argmax(-1)
    free, _ = m.greedy_decode_batch(params, src, lens, 13, attention)
    seq, free_tok = m.sequence_metrics(free, tgt)
    return [round(100 * v, 1) for v in (seq, m.sequence_metrics(forced, tgt)[1], free_tok)]


@pytest.fixture(scope="module")
def plain(m):
    return m.train_seq2seq(m.init_params(False, 0), 1500, 0, False)


@pytest.fixture(scope="module")
def attn(m):
    return m.train_seq2seq(m.init_params(True, 0), 500, 0, True)


@pytest.mark.slow
def test_no_attention_table(m, plain):
    params, losses = plain
    assert [round(float(losses[k - 50:k].mean()), 4) for k in (500, 1000, 1500)] == [
        0.5913, 0.4242, 0.3684]
    assert [evaluate(m, params, False, L) for L in (4, 8, 12)] == [
        [98.4, 99.7, 99.4], [42.6, 91.4, 80.3], [1.0, 74.1, 52.7]]


@pytest.mark.slow
def test_beam_against_greedy(m, helpers, plain):
    params, _ = plain
    src, _, tgt, lens = m.make_reversal_batch(200, np.random.default_rng(7), 12, 12)
    greedy = m.greedy_decode_batch(params, src, lens, 13, False)[0].tolist()
    with torch.no_grad():
        H, mask, s0 = m.encode(params, src, lens)
    beam = [b + [10] * (13 - len(b)) for b in helpers.beam_answers(m, params, H, mask, s0, 4,
                                                                  False)]
    want = tgt.tolist()
    for answers, tokens in ((greedy, 0.523), (beam, 0.491)):
        assert sum(a == w for a, w in zip(answers, want)) == 0
        right = sum(x == y for a, w in zip(answers, want) for x, y in zip(a, w))
        assert round(right / 2600, 3) == tokens


@pytest.mark.slow
def test_attention_figures_and_alignment(m, attn):
    params, losses = attn
    # The contract recomputes U_a·H at every step (the seed's class once per source): the same
    # values, summed in another order, so the run drifts from the seed's 0.0149 and 99.6 / 99.4 /
    # 97.6% in the last digits.
    assert round(float(losses[450:500].mean()), 4) == 0.0121
    assert [evaluate(m, params, True, L)[0] for L in (4, 8, 12)] == [100.0, 99.4, 98.4]
    src, _, _, lens = m.make_reversal_batch(1, np.random.default_rng(11), 8, 8)
    assert src[0, :8].tolist() == [1, 1, 7, 4, 5, 6, 7, 0]
    tokens, alphas = m.greedy_decode_batch(params, src, lens, 13, True)
    assert tokens[0, :9].tolist() == [0, 7, 6, 5, 4, 7, 1, 1, 12]
    assert alphas[0, :9, 8:].sum().item() == 0.0
    assert alphas[0, :9, :8].argmax(dim=1).tolist() == [7, 6, 6, 4, 3, 2, 1, 0, 0]
    src, _, _, lens = m.make_reversal_batch(100, np.random.default_rng(11), 8, 8)
    rows = m.greedy_decode_batch(params, src, lens, 13, True)[1][:, :8, :8].argmax(dim=-1)
    assert round(float((rows == torch.arange(7, -1, -1)).double().mean()), 3) == 0.961

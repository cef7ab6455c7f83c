"""Public tests for lab 11. Run them with:  pytest assignments/lab11

Expected values come from fixtures/public/lab11.npz, computed by the course's reference solution
on a small model (E = 4, H = 5, A = 3); the README's rows are checked here too, and the padding
invariance of your encoder. The harness calls your functions on copies of their arguments, so
a test sees exactly what your function did to them.
"""

import numpy as np
import pytest
import torch

from rnngrade.testing import EXACT, CheckFailure, Tolerance, assert_outputs

STUDENT_MODULE = "seq2seq"

# README: padding never changes a packed encoder; the same float64 kernels run on both batches.
INVARIANT = Tolerance(1e-6, 0.0, "README: padding never changes a packed encoder")
# README: the first losses match the reference's to rtol 1e-5.
FIRST_LOSSES = Tolerance(1e-6, 1e-5, "README: the first losses agree to rtol 1e-5")


def check_case(student, vectors, name, function, call=None, names=None, tol=None):
    case = vectors.case(name)
    got = call(student, *case.args) if call else getattr(student, function)(*case.args)
    assert_outputs(got, case.outputs, f"{function} ({name})", names=names, inputs=case.args,
                   tol=tol)


def reversal_batch_seeded(m, n, seed, min_len, max_len):
    return m.make_reversal_batch(n, np.random.default_rng(seed), min_len, max_len)


def loss_value(m, logits, tgt):
    return float(m.masked_token_loss(logits, tgt))


def train_losses(m, params, steps, seed, attention):
    return m.train_seq2seq(params, steps, seed, attention)[1]


@pytest.mark.points(1)
def test_make_reversal_batch(student, vectors):
    check_case(student, vectors, "reversal_batch_readme", "make_reversal_batch",
               call=reversal_batch_seeded, names=("src", "dec_in", "tgt", "lens"), tol=EXACT)
    check_case(student, vectors, "reversal_batch_short", "make_reversal_batch",
               call=reversal_batch_seeded, names=("src", "dec_in", "tgt", "lens"), tol=EXACT)
    src, dec_in, tgt, lens = reversal_batch_seeded(student, 3, 0, 3, 12)
    assert_outputs((src[0].tolist(), tgt[0].tolist(), lens.tolist()),
                   ([2, 3, 0, 0, 0, 1, 8, 6, 9, 5, 6, 10],
                    [6, 5, 9, 6, 8, 1, 0, 0, 0, 3, 2, 12, 10], [11, 9, 8]),
                   "make_reversal_batch(3, default_rng(0), 3, 12) against the README",
                   names=("src[0]", "tgt[0]", "lens"), tol=EXACT)


@pytest.mark.points(2)
def test_encode(student, vectors):
    check_case(student, vectors, "encode_small", "encode", names=("H", "mask", "s0"))
    check_case(student, vectors, "encode_unpacked", "encode", names=("H", "mask", "s0"))


@pytest.mark.points(2)
def test_encode_padding_invariance(student, vectors):
    params, src, lens = vectors.case("encode_small").args
    H, _, s0 = student.encode(params, src, lens)
    for i, L in enumerate(lens.tolist()):
        H_cut, _, s0_cut = student.encode(params, src[i:i + 1, :L], lens[i:i + 1])
        assert_outputs((H_cut[0, :L], s0_cut[0]), (H[i, :L], s0[i]),
                       f"encode: string {i} cut to its width {L} against the same one padded "
                       "to 12", names=("H on real positions", "s0"), tol=INVARIANT)


@pytest.mark.points(2)
def test_decoder_step(student, vectors):
    check_case(student, vectors, "decoder_step_attention", "decoder_step",
               names=("logits", "s_new", "alpha"))
    check_case(student, vectors, "decoder_step_plain", "decoder_step",
               names=("logits", "s_new", "alpha"))
    _, _, alpha = student.decoder_step(*vectors.case("decoder_step_attention").args)
    if torch.isnan(alpha).any():
        raise CheckFailure("decoder_step: NaN among the attention weights (row 2 has no real "
                           "position: its weights must be zeros)")


@pytest.mark.points(1)
def test_teacher_forced_logits(student, vectors):
    check_case(student, vectors, "teacher_forced_small", "teacher_forced_logits")


@pytest.mark.points(1)
def test_masked_token_loss(student, vectors):
    check_case(student, vectors, "masked_token_loss_small", "masked_token_loss",
               call=loss_value)


@pytest.mark.points(1)
def test_greedy_decode_batch(student, vectors):
    check_case(student, vectors, "greedy_small", "greedy_decode_batch",
               names=("tokens", "alphas"))


@pytest.mark.points(1)
def test_sequence_metrics(student, vectors):
    check_case(student, vectors, "sequence_metrics_small", "sequence_metrics",
               names=("sequence_accuracy", "token_accuracy"))


@pytest.mark.points(2)
def test_train_seq2seq(student, vectors):
    check_case(student, vectors, "train_small", "train_seq2seq", call=train_losses,
               tol=FIRST_LOSSES)


@pytest.mark.points(1)
def test_bidirectional_summary(student, vectors):
    check_case(student, vectors, "bidirectional_summary_small", "bidirectional_summary")


@pytest.mark.points(1)
def test_attention_pool(student, vectors):
    check_case(student, vectors, "attention_pool_small", "attention_pool",
               names=("context", "weights"))

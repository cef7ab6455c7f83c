"""Public tests for lab 6. Run them with:  pytest assignments/lab6

Each test says which check failed, where, and by how much. The softmax and length-penalty vectors
come from fixtures/public/lab6.npz, computed by the course's reference solution. The decoders are
tested on toy models written out below, small enough to work through on paper: do it when a test
fails, and print your beam at every step.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them. This file needs NumPy only.
"""

import math

import numpy as np
import pytest

from rnngrade.testing import CheckFailure, Tolerance, assert_outputs

STUDENT_MODULE = "decoding"

# The lab's README prints the example probabilities with 3 decimals: they are off by up to 5e-4.
README_DECIMALS = Tolerance(5e-4 + 1e-9, 0.0, "the README's example values are rounded to 3 "
                            "decimals")
# Scores are sums of a few float64 log-probabilities: any correct order of the additions agrees
# to ~1e-15.
SCORE = Tolerance(1e-10, 1e-10, "float64 sums of a few log-probabilities agree to ~1e-15")

# ------------------------------------------------------------------ toy models (not tests)
#
# Token ids: 0 = EOS, 1 = "a", 2 = "b"; 3 = BOS is only ever fed in, never emitted.
EOS, A, B, BOS = 0, 1, 2, 3


def toy_model(table, otherwise):
    """A step_fn for the model whose next-token probabilities after the emitted prefix ``p``
    (a tuple of token ids) are ``table[p]`` (``otherwise`` for prefixes not in the table).

    The model's state is the tuple of tokens fed so far (start with ``()``), so the model notices
    when it is fed the wrong token or handed the state of another hypothesis.
    """

    def step_fn(state, token):
        fed = (*state, int(token))
        if fed[0] != BOS:
            raise AssertionError(f"toy model: the first token fed must be BOS ({BOS}), got "
                                 f"{fed[0]} (or the state passed in is not the model's)")
        if BOS in fed[1:]:
            raise AssertionError(f"toy model: BOS fed again after the first step (tokens fed: "
                                 f"{list(fed)}); feed the token that was just emitted")
        probs = table.get(fed[1:], otherwise)
        with np.errstate(divide="ignore"):
            return np.log(np.array(probs, dtype=np.float64)), fed

    return step_fn


# Greedy takes "a" (0.5) and then EOS (0.4): p = 0.20. The best sequence starts with the less
# likely "b" (0.4) and ends at once (0.9): p = 0.36. Greedy misses it; a beam of 2 finds it.
GREEDY_MISSES = toy_model({(): (0.1, 0.5, 0.4),
                           (A,): (0.4, 0.3, 0.3),
                           (B,): (0.9, 0.05, 0.05)},
                          otherwise=(0.6, 0.2, 0.2))

# EOS is the most likely first token (0.5). With a beam of 2, [EOS] finishes at step 1, so only
# one hypothesis stays live: ["a"] (0.4). Its best continuation ["a", "a"] (0.2) beats
# ["a", "b"] (0.18), and then ends (0.8): ["a", "a", EOS] has p = 0.16. A beam refilled to 2 after
# [EOS] finished would also keep ["a", "b"] and find ["a", "b", EOS] (0.171) as well.
# Raw log-probabilities prefer the short [EOS]; normalised by the length (alpha = 1, EOS counted)
# the long one wins: log(0.16) / 3 > log(0.5) / 1.
FINISHES_EARLY = toy_model({(): (0.5, 0.4, 0.1),
                            (A,): (0.05, 0.5, 0.45),
                            (A, A): (0.8, 0.1, 0.1),
                            (A, B): (0.95, 0.03, 0.02)},
                           otherwise=(0.2, 0.4, 0.4))

# A model that never emits EOS: "a" and "b" take turns, "a" first.
NEVER_ENDS = toy_model({(): (0.0, 0.7, 0.3)}, otherwise=(0.0, 0.3, 0.7))


def never_ends_tokens(n):
    """What greedy search emits on NEVER_ENDS: a, b, b, b, ... (n tokens)."""
    return [A] + [B] * (n - 1)


# ------------------------------------------------------------------ checks (not tests)

def assert_tokens(got, want, what):
    """``got`` is the token list ``want``."""
    if got is None:
        raise CheckFailure(f"{what} returns None — looks unfinished")
    if not isinstance(got, list | tuple | np.ndarray):
        raise CheckFailure(f"{what} should return a list of token ids, got a "
                           f"{type(got).__name__}")
    got = [int(t) for t in got]
    if got != want:
        first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                     min(len(got), len(want)))
        raise CheckFailure(f"{what}: tokens differ\n  yours    {got}\n  expected {want}\n"
                           f"  first difference at position {first} (token ids: EOS = {EOS}, "
                           f"a = {A}, b = {B})")


def assert_beam(got, want, what):
    """``got`` is the list of (tokens, score) ``want``, best first."""
    if got is None:
        raise CheckFailure(f"{what} returns None — looks unfinished")
    if not isinstance(got, list | tuple) or not all(
            isinstance(e, list | tuple) and len(e) == 2 for e in got):
        raise CheckFailure(f"{what} should return a list of (tokens, score) pairs, got {got!r}")
    if len(got) != len(want):
        raise CheckFailure(f"{what}: {len(got)} hypotheses returned, expected {len(want)}\n"
                           f"  yours    {[[int(t) for t in tokens] for tokens, _ in got]}\n"
                           f"  expected {[tokens for tokens, _ in want]}")
    for i, ((tokens, score), (want_tokens, want_score)) in enumerate(zip(got, want)):
        assert_tokens(tokens, want_tokens, f"{what}, hypothesis {i} (best first)")
        assert_outputs(float(score), want_score, f"{what}, score of hypothesis {i} {want_tokens}",
                       tol=SCORE)


# ------------------------------------------------------------------ softmax_with_temperature

@pytest.mark.points(3)
def test_softmax_spec_temperatures(student, vectors):
    logits = np.array([2.0, 1.0, 0.0])
    got = student.softmax_with_temperature(logits, 1.0)
    assert_outputs(got, np.array([0.665, 0.245, 0.090]), "softmax_with_temperature((2, 1, 0), 1)",
                   tol=README_DECIMALS, inputs=(logits,))
    for name in ("softmax_spec_cold", "softmax_spec_hot"):
        case = vectors.case(name)
        got = student.softmax_with_temperature(*case.args)
        assert_outputs(got, case.outputs, f"softmax_with_temperature((2, 1, 0), {case.args[1]})",
                       inputs=case.args)


@pytest.mark.points(2)
def test_softmax_rows_float32(student, vectors):
    case = vectors.case("softmax_batch_float32")
    got = student.softmax_with_temperature(*case.args)
    assert_outputs(got, case.outputs, "softmax_with_temperature on rows (3, 6), float32",
                   inputs=case.args)


@pytest.mark.points(2)
def test_softmax_large_logits(student, vectors):
    case = vectors.case("softmax_large_logits")
    got = student.softmax_with_temperature(*case.args)
    assert_outputs(got, case.outputs, "softmax_with_temperature with logits of size ~1000",
                   inputs=case.args)


# ------------------------------------------------------------------ gnmt_length_penalty

@pytest.mark.points(2)
def test_gnmt_length_penalty(student, vectors):
    for name in ("gnmt_scalar", "gnmt_alpha_zero", "gnmt_lengths_array"):
        case = vectors.case(name)
        got = student.gnmt_length_penalty(*case.args)
        assert_outputs(got, case.outputs, f"gnmt_length_penalty (case {name})", inputs=case.args)


# ------------------------------------------------------------------ greedy_decode

@pytest.mark.points(3)
def test_greedy_decode_toy(student):
    got = student.greedy_decode(GREEDY_MISSES, (), BOS, EOS, 5)
    assert_tokens(got, [A, EOS], "greedy_decode on the toy model GREEDY_MISSES, max_len 5")
    got = student.greedy_decode(GREEDY_MISSES, (), BOS, EOS, 1)
    assert_tokens(got, [A], "greedy_decode on GREEDY_MISSES with max_len 1")


@pytest.mark.points(2)
def test_greedy_decode_stops_at_max_len(student):
    got = student.greedy_decode(NEVER_ENDS, (), BOS, EOS, 6)
    assert_tokens(got, never_ends_tokens(6), "greedy_decode on NEVER_ENDS (never emits EOS), "
                  "max_len 6")


# ------------------------------------------------------------------ beam_search

@pytest.mark.points(2)
def test_beam_size_one_is_greedy(student):
    got = student.beam_search(GREEDY_MISSES, (), BOS, EOS, 1, 5)
    assert_beam(got, [([A, EOS], math.log(0.5) + math.log(0.4))],
                "beam_search on GREEDY_MISSES, beam_size 1")


@pytest.mark.points(4)
def test_beam_finds_what_greedy_misses(student):
    got = student.beam_search(GREEDY_MISSES, (), BOS, EOS, 2, 5)
    want = [([B, EOS], math.log(0.4) + math.log(0.9)),
            ([A, EOS], math.log(0.5) + math.log(0.4))]
    assert_beam(got, want, "beam_search on GREEDY_MISSES, beam_size 2")


@pytest.mark.points(3)
def test_beam_shrinks_and_normalises_the_final_pool(student):
    short = ([EOS], math.log(0.5))
    long_logp = math.log(0.4) + math.log(0.5) + math.log(0.8)
    got = student.beam_search(FINISHES_EARLY, (), BOS, EOS, 2, 4)
    assert_beam(got, [short, ([A, A, EOS], long_logp)],
                "beam_search on FINISHES_EARLY, beam_size 2, alpha 0")
    got = student.beam_search(FINISHES_EARLY, (), BOS, EOS, 2, 4, alpha=1.0)
    assert_beam(got, [([A, A, EOS], long_logp / 3), short],
                "beam_search on FINISHES_EARLY, beam_size 2, alpha 1 (len counts EOS)")


# ------------------------------------------------------------------ sample_sequence

# What the sampling rule of the lab's README gives on GREEDY_MISSES (max_len 6): five sequences drawn one
# after the other from numpy.random.default_rng(2024), at each temperature.
SEEDED_SAMPLES = {
    1.0: [[B, EOS], [A, B, B, EOS], [EOS], [A, EOS], [A, A, A, EOS]],
    0.5: [[B, EOS], [A, B, B, EOS], [A, EOS], [A, EOS], [A, A, EOS]],
    2.0: [[B, EOS], [A, B, B, EOS], [EOS], [EOS], [A, EOS]],
}


@pytest.mark.points(4)
def test_sample_sequence_seeded(student):
    for temperature, samples in SEEDED_SAMPLES.items():
        rng = np.random.default_rng(2024)
        for i, want in enumerate(samples):
            got = student.sample_sequence(GREEDY_MISSES, (), BOS, EOS, 6, temperature, rng)
            rng = student.calls[-1].result.args_after[6]  # the generator as your call left it
            assert_tokens(got, want, f"sample {i + 1} of 5 drawn one after the other from "
                          f"default_rng(2024) on GREEDY_MISSES, temperature {temperature:g}")


@pytest.mark.points(3)
def test_sample_sequence_draws_once_per_token(student):
    rng = np.random.default_rng(5)
    got = student.sample_sequence(NEVER_ENDS, (), BOS, EOS, 7, 1.3, rng)
    after = student.calls[-1].result.args_after[6]
    if got is None:
        raise CheckFailure("sample_sequence returns None — looks unfinished")
    if len(got) != 7:
        raise CheckFailure(f"sample_sequence on NEVER_ENDS (never emits EOS) with max_len 7 "
                           f"returned {len(got)} tokens, expected 7")
    fresh, count = np.random.default_rng(5), None
    for draws in range(10):
        if fresh.bit_generator.state == after.bit_generator.state:
            count = draws
            break
        fresh.random()
    if count != 7:
        used = "not by rng.random() draws alone" if count is None else f"{count} rng.random() draws"
        raise CheckFailure(f"sample_sequence emitted 7 tokens and used the generator for {used}; "
                           "the README asks for exactly one rng.random() per emitted token (no "
                           "rng.choice, no np.random.*)")

"""Hidden suite for lab6: decoding (contract: assignments/lab6/README.md).

The decoders take a model (``step_fn``) and sampling takes a ``numpy.random.Generator``; neither is
plain data, so a test names a model factory of this lab's ``helpers.py`` with a
``FunctionRef`` (the same model is built beside the student's code and beside the reference) and
samples through the worker helpers ``sample_seeded`` / ``sample_counts``, which build the
generator from a seed there.
"""

import numpy as np
import pytest
import torch

from rnngrade.suite import FunctionRef, Tolerance, lab_helpers

# ------------------------------------------------------------------ models
#
# table_lm(table, default, state_kind, output): probabilities of the next token after each
# emitted prefix ("" is the start, "1,0" the prefix [1, 0]); its state is the tuple of tokens fed
# so far, so a decoder that feeds a wrong token or hands over another hypothesis's state gets
# other predictions. Initial state: ().


def table(rows, default, state_kind="tuple", output="numpy"):
    return FunctionRef("table_lm", (rows, default, state_kind, output))


def random_lm(seed, vocab, eos, eos_shift=0.0, scale=1.5, state_kind="tuple", output="numpy"):
    return FunctionRef("random_lm", (seed, vocab, eos, eos_shift, scale, state_kind, output))


def torch_rnn(seed, vocab, hidden, bos):
    """A tiny torch RNN language model (its state is a float64 tensor h) and its initial state."""
    g = torch.Generator().manual_seed(seed)
    E = torch.randn(max(vocab, bos + 1), hidden, generator=g, dtype=torch.float64)
    W = torch.randn(hidden, hidden, generator=g, dtype=torch.float64) / hidden**0.5
    U = 2.0 * torch.randn(vocab, hidden, generator=g, dtype=torch.float64)
    h0 = torch.randn(hidden, generator=g, dtype=torch.float64)
    return FunctionRef("torch_rnn_lm", (E, W, U)), h0


# V = 4, EOS = 3, BOS = 4. Greedy: "0" (0.40), then a tie between "0" and "1" (0.3 each: the lower
# id wins), then EOS: p = 0.084. The best sequence is [1, EOS] (0.315), which a beam of 2 finds;
# on the way it meets the tie again (hypothesis [0] expanded by 0 or 1).
GREEDY_MISSES = table({"": [0.40, 0.35, 0.25, 0.0],
                       "0": [0.3, 0.3, 0.2, 0.2],
                       "1": [0.05, 0.05, 0.0, 0.9],
                       "0,0": [0.1, 0.1, 0.1, 0.7],
                       "0,1": [0.5, 0.2, 0.2, 0.1]},
                      [0.25, 0.25, 0.25, 0.25])

# V = 3, EOS = 0, BOS = 3. [EOS] (0.5) finishes at once; the beam shrinks to one live hypothesis
# [1]; a beam refilled to its size would also keep [1, 2] and find [1, 2, EOS] (0.171) ahead of
# [1, 1, EOS] (0.16). A finished hypothesis expanded past EOS goes on with [0, 2, ...].
FINISHES_EARLY = table({"": [0.5, 0.4, 0.1],
                        "1": [0.05, 0.5, 0.45],
                        "1,1": [0.8, 0.1, 0.1],
                        "1,2": [0.95, 0.03, 0.02],
                        "0": [0.1, 0.2, 0.7]},
                       [0.2, 0.4, 0.4])

# V = 4, EOS = 2, BOS = 5. Hypotheses finish at lengths 1, 2 and 4: raw log-probability prefers the
# shortest, normalisation by len ** alpha (EOS counted) moves the longer ones up as alpha grows.
LENGTHS = table({"": [0.30, 0.35, 0.25, 0.10],
                 "0": [0.05, 0.05, 0.85, 0.05],
                 "1": [0.9, 0.04, 0.03, 0.03],
                 "1,0": [0.02, 0.96, 0.01, 0.01],
                 "1,0,1": [0.01, 0.01, 0.97, 0.01],
                 "3": [0.3, 0.3, 0.1, 0.3]},
                [0.3, 0.3, 0.1, 0.3])

# V = 3, EOS = 1, BOS = 3, exact ties everywhere: every probability is 1/4 or 1/2, the same values
# on every row, so equal scores are bit-for-bit equal and the lab README's flattened order decides.
TIES = table({"": [0.5, 0.0, 0.5], "0": [0.25, 0.5, 0.25], "2": [0.25, 0.25, 0.5]},
             [0.25, 0.25, 0.5])

# V = 4, EOS = 0 has probability 0 after every prefix: no hypothesis ever finishes.
NEVER_ENDS = table({"": [0.0, 0.5, 0.3, 0.2]}, [0.0, 0.2, 0.3, 0.5])

# V = 4, EOS = 1: the first-token distribution (0.45, 0.3, 0.15, 0.1) for the frequency test.
SAMPLING = table({"": [0.45, 0.3, 0.15, 0.1]}, [0.25, 0.25, 0.25, 0.25])

RNN_MODEL, RNN_H0 = torch_rnn(61, vocab=5, hidden=6, bos=5)

# (step_fn, state, bos, eos): models with every kind of state and output the lab README allows
MODELS = {
    "table_eos_early": (GREEDY_MISSES, (), 4, 3),
    "finishes_early": (FINISHES_EARLY, (), 3, 0),
    "never_emits_eos": (NEVER_ENDS, (), 4, 0),
    "random_v6": (random_lm(1, 6, eos=2, eos_shift=0.5), (), 6, 2),
    "random_v9_eos0": (random_lm(2, 9, eos=0, eos_shift=1.0, scale=2.0), (), 3, 0),
    "opaque_object_state": (random_lm(3, 5, eos=4, state_kind="object"), None, 0, 4),
    "torch_tensor_state": (random_lm(4, 5, eos=1, state_kind="tensor"), (), 5, 1),
    "torch_log_probs": (random_lm(5, 7, eos=6, eos_shift=0.7, output="torch"), (), 7, 6),
    "torch_rnn": (RNN_MODEL, RNN_H0, 5, 4),
}


def model_cases(names):
    return [pytest.param(*MODELS[name], id=name) for name in names]


def resolve(ref):
    """The model a FunctionRef names, built here on the trusted side."""
    return lab_helpers("lab6").registry.functions[ref.name](*ref.args)


def as_array(log_probs):
    return np.asarray(log_probs.detach() if hasattr(log_probs, "detach") else log_probs,
                      dtype=np.float64)


def all_hypotheses(step_ref, state, bos, eos, max_len):
    """Every sequence a decoder can end with: the ones ending in EOS (at most max_len tokens)
    and the unfinished ones of exactly max_len tokens, each with its log-probability."""
    step = resolve(step_ref)
    found = []

    def grow(tokens, logp, model_state):
        if len(tokens) == max_len:
            found.append((tokens, logp))
            return
        log_probs, new_state = step(model_state, tokens[-1] if tokens else bos)
        for v, lp in enumerate(as_array(log_probs)):
            if v == eos:
                found.append((tokens + [v], logp + float(lp)))
            else:
                grow(tokens + [v], logp + float(lp), new_state)

    grow([], 0.0, state)
    return found


def exhaustive_search(step_ref, state, bos, eos, beam_size, max_len, alpha):
    """What beam search must return when beam_size ≥ V ** max_len: every hypothesis, scored
    log p / len ** alpha, best first, at most beam_size of them."""
    scored = [(tokens, logp / len(tokens) ** alpha) for tokens, logp in
              all_hypotheses(step_ref, state, bos, eos, max_len)]
    scored.sort(key=lambda item: -item[1])
    return readable(scored[:beam_size])


def readable(hypotheses):
    """[(tokens, score), ...] as [{"tokens": ..., "score": ...}, ...], so that feedback names the
    part that differs: ``...[1]['tokens']`` is the token list of the second best hypothesis."""
    if isinstance(hypotheses, list | tuple) and all(
            isinstance(h, list | tuple) and len(h) == 2 for h in hypotheses):
        return [{"tokens": tokens, "score": score} for tokens, score in hypotheses]
    return hypotheses


def greedy(m, *args):
    return m.greedy_decode(*args)


def beam(m, *args):
    return readable(m.beam_search(*args))


# ------------------------------------------------------------------ softmax_with_temperature

@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0, 0.1, 10.0], ids=lambda t: f"T{t:g}")
def test_softmax_spec_temperatures(check, temperature):
    logits = np.array([2.0, 1.0, 0.0])
    check.expect(f"softmax_with_temperature((2, 1, 0), {temperature:g})",
                 lambda m, z, t: m.softmax_with_temperature(z, t), (logits, temperature))


@pytest.mark.parametrize("shape, temperature, dtype", [
    pytest.param((7,), 0.3, np.float64, id="V7-T0.3"),
    pytest.param((4, 6), 1.7, np.float64, id="rows4x6-T1.7"),
    pytest.param((2, 3, 5), 0.8, np.float64, id="batch2x3x5-T0.8"),
    pytest.param((3, 6), 0.7, np.float32, id="float32-T0.7"),
    pytest.param((1, 1), 2.0, np.float64, id="V1"),
])
def test_softmax_rows_and_dtypes(check, rng, shape, temperature, dtype):
    logits = (2.0 * rng.standard_normal(shape)).astype(dtype)
    check.expect(f"softmax_with_temperature, logits {shape} {np.dtype(dtype).name}, "
                 f"T = {temperature:g}", lambda m, z, t: m.softmax_with_temperature(z, t),
                 (logits, temperature))


@pytest.mark.parametrize("scale, temperature", [(1000.0, 1.0), (-1000.0, 0.5), (300.0, 3.0),
                                                (1.0, 0.005)], ids=["pm1000", "minus1000-T0.5",
                                                                   "300-T3", "T0.005"])
def test_softmax_large_logits(check, rng, scale, temperature):
    logits = scale * (1.0 + rng.standard_normal((3, 5)))
    logits[1, :2] = logits[1].max() + 1.0  # a tie at the maximum
    largest = np.abs(logits).max() / temperature
    check.expect(f"softmax_with_temperature with logits/T up to {largest:.0f}",
                 lambda m, z, t: m.softmax_with_temperature(z, t), (logits, temperature))


# ------------------------------------------------------------------ greedy_decode

@pytest.mark.parametrize("step_fn, state, bos, eos", model_cases(MODELS))
def test_greedy_decode_models(check, step_fn, state, bos, eos):
    check.expect("greedy_decode tokens", greedy, (step_fn, state, bos, eos, 8))


@pytest.mark.parametrize("max_len", [1, 2, 3], ids=lambda n: f"max_len{n}")
def test_greedy_decode_ties_and_max_len(check, max_len):
    # TIES: equal maxima at every step (the lowest id wins); GREEDY_MISSES: a tie at step 2
    check.expect(f"greedy_decode on a model with ties, max_len {max_len}", greedy,
                 (TIES, (), 3, 1, max_len))
    check.expect(f"greedy_decode, max_len {max_len}", greedy, (GREEDY_MISSES, (), 4, 3, max_len))


# ------------------------------------------------------------------ beam_search

@pytest.mark.parametrize("step_fn, state, bos, eos",
                         model_cases(["table_eos_early", "random_v6", "random_v9_eos0",
                                      "torch_rnn"]))
def test_beam_size_one_is_greedy(check, step_fn, state, bos, eos):
    check.expect("beam_search with beam_size 1", beam, (step_fn, state, bos, eos, 1, 8, 0.0))


@pytest.mark.parametrize("beam_size", [2, 3, 5], ids=lambda k: f"beam{k}")
def test_beam_finds_what_greedy_misses(check, beam_size):
    check.expect(f"beam_search, beam_size {beam_size}, on a model where greedy misses the best "
                 "sequence", beam, (GREEDY_MISSES, (), 4, 3, beam_size, 6, 0.0))


@pytest.mark.parametrize("beam_size, max_len", [(2, 3), (2, 6), (3, 6)],
                         ids=lambda v: str(v))
def test_beam_shrinks_as_hypotheses_finish(check, beam_size, max_len):
    check.expect(f"beam_search, beam_size {beam_size}, max_len {max_len}, hypotheses finishing "
                 "early", beam, (FINISHES_EARLY, (), 3, 0, beam_size, max_len, 0.0))


@pytest.mark.parametrize("beam_size", [1, 2, 3], ids=lambda k: f"beam{k}")
def test_beam_ties(check, beam_size):
    check.expect(f"beam_search, beam_size {beam_size}, on a model with exact ties", beam,
                 (TIES, (), 3, 1, beam_size, 3, 0.0))


@pytest.mark.parametrize("beam_size, max_len", [(2, 4), (3, 5)], ids=lambda v: str(v))
def test_beam_max_len_without_eos(check, beam_size, max_len):
    check.expect(f"beam_search, beam_size {beam_size}, max_len {max_len}, a model that never "
                 "emits EOS", beam, (NEVER_ENDS, (), 4, 0, beam_size, max_len, 0.0))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0], ids=lambda a: f"alpha{a:g}")
def test_beam_length_normalisation(check, alpha):
    check.expect(f"beam_search with alpha = {alpha:g}", beam,
                 (LENGTHS, (), 5, 2, 3, 5, alpha))
    check.expect(f"beam_search with alpha = {alpha:g}, hypotheses finishing early", beam,
                 (FINISHES_EARLY, (), 3, 0, 2, 5, alpha))


@pytest.mark.parametrize("seed, vocab, eos, eos_shift, max_len, alpha", [
    pytest.param(11, 3, 0, 0.0, 3, 0.0, id="V3-len3"),
    pytest.param(12, 3, 2, 1.0, 4, 0.0, id="V3-len4"),
    pytest.param(13, 4, 1, 0.5, 3, 0.7, id="V4-len3-alpha0.7"),
    pytest.param(14, 5, 4, 0.0, 2, 1.0, id="V5-len2-alpha1"),
])
def test_beam_exhaustive_search(check, seed, vocab, eos, eos_shift, max_len, alpha):
    """beam_size = V ** max_len: nothing is ever dropped, so beam search is exact search."""
    model = random_lm(seed, vocab, eos, eos_shift)
    check.expect(f"beam_search with beam_size = V ** max_len = {vocab**max_len} (exact search)",
                 beam, (model, (), vocab, eos, vocab**max_len, max_len, alpha),
                 oracle=exhaustive_search)


@pytest.mark.parametrize("step_fn, state, bos, eos", model_cases(
    ["random_v6", "random_v9_eos0", "opaque_object_state", "torch_tensor_state", "torch_log_probs",
     "torch_rnn"]))
@pytest.mark.parametrize("beam_size, alpha", [(3, 0.0), (4, 0.6)], ids=["beam3", "beam4-alpha0.6"])
def test_beam_random_models(check, step_fn, state, bos, eos, beam_size, alpha):
    check.expect(f"beam_search, beam_size {beam_size}, alpha {alpha:g}", beam,
                 (step_fn, state, bos, eos, beam_size, 7, alpha))


# ------------------------------------------------------------------ gnmt_length_penalty

@pytest.mark.parametrize("length, alpha", [
    pytest.param(1, 0.6, id="len1"),
    pytest.param(7, 0.6, id="len7"),
    pytest.param(12, 0.0, id="alpha0"),
    pytest.param(3, 1.0, id="alpha1"),
    pytest.param(20.0, 1.5, id="float-length"),
    pytest.param(np.arange(1, 31, dtype=np.float64), 0.7, id="array"),
    pytest.param(np.array([[2.0, 5.0], [9.0, 40.0]]), 2.0, id="array-2d"),
])
def test_gnmt_length_penalty(check, length, alpha):
    check.expect(f"gnmt_length_penalty(length, {alpha:g})",
                 lambda m, n, a: m.gnmt_length_penalty(n, a), (length, alpha))


# ------------------------------------------------------------------ sample_sequence

def sample(m, *args):
    return m.helper("sample_seeded", *args)


@pytest.mark.parametrize("step_fn, state, bos, eos, temperature, seed", [
    pytest.param(*MODELS["table_eos_early"], 1.0, 1, id="table-T1"),
    pytest.param(*MODELS["finishes_early"], 0.4, 2, id="table-T0.4"),
    pytest.param(*MODELS["random_v6"], 1.0, 3, id="random-T1"),
    pytest.param(*MODELS["random_v9_eos0"], 2.5, 4, id="random-T2.5"),
    pytest.param(*MODELS["never_emits_eos"], 1.0, 5, id="never-eos"),
    pytest.param(*MODELS["opaque_object_state"], 0.7, 6, id="object-state-T0.7"),
    pytest.param(*MODELS["torch_tensor_state"], 1.3, 7, id="tensor-state-T1.3"),
    pytest.param(*MODELS["torch_log_probs"], 0.8, 8, id="torch-log-probs"),
    pytest.param(*MODELS["torch_rnn"], 1.0, 9, id="torch-rnn"),
])
def test_sample_sequence_seeded(check, step_fn, state, bos, eos, temperature, seed):
    """The exact tokens for numpy.random.default_rng(seed), and one rng.random() per token."""
    check.expect(f"sample_sequence with default_rng({seed}), temperature {temperature:g}: tokens "
                 "and the number of rng.random() draws", sample,
                 (step_fn, state, bos, eos, 8, temperature, seed), names=("tokens", "draws"))


SAMPLES = 20_000
# Frequencies of n = 20,000 one-token samples: each has binomial standard deviation ≤
# sqrt(0.25 / n) = 0.0035. 0.12 is 34 of those: a correct sampler never fails (the chance is below
# 1e-200) and the reference's own sampling noise (≤ 3.5 sd, 0.012) stays 10x below. On this model
# at T = 0.5, a sampler that ignores the temperature, multiplies by it, divides the probabilities
# by it or softmaxes probabilities moves some frequency by 0.17 or more.
FREQUENCY = Tolerance(0.12, 0.0, "frequencies of 20,000 samples: binomial sd ≤ 0.0035")


def sequence_probabilities(step_ref, state, bos, eos, max_len, temperature):
    """Exact probabilities of every sequence sample_sequence can return."""
    step = resolve(step_ref)
    found = {}

    def grow(tokens, p, model_state):
        if len(tokens) == max_len:
            found[",".join(map(str, tokens))] = p
            return
        log_probs, new_state = step(model_state, tokens[-1] if tokens else bos)
        z = as_array(log_probs) / temperature
        probs = np.exp(z - z.max())
        probs /= probs.sum()
        for v, q in enumerate(probs):
            if v == eos:
                found[",".join(map(str, tokens + [v]))] = p * q
            else:
                grow(tokens + [v], p * q, new_state)

    grow([], 1.0, state)
    return found


@pytest.mark.parametrize("temperature", [0.5], ids=lambda t: f"T{t:g}")
def test_sample_sequence_frequencies(check, temperature):
    step_fn, state, bos, eos, max_len = SAMPLING, (), 4, 1, 1
    exact = sequence_probabilities(step_fn, state, bos, eos, max_len, temperature)
    keys = sorted(exact)

    def frequencies(m, *args):
        counts = m.helper("sample_counts", *args)
        if not isinstance(counts, dict):
            return counts
        seen = np.array([counts.get(k, 0) for k in keys], dtype=np.float64)
        return {"sequences": seen / SAMPLES,
                "anything else": np.float64(SAMPLES - seen.sum()) / SAMPLES}

    def oracle(*args):
        return {"sequences": np.array([exact[k] for k in keys]), "anything else": np.float64(0.0)}

    check.expect(f"frequencies of the {len(keys)} tokens in {SAMPLES:,} one-token samples at "
                 f"temperature {temperature:g}", frequencies,
                 (step_fn, state, bos, eos, max_len, temperature, 17, SAMPLES), oracle=oracle,
                 tol=FREQUENCY)

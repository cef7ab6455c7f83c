"""Hidden suite for lab 9: a character model trained with truncated BPTT
(contract: assignments/lab9/README.md and the docstrings of charlm.py). NumPy only.

The data is the maintenance log of ``make_log(1500, 0)`` (made by the reference; the README's
figures: 46,196 characters, V = 37, train/val 41,577/4,619). Generators are built from seeds
beside the student's code (``helpers.py``). The training loop is checked with lab 2's
``char_rnn_loss_and_grads`` in place (``train_with_textbook_loss``); a mistake in ``adam_step``
is taken out of its checks by the grader's stand-ins. One test is graded by outcome: 500 updates
must reach the README's validation band, and every figure it scores is measured here from the
returned parameters (the validation loss, the gradient norms, the samples), never read from the
history the student's function reports.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnngrade.suite import EXACT, Tolerance

# Values computed from the same inputs in float64 by the same formulas: only summation order may
# differ, ~1e-15 relative; 1e-10 leaves a 1e5 margin and every known mistake is off by > 1e-3.
FLOAT64 = Tolerance(1e-12, 1e-10, "the same float64 arithmetic up to summation order (~1e-15)")
# The README: the first 20 updates match the reference's loss and gradient norm to rtol 1e-9.
# Adam divides by √v̂, which can amplify rounding in tiny gradient entries; measured drift of a
# correct loop is < 1e-13 after 20 updates.
TWENTY_UPDATES = Tolerance(0.0, 1e-9, "README: the first 20 updates agree to rtol 1e-9")
# The n-gram sums ~4,600 logarithms in a different order: ~1e-13 relative at most.
NGRAM = Tolerance(1e-10, 1e-10, "a sum of ~4,600 logarithms, order may differ (~1e-13)")
# init_params draws W_xh, W_hy ~ N(0, 0.01²): the first logits are within ~1e-3 of zero, so the
# first loss is ln V to ~1e-4 (the README: 3.611 = ln 37). A mistake in the scales or order of
# the draws gives a first loss ≥ 0.01 away (W_hy ~ N(0, 1/H) gives ~3.7).
FIRST_LOSS = Tolerance(2e-3, 0.0, "README: the first loss is ln V = 3.611 to ~1e-4")

H, B, T = 128, 32, 32  # the README's model: hidden units, streams, chunk length


_CORPUS: dict[int, dict] = {}  # by the reference module: the log and its pieces


def corpus(reference) -> dict:
    """The log and its pieces, made with the reference (trusted; once per reference module)."""
    key = id(getattr(reference.runner, "module", reference))
    if key not in _CORPUS:
        text = reference.make_log(1500, 0)
        chars, stoi = reference.build_vocab(text)
        data = reference.encode(text, stoi)
        train, val = reference.split_train_val(data)
        sx, sy = reference.make_streams(train, B)
        _CORPUS[key] = {
            "text": text, "chars": chars, "stoi": stoi, "data": data, "train": train,
            "val": val, "train_text": "".join(chars[i] for i in train),
            "val_text": "".join(chars[i] for i in val), "sx": sx, "sy": sy,
            "p0": reference.init_params(H, len(chars), np.random.default_rng(0))}
    return _CORPUS[key]


def first_loss(params: dict, X: np.ndarray, Y: np.ndarray) -> float:
    """The mean loss of ``params`` on one chunk from h = 0 (the forward pass of the README)."""
    h = np.zeros((params["W_hh"].shape[0], X.shape[0]))
    total = 0.0
    for t in range(X.shape[1]):
        h = np.tanh(params["W_xh"][:, X[:, t]] + params["W_hh"] @ h + params["b_h"][:, None])
        z = params["W_hy"] @ h + params["b_y"][:, None]
        z = z - z.max(axis=0)
        total -= float(np.sum(z[Y[:, t], np.arange(X.shape[0])] - np.log(np.exp(z).sum(axis=0))))
    return total / X.size


def small_params(rng: np.random.Generator, hidden: int, vocab: int, scale: float = 1.0) -> dict:
    """Weights large enough that the state matters from one step to the next."""
    return {"W_xh": scale * rng.standard_normal((hidden, vocab)),
            "W_hh": scale * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
            "b_h": 0.1 * rng.standard_normal(hidden),
            "W_hy": scale * rng.standard_normal((vocab, hidden)),
            "b_y": 0.1 * rng.standard_normal(vocab)}


# ------------------------------------------------------------------ build_vocab, encode, split

def test_build_vocab_log(check, reference):
    check.expect("build_vocab(the log)", lambda m, t: m.build_vocab(t),
                 (corpus(reference)["text"],), names=("chars", "stoi"), tol=EXACT)


def test_build_vocab_first_seen_order(check):
    # first occurrences out of code-point order, a repeated character, non-ASCII and a newline
    text = "zebra\nAardvark 42 ÿ!"
    check.expect("build_vocab(a short text)", lambda m, t: m.build_vocab(t), (text,),
                 names=("chars", "stoi"), tol=EXACT)


def test_encode(check, reference):
    c = corpus(reference)
    check.expect("encode(the log)", lambda m, t, s: m.encode(t, s), (c["text"], c["stoi"]),
                 tol=EXACT)


@pytest.mark.parametrize("n, fraction", [(46196, 0.1), (1003, 0.1), (57, 0.25), (10, 0.0)],
                         ids=["log", "n1003", "quarter", "no-validation"])
def test_split_train_val(check, n, fraction):
    data = np.arange(n, dtype=np.int64) % 37
    check.expect(f"split_train_val(n={n}, val_fraction={fraction})",
                 lambda m, d, f: m.split_train_val(d, f), (data, fraction),
                 names=("train", "val"), tol=EXACT)


def test_split_train_val_log(check, reference):
    check.expect("split_train_val(the log)", lambda m, d: m.split_train_val(d),
                 (corpus(reference)["data"],), names=("train", "val"), tol=EXACT)


# ------------------------------------------------------------------ entropy_floor

def test_entropy_floor_log(check, reference):
    chars_per_line = len(corpus(reference)["text"]) / 1500
    args = (8, 3, [501, 95, 51], [1 / 7] * 4 + [3 / 7], chars_per_line)
    check.expect("entropy_floor(the log's generator)", lambda m, *a: m.entropy_floor(*a), args,
                 names=("nats_per_line", "nats_per_char", "nats_per_char_if_tag_guessed"),
                 tol=FLOAT64, promote=False)


def test_entropy_floor_other_generator(check):
    args = (5, 2, [11, 40, 7, 300], [0.5, 0.25, 0.125, 0.125], 23.5)
    check.expect("entropy_floor(another generator)", lambda m, *a: m.entropy_floor(*a), args,
                 names=("nats_per_line", "nats_per_char", "nats_per_char_if_tag_guessed"),
                 tol=FLOAT64, promote=False)


# ------------------------------------------------------------------ n-gram baseline

@pytest.mark.parametrize("order", [1, 2, 3, 5], ids=lambda o: f"order{o}")
def test_ngram_validation_loss_log(check, reference, order):
    c = corpus(reference)
    check.expect(f"ngram_validation_loss(the log, order {order})",
                 lambda m, tr, va, o: m.ngram_validation_loss(tr, va, o),
                 (c["train_text"], c["val_text"], order), tol=NGRAM, promote=False)


@pytest.mark.parametrize("order, alpha, vocab", [(3, 0.1, None), (2, 0.5, None), (4, 0.1, 12)],
                         ids=["order3", "order2-alpha0.5", "order4-V12"])
def test_ngram_validation_loss_small(check, order, alpha, vocab):
    # the validation text opens with contexts the training text ends with, and holds a
    # character ("q") the training text never shows
    train = "abcabcabd abcab cab"
    val = "cabqabcab"
    check.expect(f"ngram_validation_loss(short texts, order {order}, alpha {alpha})",
                 lambda m, tr, va, o, a, v: m.ngram_validation_loss(tr, va, o, a, v),
                 (train, val, order, alpha, vocab), tol=NGRAM, promote=False)


# ------------------------------------------------------------------ streams, parameters

@pytest.mark.parametrize("n, batch", [(41577, 32), (23, 4), (9, 8)], ids=["log", "n23-B4", "L1"])
def test_make_streams(check, n, batch):
    data = np.arange(n, dtype=np.int64)  # each value is its own position: the layout shows
    check.expect(f"make_streams(n={n}, batch={batch})", lambda m, d, b: m.make_streams(d, b),
                 (data, batch), names=("streams_x", "streams_y"), tol=EXACT)


@pytest.mark.parametrize("hidden, vocab, seed", [(128, 37, 0), (5, 3, 7)],
                         ids=["H128-V37", "H5-V3"])
def test_init_params(check, hidden, vocab, seed):
    check.expect(f"init_params({hidden}, {vocab}, default_rng({seed}))",
                 lambda m, h, v, s: m.helper("init_seeded", h, v, s), (hidden, vocab, seed),
                 tol=FLOAT64, promote=False)


def test_init_params_first_loss_is_log_v(check, reference):
    c = corpus(reference)
    X, Y = c["train"][:B * T].reshape(B, T), c["train"][1:B * T + 1].reshape(B, T)
    check.expect("the first loss of init_params(128, 37, default_rng(0))",
                 lambda m, h, v, s, x, y: first_loss(m.helper("init_seeded", h, v, s), x, y),
                 (H, 37, 0, X, Y), oracle=lambda *_: math.log(37), tol=FIRST_LOSS,
                 promote=False)


# ------------------------------------------------------------------ adam_step

def adam_inputs(rng: np.random.Generator, step: int, v_scale: float = 1.0) -> tuple:
    shapes = {"W": (4, 3), "b": (4,)}
    params = {k: rng.standard_normal(s) for k, s in shapes.items()}
    grads = {k: rng.standard_normal(s) for k, s in shapes.items()}
    state = {"m": {k: 0.1 * rng.standard_normal(s) for k, s in shapes.items()},
             "v": {k: v_scale * rng.random(s) for k, s in shapes.items()}}
    if step == 1:
        state = {"m": {k: np.zeros(s) for k, s in shapes.items()},
                 "v": {k: np.zeros(s) for k, s in shapes.items()}}
    return params, grads, state, step


@pytest.mark.parametrize("step", [1, 2, 10, 1000], ids=lambda s: f"step{s}")
def test_adam_step(check, rng, step):
    check.expect(f"adam_step at step {step}", lambda m, *a: m.adam_step(*a),
                 adam_inputs(rng, step), names=("new_params", "new_state"), tol=FLOAT64,
                 promote=False)


def test_adam_step_tiny_moments(check, rng):
    # gradients and second moments near 1e-10: eps (after the square root) decides the step
    params, grads, state, step = adam_inputs(rng, 3, v_scale=1e-20)
    grads = {k: 1e-10 * g for k, g in grads.items()}
    check.expect("adam_step with second moments ~1e-20", lambda m, *a: m.adam_step(*a),
                 (params, grads, state, step, 1e-2), names=("new_params", "new_state"),
                 tol=FLOAT64, promote=False)


# ------------------------------------------------------------------ train_tbptt

def _history(m, params, sx, sy, chunk_len, n_updates, lr=3e-3, clip=5.0):
    _, history = m.helper("train_with_textbook_loss", params, sx, sy, chunk_len, n_updates, lr,
                          clip)
    return history


HISTORY = ("loss", "grad_norm", "chunk")


def test_train_tbptt_first_20_updates(check, reference):
    c = corpus(reference)
    check.expect("train_tbptt: the first 20 updates on the log", _history,
                 (c["p0"], c["sx"], c["sy"], T, 20), tol=TWENTY_UPDATES, promote=False)


def test_train_tbptt_carry(check, rng):
    # strong recurrent weights: each chunk's loss depends on the state the previous one left
    p = small_params(rng, 6, 5, scale=1.5)
    sx = rng.integers(0, 5, (3, 16))
    sy = rng.integers(0, 5, (3, 16))
    check.expect("train_tbptt: 4 chunks, the state carried across", _history,
                 (p, sx, sy, 4, 4), tol=FLOAT64, promote=False)


def test_train_tbptt_wrap(check, rng):
    p = small_params(rng, 6, 5, scale=1.5)
    sx = rng.integers(0, 5, (2, 15))  # L = 15, chunks of 4: 3 chunks, 3 columns unused
    sy = rng.integers(0, 5, (2, 15))
    check.expect("train_tbptt: 8 updates over 3 chunks (two wraps)", _history,
                 (p, sx, sy, 4, 8), tol=FLOAT64, promote=False)


def test_train_tbptt_clip(check, rng):
    p = small_params(rng, 6, 5, scale=1.5)
    sx = rng.integers(0, 5, (3, 12))
    sy = rng.integers(0, 5, (3, 12))
    # a threshold of 1e-3 is far below every gradient norm here: clipping acts at every update
    check.expect("train_tbptt: clip = 1e-3, clipping at every update", _history,
                 (p, sx, sy, 4, 6, 3e-2, 1e-3), tol=FLOAT64, promote=False)


# ------------------------------------------------------------------ evaluate_loss

def test_evaluate_loss(check, reference, rng):
    c = corpus(reference)
    params = small_params(rng, 16, len(c["chars"]), scale=0.5)
    check.expect("evaluate_loss on 600 characters of the log", lambda m, p, d: m.evaluate_loss(
        p, d), (params, c["val"][:600]), tol=NGRAM, promote=False)


def test_evaluate_loss_two_characters(check, rng):
    params = small_params(rng, 3, 4)
    check.expect("evaluate_loss on two characters (one prediction)",
                 lambda m, p, d: m.evaluate_loss(p, d), (params, np.array([2, 1])), tol=FLOAT64,
                 promote=False)


# ------------------------------------------------------------------ sample_text

@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0], ids=lambda t: f"tau{t}")
def test_sample_text(check, reference, rng, temperature):
    c = corpus(reference)
    params = small_params(rng, 16, len(c["chars"]), scale=1.0)
    check.expect(f"sample_text(200 characters, temperature {temperature})",
                 lambda m, p, ch, n, tau, s: m.helper("sample_seeded", p, ch, n, tau, s),
                 (params, c["chars"], 200, temperature, 11), tol=EXACT)


def test_sample_text_start_and_draws(check, reference, rng):
    c = corpus(reference)
    params = small_params(rng, 16, len(c["chars"]), scale=1.0)
    check.expect("sample_text from start='P'",
                 lambda m, p, ch, n, tau, s, st: m.helper("sample_seeded", p, ch, n, tau, s, st),
                 (params, c["chars"], 60, 1.0, 5, "P"), tol=EXACT)
    check.expect("random numbers sample_text draws for 50 characters",
                 lambda m, p, ch, n, tau, s: m.helper("draws_used", p, ch, n, tau, s),
                 (params, c["chars"], 50, 1.0, 3), tol=EXACT)


# ------------------------------------------------------------------ audit

AUDIT_CASES = {
    # a cut first line, a line with a note, vib exactly at its threshold 7.1 (high), a wrong
    # unit, a wrong closing tag, a line that does not parse, a cut last line
    "mixed": ("s 4.0 bar ok /F2\nF2 pres 4.0 bar night shift ok /F2\nP1 vib 7.1 mm/s high /P1\n"
              "C1 temp 80.7 bar high /C1\nP3 pres 5.5 bar high /P4\nhello world\n"
              "P2 temp 75.0 C ok /P2\nC2 temp 4"),
    "thresholds": ("\nP1 temp 75.0 C high /P1\nP2 pres 5.0 bar high /P2\nP3 vib 7.0 mm/s ok /P3\n"
                   "F1 pres 4.9 bar ok /F2\nF2 vib 7.1 mm/s ok /F2\n"),
    "all-well-formed": "\n".join(["x", "F1 pres 1.0 bar during wash ok /F1",
                                  "C2 vib 9.9 mm/s operator check high /C1", "y"]),
}


@pytest.mark.parametrize("case", list(AUDIT_CASES))
def test_audit(check, case):
    check.expect(f"audit({case} log)", lambda m, g: m.audit(g), (AUDIT_CASES[case],),
                 tol=FLOAT64, promote=False)


# ------------------------------------------------------------------ the rest

def test_hidden_gradient_norms(check, rng):
    p = small_params(rng, 7, 5, scale=0.8)
    X, Y = rng.integers(0, 5, (3, 9)), rng.integers(0, 5, (3, 9))
    h0 = 0.3 * rng.standard_normal((7, 3))
    check.expect("hidden_gradient_norms (T = 9)", lambda m, *a: m.hidden_gradient_norms(*a),
                 (p, X, Y, h0), tol=FLOAT64, promote=False, time_axis=0)


@pytest.mark.parametrize("n, seq_len", [(20, 5), (7, 6), (100, 1)], ids=["n20", "one", "len1"])
def test_lm_windows(check, n, seq_len):
    data = np.arange(n, dtype=np.int64) * 3 % 11
    check.expect(f"lm_windows(n={n}, seq_len={seq_len})", lambda m, d, s: m.lm_windows(d, s),
                 (data, seq_len), names=("X", "Y"), tol=EXACT)


def test_token_weighted_perplexity(check):
    # batches of very different sizes: the weighted and unweighted means differ
    losses, counts = [2.0, 0.5, 1.2], [10, 300, 45]
    check.expect("token_weighted_perplexity", lambda m, l, n: m.token_weighted_perplexity(l, n),
                 (losses, counts), tol=FLOAT64, promote=False)


# ------------------------------------------------------------------ graded by outcome

N_UPDATES = 500
BAND = 0.42  # README: validation loss ≤ 0.42 after 500 updates (the reference: 0.391)
# The samples' bands (README): well-formed ≥ 90%, status agreeing ≥ 80% (always 'ok' scores
# 73%), closing tag matching ≤ 35% (a guess scores 12.5%). After only 500 updates the status
# rule is half learnt: the reference gives 97.7% on seed 0 but 82–89% on seeds 1–4, so the
# status band is 80%, not the 90% of a longer run; `rnngrade validate` prints the margins.
FIVE_GRAM, FLOOR, TAG_GUESS_FLOOR = 0.476, 0.310, 0.378  # README's figures for this log


def _smoothed(values: np.ndarray, window: int = 10) -> list[float]:
    """Mean loss over consecutive windows of updates (50 points for 500 updates)."""
    values = np.asarray(values, dtype=np.float64)[: len(values) // window * window]
    return [float(v) for v in values.reshape(-1, window).mean(axis=1)]


def _run(reference, m, seed: int) -> tuple:
    """Train for 500 updates from init_params(128, 37, default_rng(seed)) with ``m``'s
    train_tbptt; the trusted side evaluates and samples with the reference."""
    c = corpus(reference)
    p0 = reference.init_params(H, len(c["chars"]), np.random.default_rng(seed))
    params, history = m.helper("train_with_textbook_loss", p0, c["sx"], c["sy"], T, N_UPDATES)
    return params, history


NORM_CHUNKS = 10  # chunks of the training text the gradient norms are measured on (10,240 chars)


def measured_gradient_norms(reference, params: dict, sx: np.ndarray,
                            sy: np.ndarray) -> float | None:
    """The largest global gradient norm of ``params`` over the first ``NORM_CHUNKS`` training
    chunks, the state carried from chunk to chunk as in training (the grader's figure, computed
    with the reference's loss; the norms a submission reports are never read). None for
    parameters that cannot be evaluated."""
    try:
        h = np.zeros((params["W_hh"].shape[0], sx.shape[0]))
        largest = 0.0
        for start in range(0, min(sx.shape[1] // T, NORM_CHUNKS) * T, T):
            _, grads, h = reference.char_rnn_loss_and_grads(params, sx[:, start:start + T],
                                                            sy[:, start:start + T], h)
            largest = max(largest, math.sqrt(sum(float(np.sum(np.square(g)))
                                                 for g in grads.values())))
        return largest
    except Exception:  # noqa: BLE001 - parameters of the wrong shape or kind: no figure
        return None


def validation_loss(reference, params: dict, val: np.ndarray) -> float | None:
    """The reference's ``evaluate_loss`` of ``params`` on the validation text; None for
    parameters that cannot be evaluated."""
    try:
        return reference.evaluate_loss(params, val)
    except Exception:  # noqa: BLE001 - parameters of the wrong shape or kind: no figure
        return None


def sampled_lines(reference, params: dict, chars: list, seed: int) -> dict:
    """The reference's ``audit`` of 6,000 characters sampled from ``params`` at temperature 0.5
    (a generator of its own: ``seed + 1``)."""
    return reference.audit(reference.sample_text(params, chars, 6000, 0.5,
                                                 np.random.default_rng(seed + 1)))


@pytest.mark.outcome(wall=90, cpu=120, memory="2 GiB",
                     catches=("gradient_ascent", "update_discarded", "clip_scale_inverted"))
def test_training_reaches_band(student, reference, outcome):
    c = corpus(reference)
    params, history = _run(reference, student, outcome.seed)
    ref_params, ref_history = outcome.reference_value(
        "history", lambda: _run(reference, reference, outcome.seed))
    # every figure below is measured here on the returned parameters; a submission that returns
    # exactly the reference's gets the reference's figures, measured once (outcome.of_trained)
    losses = np.asarray(history["loss"], dtype=np.float64)
    val, _ = outcome.of_trained("validation loss", params, ref_params,
                                lambda p: validation_loss(reference, p, c["val"]))
    context = f"after {N_UPDATES} updates"
    outcome.measure("validation loss", val, bound="≤", threshold=BAND, unit="nats/char",
                    context=context,
                    baselines=[("a 5-gram model scores", FIVE_GRAM),
                               ("a model that guesses the closing tag can reach",
                                TAG_GUESS_FLOOR), ("no model can beat", FLOOR)],
                    curve=_smoothed(losses), reference_curve=_smoothed(ref_history["loss"]),
                    curve_label="training loss per update (mean of 10), nats/char")
    norm, ref_norm = outcome.of_trained(
        "largest gradient norm", params, ref_params,
        lambda p: measured_gradient_norms(reference, p, c["sx"], c["sy"]))
    outcome.measure("largest gradient norm", norm, bound="<",
                    threshold=5.0, context=f"of the trained model before clipping, on the first "
                    f"{NORM_CHUNKS} chunks of the training text",
                    baselines=[("the reference's", ref_norm)])
    if val is not None:
        found, _ = outcome.of_trained("sampled lines", params, ref_params,
                                      lambda p: sampled_lines(reference, p, c["chars"],
                                                              outcome.seed))
        where = "of the lines sampled at temperature 0.5"
        outcome.measure("well-formed", found["well-formed"], bound="≥", threshold=0.9,
                        unit="%", context=where)
        outcome.measure("status agrees", found["status agrees"], bound="≥", threshold=0.8,
                        unit="%", context=where, baselines=[("always 'ok' scores", 0.73)])
        outcome.measure("closing tag matches", found["closing tag matches"], bound="≤",
                        threshold=0.35, unit="%", context=where,
                        baselines=[("guessing the tag scores", 0.125)])
    outcome.verdict(hint="The loss should fall from ln 37 = 3.61 towards 0.4 within a few "
                         "hundred updates. Check the direction of each update, that the "
                         "updated parameters are the ones used next, and how the clipping "
                         "scale is computed (README, 'Training').")

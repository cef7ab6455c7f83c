"""Lab 6 — decoding: greedy search, beam search and sampling.

A trained language model is seen here only through one function,

    step_fn(state, token) -> (log_probs, new_state)

``token`` is the int id of the token just fed in (the first call gets ``bos``), ``state`` is
whatever the model needs to remember (treat it as a black box: pass it back unchanged, never look
inside), and ``log_probs`` is a 1-D float array of length V (NumPy or torch) holding
``log p(next token = v | everything so far)`` for every token id ``v``.

Conventions used by every function of the lab:

* Returned token lists never contain ``bos``; they contain ``eos`` when the model emitted it
  (as the last token).
* Ties: greedy search takes the lowest token id among equal maxima. Beam search ranks candidates
  in flattened order, hypothesis first (the current beam's order, best first), then token id, so
  among equal scores the earlier hypothesis wins, then the lower token id.
* Nothing here uses torch: ``_to_numpy`` turns whatever ``step_fn`` returns into a NumPy array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

StepFn = Callable[[Any, int], tuple[Any, Any]]


def _to_numpy(values: Any) -> np.ndarray:
    """A NumPy array holding ``values`` (a NumPy array, a list, or a torch tensor on any device)."""
    if hasattr(values, "detach"):
        values = values.detach()
    if hasattr(values, "cpu"):
        values = values.cpu()
    if hasattr(values, "numpy"):
        values = values.numpy()
    return np.asarray(values)


def _log_probs(values: Any) -> np.ndarray:
    """The log-probabilities returned by ``step_fn`` as a 1-D float64 NumPy array of length V."""
    return _to_numpy(values).astype(np.float64).reshape(-1)


def softmax_with_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Turn logits into probabilities, sharpened or flattened by a temperature.

    logits:      array (..., V) of real scores (log-probabilities are fine too)
    temperature: a number > 0; 1 leaves the distribution as it is, < 1 makes it peakier
                 (towards greedy), > 1 makes it flatter (towards uniform)

    Returns p of shape (..., V) with p[..., v] = exp(logits[..., v] / T) / Σ_w exp(logits[..., w] / T),
    the softmax over the last axis of ``logits / temperature``. A float32 input gives a float32
    result, float64 gives float64 (integer logits give float64). Subtract the maximum before
    exponentiating so that large logits do not overflow. Example: logits (2, 1, 0) at T = 1 give
    about (0.665, 0.245, 0.090). Does not modify ``logits``.
    """
    # BEGIN SOLUTION
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    logits = _to_numpy(logits)
    if not np.issubdtype(logits.dtype, np.floating):
        logits = logits.astype(np.float64)
    z = logits / temperature
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)
    # END SOLUTION


def greedy_decode(step_fn: StepFn, state: Any, bos: int, eos: int, max_len: int) -> list[int]:
    """Greedy search: at every step emit the single most probable next token.

    step_fn: the model, ``step_fn(state, token) -> (log_probs (V,), new_state)``
    state:   the model's initial state (opaque)
    bos:     the token fed in first; it is not part of the result
    eos:     the end-of-sequence token
    max_len: the most tokens to emit

    Returns the list of emitted token ids (Python ints). Decoding stops right after ``eos`` is
    emitted (``eos`` is included as the last token) or once ``max_len`` tokens have been emitted.
    Among equal maxima the lowest token id wins (that is what ``np.argmax`` does).
    """
    # BEGIN SOLUTION
    tokens: list[int] = []
    token = bos
    for _ in range(max_len):
        log_probs, state = step_fn(state, token)
        next_token = int(np.argmax(_log_probs(log_probs)))
        tokens.append(next_token)
        token = next_token
        if next_token == eos:
            break
    return tokens
    # END SOLUTION


def beam_search(
    step_fn: StepFn,
    state: Any,
    bos: int,
    eos: int,
    beam_size: int,
    max_len: int,
    alpha: float = 0.0,
) -> list[tuple[list[int], float]]:
    """Beam search with a beam that shrinks as hypotheses finish.

    step_fn, state, bos, eos, max_len: as for ``greedy_decode``
    beam_size: the number of hypotheses kept (live + finished together)
    alpha:     length-normalisation exponent for the final scores (0 = raw log-probability)

    A hypothesis is a token list with its log-probability log p(tokens) (the sum of the
    log-probabilities of its tokens). The search starts from one empty hypothesis. At each step

    1. every live hypothesis is fed its last token (``bos`` at first) and expanded by every token
       id, giving (number live) × V candidates with score log p(hypothesis) + log_probs[v];
    2. of all candidates, the best ``beam_size − (number finished so far)`` are kept, ranked by
       raw log-probability; equal scores break in flattened order (earlier hypothesis first, then
       lower token id);
    3. a kept candidate ending in ``eos`` is set aside as finished (it is never expanded again),
       so the live beam shrinks; the others form the new live beam, best first.

    The search stops when no live hypothesis is left or after ``max_len`` tokens; then the live
    survivors join the finished pool. Each hypothesis of the pool gets the final score
    ``log p(tokens) / len(tokens) ** alpha`` (``len`` counts ``eos``), and the pool is returned
    as a list of ``(tokens, score)`` (token ids as Python ints, score a Python float), best first,
    at most ``beam_size`` entries; equal final scores keep pool order (finished hypotheses in the
    order they finished, then the survivors in beam order). With ``beam_size = 1`` this is greedy
    search.
    """
    # BEGIN SOLUTION
    live: list[tuple[list[int], float, Any]] = [([], 0.0, state)]
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_len):
        if not live:
            break
        rows = []
        new_states = []
        for tokens, logp, hyp_state in live:
            last = tokens[-1] if tokens else bos
            log_probs, new_state = step_fn(hyp_state, last)
            rows.append(logp + _log_probs(log_probs))
            new_states.append(new_state)
        candidates = np.stack(rows)  # (number live, V)
        V = candidates.shape[1]
        k = beam_size - len(finished)
        flat = candidates.reshape(-1)
        order = np.argsort(-flat, kind="stable")[:k]
        new_live = []
        for index in order:
            i, v = divmod(int(index), V)
            tokens = live[i][0] + [v]
            logp = float(flat[index])
            if v == eos:
                finished.append((tokens, logp))
            else:
                new_live.append((tokens, logp, new_states[i]))
        live = new_live
    pool = finished + [(tokens, logp) for tokens, logp, _ in live]
    results = []
    for tokens, logp in pool:
        length = len(tokens)
        penalty = length**alpha if length > 0 else 1.0  # only max_len = 0 leaves an empty one
        results.append((tokens, float(logp / penalty)))
    results.sort(key=lambda item: -item[1])
    return results[:beam_size]
    # END SOLUTION


def gnmt_length_penalty(length: int | float | np.ndarray, alpha: float) -> float | np.ndarray:
    """The length penalty of Google's neural machine translation system (Wu et al., 2016).

    length: a sequence length (int, float or an array of lengths)
    alpha:  the exponent (0 switches the penalty off: the result is 1)

    Returns ``((5 + length) / 6) ** alpha``, a float (or an array shaped like ``length``).
    Dividing a log-probability by it favours longer sequences less brutally than ``len ** alpha``.
    """
    # BEGIN SOLUTION
    return ((5 + length) / 6) ** alpha
    # END SOLUTION


def sample_sequence(
    step_fn: StepFn,
    state: Any,
    bos: int,
    eos: int,
    max_len: int,
    temperature: float,
    rng: np.random.Generator,
) -> list[int]:
    """Sample a sequence from the model, one token at a time.

    step_fn, state, bos, eos, max_len: as for ``greedy_decode``
    temperature: > 0, applied to the log-probabilities with ``softmax_with_temperature``
    rng:         a ``numpy.random.Generator``, the only source of randomness

    For each emitted token: compute the probabilities p = softmax_with_temperature(log_probs, T),
    draw exactly one number u = rng.random() (uniform on [0, 1)), and emit the first token id v
    whose cumulative probability p[0] + … + p[v] exceeds u. Stops right after ``eos`` (included)
    or after ``max_len`` tokens. Returns the token ids as Python ints. The same rng state
    therefore always gives the same sequence.
    """
    # BEGIN SOLUTION
    tokens: list[int] = []
    token = bos
    for _ in range(max_len):
        log_probs, state = step_fn(state, token)
        probs = softmax_with_temperature(_log_probs(log_probs), temperature)
        cumulative = np.cumsum(probs)
        u = rng.random()
        sampled = int(np.searchsorted(cumulative, u, side="right"))
        sampled = min(sampled, len(probs) - 1)  # rounding can leave cumulative[-1] just below 1
        tokens.append(sampled)
        token = sampled
        if sampled == eos:
            break
    return tokens
    # END SOLUTION

"""Lab 6 helpers, run beside the student's code (and beside the reference's): language models
behind a ``step_fn`` and seeded sampling (see ``rnngrade.suite.worker`` for the rules).

A lab6 decoder sees a language model only through ``step_fn(state, token) -> (log_probs,
new_state)``. The factories below build such models from plain data, so the very same model
exists on the trusted side (the reference, an exhaustive-search oracle) and beside the student's
code. Every model here remembers the tokens it has been fed: feeding the wrong token, or the
state of another hypothesis, changes what it predicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rnngrade.suite.worker import function, helper


class _OpaqueHistory:
    """A decoder state that is not plain data (it stays on the student side, as a real model's
    cache would): the tokens fed so far, kept in an object with no public interface."""

    __slots__ = ("_fed",)

    def __init__(self, fed: tuple[int, ...]) -> None:
        self._fed = fed

    def __repr__(self) -> str:
        return "<model state>"


def _fed_history(state: Any, token: Any) -> tuple[int, ...]:
    """The tokens fed so far, this one included, from a state of any kind used below."""
    if isinstance(state, _OpaqueHistory):
        before = state._fed
    elif type(state).__module__.startswith("torch"):
        before = tuple(int(t) for t in state.tolist())
    elif state is None:
        before = ()
    else:
        before = tuple(int(t) for t in state)
    return (*before, int(token))


def _wrap_state(fed: tuple[int, ...], state_kind: str) -> Any:
    if state_kind == "object":
        return _OpaqueHistory(fed)
    if state_kind == "tensor":
        import torch

        return torch.tensor(fed, dtype=torch.int64)
    return fed


def _wrap_log_probs(log_probs: np.ndarray, output: str) -> Any:
    if output == "torch":
        import torch

        return torch.from_numpy(log_probs.copy())
    return log_probs


@function
def table_lm(table: dict, default: list, state_kind: str = "tuple",
             output: str = "numpy") -> Callable:
    """A model given by its next-token probabilities after each prefix.

    table: {"": p, "1": p, "1,2": p, ...}: the probabilities (a list of V numbers, zeros allowed)
        of the next token after the emitted prefix written as comma-separated token ids (the
        first token fed, BOS, is not part of the key). default: the probabilities after any
        prefix not in the table. state_kind: the state is the tuple of tokens fed so far
        ("tuple"), an opaque object ("object") or an int64 torch tensor ("tensor"); the initial
        state is () (or None). output: log_probs as a float64 NumPy array or a torch tensor.
    """
    with np.errstate(divide="ignore"):
        logs = {str(key): np.log(np.asarray(value, dtype=np.float64)) for key, value in
                table.items()}
        fallback = np.log(np.asarray(default, dtype=np.float64))

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        fed = _fed_history(state, token)
        key = ",".join(str(t) for t in fed[1:])
        return _wrap_log_probs(logs.get(key, fallback), output), _wrap_state(fed, state_kind)

    return step_fn


@function
def random_lm(seed: int, vocab: int, eos: int, eos_shift: float = 0.0, scale: float = 1.5,
              state_kind: str = "tuple", output: str = "numpy") -> Callable:
    """A random model conditioned on the whole history: after the fed tokens h the logits are
    ``scale · N(0, 1)`` drawn from a generator seeded with (seed, *h), plus ``eos_shift`` on
    ``eos``; log_probs is their log-softmax. Without ties (continuous values), and the same model
    wherever it is built. state_kind, output: as for ``table_lm``."""

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        fed = _fed_history(state, token)
        logits = scale * np.random.default_rng([seed, *fed]).standard_normal(vocab)
        logits[eos] += eos_shift
        shifted = logits - logits.max()
        log_probs = shifted - np.log(np.sum(np.exp(shifted)))
        return _wrap_log_probs(log_probs, output), _wrap_state(fed, state_kind)

    return step_fn


@function
def torch_rnn_lm(embedding: Any, recurrent: Any, output_weights: Any) -> Callable:
    """A tiny torch RNN language model: its state is the hidden vector h (a float64 tensor,
    the initial one given as the decoder's ``state``), ``h' = tanh(W h + E[token])`` and
    ``log_probs = log_softmax(U h')`` as a torch tensor. embedding E (V_in, H), recurrent W (H, H),
    output_weights U (V, H)."""
    import torch

    E, W, U = (torch.as_tensor(a, dtype=torch.float64) for a in
               (embedding, recurrent, output_weights))

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        h = torch.tanh(W @ torch.as_tensor(state, dtype=torch.float64) + E[int(token)])
        return torch.log_softmax(U @ h, dim=0), h

    return step_fn


def _draws_taken(rng: np.random.Generator, seed: Any, limit: int) -> int:
    """How many ``random()`` draws took a fresh ``default_rng(seed)`` to ``rng``'s state; -1 when
    no number of plain draws up to ``limit`` does (the generator was used some other way)."""
    fresh = np.random.default_rng(seed)
    target = rng.bit_generator.state
    for count in range(limit + 1):
        if fresh.bit_generator.state == target:
            return count
        fresh.random()
    return -1


@helper
def sample_seeded(module: Any, step_fn: Callable, state: Any, bos: int, eos: int, max_len: int,
                  temperature: float, seed: int) -> dict:
    """``module.sample_sequence`` with ``rng = numpy.random.default_rng(seed)`` built here (a
    Generator is not plain data); returns the tokens and how many ``rng.random()`` draws the call
    consumed (-1: the generator was used in some other way)."""
    rng = np.random.default_rng(seed)
    tokens = module.sample_sequence(step_fn, state, bos, eos, max_len, temperature, rng)
    return {"tokens": tokens, "draws": _draws_taken(rng, seed, max_len + 1)}


@helper
def sample_counts(module: Any, step_fn: Callable, state: Any, bos: int, eos: int, max_len: int,
                  temperature: float, seed: int, n: int) -> dict:
    """``n`` calls of ``module.sample_sequence`` sharing one ``default_rng(seed)``; returns how
    often each sequence came out, keyed by its comma-separated token ids."""
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(n):
        tokens = module.sample_sequence(step_fn, state, bos, eos, max_len, temperature, rng)
        key = ",".join(str(int(t)) for t in tokens)
        counts[key] = counts.get(key, 0) + 1
    return counts

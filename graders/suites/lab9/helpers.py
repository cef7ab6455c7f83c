"""Lab 9 helpers, run beside the student's code (and beside the reference's): seeded generators,
and training with lab 2's loss in place (see ``rnngrade.suite.worker`` for the rules).

``init_params`` and ``sample_text`` take a ``numpy.random.Generator``, which is not plain data:
the helpers build it from a seed on the student's side. ``train_tbptt`` calls the module's
``adam_step`` and ``char_rnn_loss_and_grads``; ``train_with_textbook_loss`` runs it with lab 2's
``char_rnn_loss_and_grads`` in its place (the stub ships it filled in; lab 9 does not grade it).
Nothing here implements a function lab 9 grades (``tests/release/test_worker_audit.py``): a
mistake in ``adam_step`` is taken out of a check of ``train_tbptt`` by the grader's stand-ins,
which answer the calls a correct loop makes with the reference's recorded results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rnngrade.suite.worker import helper


@helper
def init_seeded(module: Any, hidden: int, vocab: int, seed: int) -> dict:
    """``init_params(hidden, vocab, default_rng(seed))``."""
    return module.init_params(hidden, vocab, np.random.default_rng(seed))


@helper
def sample_seeded(module: Any, params: dict, chars: list, n_chars: int, temperature: float,
                  seed: int, start: str = "\n") -> str:
    """``sample_text(..., default_rng(seed), start)``."""
    return module.sample_text(params, chars, n_chars, temperature, np.random.default_rng(seed),
                              start)


@helper
def draws_used(module: Any, params: dict, chars: list, n_chars: int, temperature: float,
               seed: int) -> int:
    """How many ``rng.random()`` values ``sample_text`` consumed: the position of the
    generator afterwards, found by replaying the same stream."""
    rng = np.random.default_rng(seed)
    module.sample_text(params, chars, n_chars, temperature, rng)
    after = rng.random()
    replay = np.random.default_rng(seed)
    for used in range(20 * n_chars + 1):
        if replay.random() == after:
            return used
    return -1


def _loss_and_grads(p: dict, X: np.ndarray, Y: np.ndarray, h0: np.ndarray) -> tuple:
    B, T = X.shape
    columns = np.arange(B)
    hs, probs, loss = [h0], [], 0.0
    for t in range(T):
        h = np.tanh(p["W_xh"][:, X[:, t]] + p["W_hh"] @ hs[-1] + p["b_h"][:, None])
        z = p["W_hy"] @ h + p["b_y"][:, None]
        z = z - z.max(axis=0, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=0, keepdims=True))
        loss -= float(logp[Y[:, t], columns].sum())
        hs.append(h)
        probs.append(np.exp(logp))
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    carry = np.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        g = probs[t].copy()
        g[Y[:, t], columns] -= 1
        g /= B * T
        grads["W_hy"] += g @ hs[t + 1].T
        grads["b_y"] += g.sum(axis=1)
        dz = (1 - hs[t + 1] ** 2) * (p["W_hy"].T @ g + carry)
        np.add.at(grads["W_xh"], (slice(None), X[:, t]), dz)
        grads["W_hh"] += dz @ hs[t].T
        grads["b_h"] += dz.sum(axis=1)
        carry = p["W_hh"].T @ dz
    return loss / (B * T), grads, hs[-1]


@helper
def train_with_textbook_loss(module: Any, params: dict, streams_x: np.ndarray,
                             streams_y: np.ndarray, chunk_len: int, n_updates: int,
                             lr: float = 3e-3, clip: float = 5.0) -> tuple:
    """``train_tbptt(...)`` with lab 2's ``char_rnn_loss_and_grads`` in the module while it runs
    (restored afterwards)."""
    saved = module.__dict__.get("char_rnn_loss_and_grads")
    module.char_rnn_loss_and_grads = _loss_and_grads
    try:
        return module.train_tbptt(params, streams_x, streams_y, chunk_len, n_updates, lr, clip)
    finally:
        if saved is None:
            module.__dict__.pop("char_rnn_loss_and_grads", None)
        else:
            module.char_rnn_loss_and_grads = saved

"""Lab 10 helpers, run beside the student's code (and beside the reference's): the functions that
take a ``torch.Generator`` get one built from a seed on the student's side (a generator is not
plain data), and a probe of how many numbers ``recall_batch`` drew (see
``rnngrade.harness.worker_helpers`` for the rules)."""

from __future__ import annotations

from typing import Any

import torch

from rnngrade.harness.worker_helpers import helper


@helper
def profile_seeded(module: Any, H: int, rho: float, sigma_x: float, T: int, seed: int) -> Any:
    """``orthogonal_rnn_profile(H, rho, sigma_x, T, Generator().manual_seed(seed))``."""
    return module.orthogonal_rnn_profile(H, rho, sigma_x, T, torch.Generator().manual_seed(seed))


@helper
def recall_seeded(module: Any, batch: int, lag: int, seed: int) -> Any:
    """``recall_batch(batch, lag, Generator().manual_seed(seed))``."""
    return module.recall_batch(batch, lag, torch.Generator().manual_seed(seed))


@helper
def recall_draws_next(module: Any, batch: int, lag: int, seed: int) -> int:
    """The next number the generator gives after ``recall_batch``: it tells how much the call
    drew (the README: one ``randint`` of ``batch`` values and nothing else)."""
    generator = torch.Generator().manual_seed(seed)
    module.recall_batch(batch, lag, generator)
    return int(torch.randint(0, 2 ** 30, (1,), generator=generator).item())


def _recall_batch(batch: int, lag: int, generator: torch.Generator) -> tuple:
    """The README's recall batch (symbols 0..7 from one randint, the blank 8)."""
    first = torch.randint(0, 8, (batch,), generator=generator)
    x = torch.full((batch, lag + 1), 8, dtype=torch.int64)
    x[:, 0] = first
    return x, first.clone()


@helper
def train_recall_alone(module: Any, kind: str, lag: int, forget_bias: float, updates: int,
                       seed: int) -> Any:
    """``train_recall(...)`` with the README's ``recall_batch`` in the module while it runs
    (restored afterwards), so a test of the training loop never pays for a mistake in
    ``recall_batch``."""
    saved = getattr(module, "recall_batch", None)
    module.recall_batch = _recall_batch
    try:
        return module.train_recall(kind, lag, forget_bias, updates, seed)
    finally:
        module.recall_batch = saved

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

"""Deterministic randomness: every test case gets seeds derived from its name."""

from __future__ import annotations

import hashlib
import random
import sys
import types

import numpy as np


def seed_from_name(name: str) -> int:
    """A stable 32-bit seed for a test id (the same on every run, machine and worker count)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def seed_everything(seed: int) -> None:
    """Seed NumPy's global generator, ``random``, torch (CPU and CUDA) and disable TF32."""
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        # torch.manual_seed would also queue lazy seeding of every accelerator type, formatting
        # a stack trace each time (~2 ms per test inside pytest); seed what can exist instead.
        torch.random.default_generator.manual_seed(seed)
        if _cuda_available(torch) and not torch.cuda._is_in_bad_fork():
            torch.cuda.manual_seed_all(seed)  # lazily, when CUDA is not initialised yet
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


_CUDA: list[bool] = []


def _cuda_available(torch: types.ModuleType) -> bool:
    if not _CUDA:
        _CUDA.append(bool(torch.cuda.is_available()))
    return _CUDA[0]

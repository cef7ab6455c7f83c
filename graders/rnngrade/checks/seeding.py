"""Deterministic randomness: every test case gets seeds derived from its name."""

from __future__ import annotations

import hashlib
import random
import sys

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
        torch.manual_seed(seed)  # also seeds every CUDA device, lazily
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

"""Devices to run torch checks on: CPU always, CUDA when present (skipped with the reason)."""

from __future__ import annotations

import pytest


def cuda_unavailable_reason() -> str | None:
    """None when a CUDA device can be used, else why not."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device on this machine"
    return None


def device_params() -> list:
    """``pytest.param``s for ``@pytest.mark.parametrize("device", device_params())``."""
    reason = cuda_unavailable_reason()
    cuda_marks = [pytest.mark.cuda] + ([pytest.mark.skip(reason=reason)] if reason else [])
    return [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=cuda_marks)]

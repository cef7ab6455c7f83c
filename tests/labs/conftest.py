"""Fixtures of the lab tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """torch on one thread for the rest of the module, as a grading worker computes: in-process
    grading runs the submission here, and the course's figures were printed with one thread (an
    exploding row moves with more). Module-scoped, so a module's trained models share it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

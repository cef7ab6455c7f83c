"""Grading against a temporary copy of the course in this process (RNNGRADE_ROOT switched)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rnngrade.grading.engine import close_shared_graders
from rnngrade.paths import course_root


@contextmanager
def course_at(root: Path) -> Iterator[Path]:
    """Make ``root`` this process's course while the block runs (graders closed either side)."""
    saved = os.environ.get("RNNGRADE_ROOT")
    close_shared_graders()
    os.environ["RNNGRADE_ROOT"] = str(root)
    course_root.cache_clear()
    try:
        yield root
    finally:
        close_shared_graders()
        if saved is None:
            os.environ.pop("RNNGRADE_ROOT", None)
        else:
            os.environ["RNNGRADE_ROOT"] = saved
        course_root.cache_clear()


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")

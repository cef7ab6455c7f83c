"""A course holding only a toy lab, for tests of what a lab may declare (``lab.yaml``, its
helpers, its limits) without touching the course's own labs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rnngrade.labs import LABS
from rnngrade.paths import course_root

from .course_env import course_at

ROOT = course_root()
TOY = "lab90"  # no real lab uses this number


@contextmanager
def toy_course(folder: Path, files: dict[str, str]) -> Iterator[Path]:
    """Write a course with the root ``conftest.py`` and ``files`` (path → text) into ``folder``
    and make it this process's course while the block runs (``course_env.course_at``)."""
    root = folder / "course"
    root.mkdir()
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, root / name)
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    try:
        with course_at(root):
            yield root
    finally:
        LABS.reload()

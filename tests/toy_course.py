"""A course holding only a toy lab, for tests of what a lab may declare (``lab.yaml``, its
helpers, its limits) without touching the course's own labs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rnngrade.labs import LABS
from rnngrade.paths import course_root

ROOT = course_root()
TOY = "lab90"  # no real lab uses this number


@contextmanager
def toy_course(folder: Path, monkeypatch: pytest.MonkeyPatch,
               files: dict[str, str]) -> Iterator[Path]:
    """Write a course with the root ``conftest.py`` and ``files`` (path → text) into ``folder``
    and make it this process's course (``RNNGRADE_ROOT``) while the block runs."""
    root = folder / "course"
    root.mkdir()
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, root / name)
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    monkeypatch.setenv("RNNGRADE_ROOT", str(root))
    course_root.cache_clear()
    try:
        yield root
    finally:
        monkeypatch.delenv("RNNGRADE_ROOT")
        course_root.cache_clear()
        LABS.reload()

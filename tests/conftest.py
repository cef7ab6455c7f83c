"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rnngrade.paths import course_root

ROOT = course_root()
SUBMISSIONS = ROOT / "fixtures" / "submissions"


@pytest.fixture
def course_copy(tmp_path: Path) -> Path:
    """A copy of the course (solutions, suites, assignments, fixtures, templates) to break."""
    target = tmp_path / "course"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".git", ".venv", "out")
    for name in ("solutions", "graders", "assignments", "fixtures", "templates"):
        shutil.copytree(ROOT / name, target / name, ignore=ignore)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, target / name)
    return target

"""Where the course lives on disk."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path


@cache
def course_root() -> Path:
    """The course repository root: ``$RNNGRADE_ROOT`` or the checkout this package sits in."""
    env = os.environ.get("RNNGRADE_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "solutions").is_dir() and (parent / "graders").is_dir():
            return parent
    raise RuntimeError(
        "cannot find the course repository (a folder with solutions/ and graders/); "
        "install rnngrade in editable mode from a checkout or set RNNGRADE_ROOT"
    )


def templates_dir() -> Path:
    return course_root() / "templates"

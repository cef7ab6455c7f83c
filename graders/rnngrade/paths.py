"""Where the course lives on disk, and where the grader keeps what it caches."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

CACHE_ENV = "RNNGRADE_CACHE_DIR"


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


def cache_dir() -> Path | None:
    """Where the grader keeps the reference's outcome figures (``grading.reference_cache``);
    None when that cache is switched off (``RNNGRADE_CACHE_DIR=``)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen).expanduser() if chosen.strip() else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "rnngrade"
    try:
        return Path.home() / ".cache" / "rnngrade"
    except (RuntimeError, KeyError):  # no home directory to resolve
        return None

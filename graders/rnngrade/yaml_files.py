"""Reading a course's YAML files (``lab.yaml``, ``course.yaml``, a suite's ``rubric.yaml``) into
a mapping.

Each caller passes its own error type, so a problem stays that file's kind of error (a lab's
``LabConfigError``, the course file's ``CourseError``, a rubric's ``RubricError``) with the same
message from any:
``FILE: cannot read it (why)``, ``FILE: not valid YAML (line L, column C: what)``,
``FILE: expected a mapping ..., found list``. An empty file is an empty mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def load_mapping(path: Path, error: Callable[[str], Exception], expected: str = "a mapping"
                 ) -> dict[Any, Any]:
    """The top-level mapping of the YAML file ``path``; ``error(message)`` raised when the file
    cannot be read, is not YAML, or holds something else than a mapping (``expected`` says
    which mapping, as in "a mapping with title, module, ...")."""
    return parse_mapping(read_text(path, error), path, error, expected)


def read_text(path: Path, error: Callable[[str], Exception]) -> str:
    """The text of ``path`` (UTF-8); ``error(message)`` raised when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read it ({exc})") from None


def parse_mapping(text: str, path: Path, error: Callable[[str], Exception],
                  expected: str = "a mapping") -> dict[Any, Any]:
    """The top-level mapping of the YAML ``text``, read from ``path`` (for a caller that keeps
    the text: a snapshot, the lines of its keys); errors as ``load_mapping``'s."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML ({yaml_problem(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise error(f"{path}: expected {expected}, found {type(data).__name__}")
    return data


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong and where, on one line: "line 1, column 17: expected ',' or ']', but got
    '<stream end>'"."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        return where + exc.problem
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

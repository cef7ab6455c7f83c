"""The rubric: points, visibility and a title for each hidden test of a lab (``rubric.yaml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import RubricError
from rnngrade.lab_contract import DEFAULT_VISIBILITY, RUBRIC, RUBRIC_ENTRY, VISIBILITIES
from rnngrade.yaml_files import parse_mapping, read_text

__all__ = ["DEFAULT_VISIBILITY", "VISIBILITIES", "Rubric", "RubricEntry", "RubricError",
           "load_rubric", "parse_rubric"]


@dataclass(frozen=True)
class RubricEntry:
    test: str
    points: float
    title: str
    visibility: str
    line: int = 0  # where the entry is written in rubric.yaml (0: unknown)


@dataclass(frozen=True)
class Rubric:
    lab: str
    entries: dict[str, RubricEntry]
    path: Path | None = field(default=None, compare=False)
    outcome: bool = True  # False: the tests graded by outcome are not run for this course

    @property
    def max_points(self) -> float:
        return sum(e.points for e in self.entries.values())

    def check_matches(self, collected: set[str] | dict[str, str]) -> None:
        """Every collected test has an entry and every entry a test. ``collected`` may map
        each test to where it is defined (``file:line``), to name it in the error."""
        where = collected if isinstance(collected, dict) else {}
        missing = sorted(set(collected) - set(self.entries))
        extra = sorted(set(self.entries) - set(collected))
        problems = []
        if missing:
            problems.append("tests without a rubric entry: " + ", ".join(
                f"{t} ({where[t]})" if where.get(t) else t for t in missing)
                + (f" (add them to {self.path})" if self.path else ""))
        if extra:
            problems.append("rubric entries without a test: " + ", ".join(
                f"{t} ({self.path}:{self.entries[t].line})" if self.path and self.entries[t].line
                else t for t in extra))
        if problems:
            raise RubricError(f"{self.lab}: " + "; ".join(problems))


def load_rubric(path: Path) -> Rubric:
    """The rubric in ``path``; RubricError naming the file (and line) when it is not one."""
    return parse_rubric(read_text(path, RubricError), path)


def parse_rubric(text: str, path: Path) -> Rubric:
    """The rubric written in ``text`` (read from ``path``); RubricError naming what is wrong
    (the fields and their messages: ``lab_contract.RUBRIC`` and ``RUBRIC_ENTRY``)."""
    expected = "a mapping with 'lab' and 'tests'"
    data = parse_mapping(text, path, RubricError, expected)
    unknown = RUBRIC.unknown(data)
    if unknown:
        raise RubricError(f"{path}: {RUBRIC.unknown_message(unknown)}")
    if not isinstance(data.get("tests"), dict):
        raise RubricError(f"{path}: expected {expected}")
    default_visibility = data.get("visibility", DEFAULT_VISIBILITY)
    entries = {}
    for test, spec in data["tests"].items():
        line = _line_of(text, str(test))
        at = f"{path}:{line}" if line else str(path)
        spec = spec or {}
        if not isinstance(spec, dict):
            raise RubricError(f"{at}: {test}: expected a mapping such as {{points: 1}}")
        unknown = RUBRIC_ENTRY.unknown(spec)
        if unknown:
            raise RubricError(f"{at}: {test}: {RUBRIC_ENTRY.unknown_message(unknown)}")
        visibility = spec.get("visibility", default_visibility)
        if visibility not in VISIBILITIES:
            raise RubricError(RUBRIC_ENTRY["visibility"].wrong(f"{at}: {test}"))
        points = spec.get("points")
        if not isinstance(points, int | float) or isinstance(points, bool) or points < 0:
            raise RubricError(RUBRIC_ENTRY["points"].wrong(f"{at}: {test}"))
        entries[str(test)] = RubricEntry(str(test), float(points), str(spec.get("title", test)),
                                         visibility, line)
    outcome = data.get("outcome", True)
    if not isinstance(outcome, bool):
        raise RubricError(f"{RUBRIC['outcome'].wrong(str(path))} (run the tests graded by "
                          "outcome, or leave them out)")
    return Rubric(str(data.get("lab", path.parent.name)), entries, path, outcome)


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s+['\"]?{re.escape(key)}['\"]?\s*:")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 0

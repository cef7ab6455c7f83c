"""The rubric: points, visibility and a title for each hidden test of a lab (``rubric.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


class RubricError(ValueError):
    """The rubric is malformed or does not match the suite."""


@dataclass(frozen=True)
class RubricEntry:
    test: str
    points: float
    title: str
    visibility: str


@dataclass(frozen=True)
class Rubric:
    lab: str
    entries: dict[str, RubricEntry]

    @property
    def max_points(self) -> float:
        return sum(e.points for e in self.entries.values())

    def check_matches(self, collected: set[str]) -> None:
        """Every collected test has an entry and every entry a test."""
        missing = sorted(collected - set(self.entries))
        extra = sorted(set(self.entries) - collected)
        problems = []
        if missing:
            problems.append(f"tests without a rubric entry: {missing}")
        if extra:
            problems.append(f"rubric entries without a test: {extra}")
        if problems:
            raise RubricError(f"{self.lab}: " + "; ".join(problems))


def load_rubric(path: Path) -> Rubric:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RubricError(f"cannot read rubric {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("tests"), dict):
        raise RubricError(f"{path}: expected a mapping with 'lab' and 'tests'")
    default_visibility = data.get("visibility", "after_published")
    entries = {}
    for test, spec in data["tests"].items():
        spec = spec or {}
        visibility = spec.get("visibility", default_visibility)
        if visibility not in VISIBILITIES:
            raise RubricError(f"{path}: {test}: visibility must be one of {VISIBILITIES}")
        points = spec.get("points")
        if not isinstance(points, int | float) or points < 0:
            raise RubricError(f"{path}: {test}: points must be a non-negative number")
        entries[test] = RubricEntry(test, float(points), spec.get("title", test), visibility)
    return Rubric(str(data.get("lab", path.parent.name)), entries)

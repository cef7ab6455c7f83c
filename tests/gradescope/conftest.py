"""Helpers for the Gradescope tests: a simulated ``/autograder`` tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

from rnngrade.paths import course_root

from .gradescope_format import RESULTS, TEST_FIELDS, TOP_FIELDS

SUBMISSIONS = course_root() / "fixtures" / "submissions" / "lab1"


def autograder_tree(root: Path, submission: str) -> Path:
    """``root`` laid out as Gradescope lays out /autograder, with a lab1 sample submitted."""
    (root / "results").mkdir(parents=True, exist_ok=True)
    source = SUBMISSIONS / submission
    if source.is_dir():
        shutil.copytree(source, root / "submission")
    else:
        (root / "submission").mkdir()
        shutil.copy(source, root / "submission")
    return root


def valid_results(path: Path) -> dict:
    """results.json read and checked against Gradescope's documented format."""
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, RESULTS)
    assert TOP_FIELDS <= set(data)
    for test in data["tests"]:
        assert TEST_FIELDS <= set(test), TEST_FIELDS - set(test)
    return data

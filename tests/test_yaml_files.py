"""A lab's lab.yaml, the course file and a suite's rubric.yaml are read by one module
(rnngrade.yaml_files): a missing file, broken YAML or a top level that is not a mapping is that
file's own kind of error, with the same message from any, naming the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rnngrade.course.config import CourseError, load_course
from rnngrade.errors import GraderError, RubricError, UsageError
from rnngrade.grading.rubric import load_rubric
from rnngrade.labs import LabConfigError, load_lab

LOADERS: list[tuple[Callable[[Path], object], type[Exception], str]] = [
    (load_lab, LabConfigError, "lab.yaml"),
    (lambda path: load_course(path, known_labs=set()), CourseError, "course.yaml"),
    (load_rubric, RubricError, "rubric.yaml"),
]


@pytest.fixture(params=LOADERS, ids=["lab.yaml", "course.yaml", "rubric.yaml"])
def loader(request, tmp_path):
    load, error, name = request.param
    path = tmp_path / "lab90" / name
    path.parent.mkdir()
    return load, error, path


@pytest.mark.parametrize("text, message", [
    (None, "cannot read it ("),
    (b"title: \xff\n", "cannot read it ("),
    ("title: [unclosed", "not valid YAML (line 1, column 17: expected ',' or ']'"),
    ("a: b: c\n", "not valid YAML (line 1, column 5: mapping values are not allowed here)"),
    ("- a list\n", "expected a mapping"),
    ("just words\n", "found str"),
])
def test_an_unusable_file_is_the_loaders_own_error(loader, text, message):
    load, error, path = loader
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(error) as raised:
        load(path)
    said = str(raised.value)
    assert said.startswith(f"{path}: ") and message in said and "\n" not in said


def test_the_errors_keep_their_kinds():
    assert issubclass(LabConfigError, GraderError)  # a broken lab is the grader's fault
    assert issubclass(CourseError, UsageError)  # a broken course file is the instructor's
    assert issubclass(RubricError, GraderError)  # so is a broken rubric: the grader's fault

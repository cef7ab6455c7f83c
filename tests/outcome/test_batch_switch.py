"""``rnngrade batch --no-outcome``: the switch reaches every grading process, the tests graded by
outcome are listed as not run with their points, and a later batch without the switch grades
them again (the end-to-end batches are slow: each starts grading processes)."""

from __future__ import annotations

import json
import shutil

import pytest

from rnngrade.cli import main
from rnngrade.course import batch as course_batch
from rnngrade.errors import ExitCode, GraderError
from rnngrade.gradebook import executors
from rnngrade.gradebook.messages import Fatal
from rnngrade.grading import engine
from rnngrade.paths import course_root

STUB = course_root() / "fixtures" / "submissions" / "lab9" / "stub"
RUN = "test_training_reaches_band"  # lab9's training run, worth 5 points


def _batch(folder, out, *switch: str) -> dict:
    assert main(["batch", str(folder), "--lab", "lab9", "--out", str(out), "--inprocess",
                 "--device", "cpu", "-j", "1", "--quiet", *switch]) == 0
    data = json.loads((out / "lab9" / "students" / "stub" / "results.json").read_text())
    return next(t for t in data["tests"] if t["test_id"] == RUN)


def _left_out(tmp_path) -> tuple:
    folder = tmp_path / "in"
    shutil.copytree(STUB, folder / "stub")
    out = tmp_path / "out"
    left_out = _batch(folder, out, "--no-outcome")
    assert left_out["outcome"] == "skipped" and left_out["max_score"] == 0
    assert "not run" in left_out["output"] and "(5 points, not counted)" in left_out["output"]
    return folder, out


def test_the_switch_reaches_the_batch_and_each_grading_process(tmp_path, monkeypatch, capsys):
    seen: dict = {}

    def fake_run_batch(sources, options, course, times_from, progress=None):
        seen["options"] = options
        raise KeyboardInterrupt  # nothing to grade: stop where the batch would start

    monkeypatch.setattr(course_batch, "run_course_batch", fake_run_batch)
    for switch, expected in (["--no-outcome"], False), ([], True):
        assert main(["batch", str(tmp_path), "--lab", "lab9", "--out", str(tmp_path / "o"),
                     "--quiet", *switch]) == ExitCode.INTERRUPTED
        assert seen["options"].outcome is expected

    def fake_grader(lab, **kwargs):
        seen["grader"] = kwargs
        raise GraderError("stop here")

    monkeypatch.setattr(engine, "shared_grader", fake_grader)
    spec = executors.GradingSpec("lab9", "cpu", True, outcome=False).to_wire()
    assert isinstance(executors.grade_payload(spec, {}), Fatal)
    assert seen["grader"]["outcome"] is False


@pytest.mark.slow
def test_batch_without_outcome_tests_lists_them_as_not_run_with_their_points(tmp_path, capsys):
    _left_out(tmp_path)


@pytest.mark.slow
def test_a_later_batch_without_the_switch_runs_them(tmp_path, capsys):
    folder, out = _left_out(tmp_path)
    ran = _batch(folder, out)  # unchanged submission, other switch: graded again
    assert ran["outcome"] == "failed" and ran["max_score"] == 5
    assert "not implemented yet" in ran["output"]

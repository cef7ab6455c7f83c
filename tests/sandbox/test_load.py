"""Scores do not depend on how busy the machine is: a call's limit is CPU time, and its
wall-clock fallback does not count the time the worker waited for a CPU (``sandbox.cpuclock``).
Each test grades once on an idle machine and once beside busy-loop processes that keep every CPU
occupied (bounded in time, killed afterwards), and expects the same result."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from rnngrade.sandbox import Limits

from ..toy_course import TOY, toy_course

BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def saturated(seconds: float = 300.0) -> Iterator[None]:
    """Four busy-loop processes per CPU (at least eight) for the block, each ending by itself
    after ``seconds`` at the latest."""
    count = max(8, 4 * (os.cpu_count() or 1))
    busy = [subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=seconds)])
            for _ in range(count)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()


LAB_YAML = """\
title: "Toy: CPU-bound functions"
module: work
functions: [work]
uses_torch: false
limits: {call_seconds: 1}
"""
SOLUTION = '''\
import time


def work(seconds):
    """Busy for ``seconds`` of CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds
'''
WRONG = SOLUTION.replace("return seconds", "return -seconds")
SLOW = SOLUTION.replace("end = time.process_time() + seconds",
                        "end = time.process_time() + 3 * seconds")
SUITE = '''\
import pytest


@pytest.mark.parametrize("seconds", [0.4, 0.5, 0.6])
def test_work(student, seconds):
    assert student.work(seconds) == seconds
'''
RUBRIC = f"""\
lab: {TOY}
tests:
  test_work: {{points: 3, title: "work: 0.4 to 0.6 s of CPU time, within a 1 s limit"}}
"""


def scores(folder: Path, submissions: dict[str, str]) -> dict[str, tuple]:
    """Each submission's (status, score, [each test's outcome and message]), graded in a fresh
    process in the toy course."""
    from rnngrade.grading.engine import grade_isolated

    files = {f"graders/suites/{TOY}/lab.yaml": LAB_YAML,
             f"graders/suites/{TOY}/rubric.yaml": RUBRIC,
             f"graders/suites/{TOY}/test_work_hidden.py": SUITE,
             f"solutions/{TOY}/work.py": SOLUTION}
    graded = {}
    folder.mkdir()
    with toy_course(folder, files):
        for name, source in submissions.items():
            (folder / name).mkdir()
            (folder / name / "work.py").write_text(source)
            result = grade_isolated(folder / name / "work.py", TOY, device="cpu")
            graded[name] = (result.status, result.score,
                            [(t.outcome, t.message) for t in result.tests])
    return graded


@pytest.mark.slow  # grades three toy submissions twice, once beside busy processes (~40 s)
def test_a_class_graded_on_a_saturated_machine_scores_as_when_idle(sandbox_protected,
                                                                    tmp_path: Path):
    """Calls of 0.4 to 0.6 s of CPU time under a 1 s limit: on a saturated machine each takes
    several seconds of wall clock, and still passes; one that needs 1.2 to 1.8 s times out,
    saying it used its CPU time, on either machine."""
    submissions = {"right": SOLUTION, "wrong": WRONG, "slow": SLOW}
    idle = scores(tmp_path / "idle", submissions)
    with saturated():
        busy = scores(tmp_path / "busy", submissions)
    assert busy == idle
    assert idle["right"][:2] == ("graded", 3.0) and idle["wrong"][:2] == ("graded", 0.0)
    slow = idle["slow"]
    assert slow[1] == 0.0
    assert all("work timed out: used 1 s of CPU time" in message for _, message in slow[2])


@pytest.mark.slow  # 100 MB through a pipe beside busy processes (~15 s)
def test_a_print_flood_on_a_saturated_machine_is_cut_by_truncation(sandbox, hostile_source,
                                                                  lab1_args):
    """The flood is contained by the output cap, not stopped by a timeout, however long the
    busy machine takes to carry 100 MB through the pipe."""
    args, (a_next, yt_pred) = lab1_args
    with saturated():
        runner = sandbox(hostile_source("print_flood"), limits=Limits(call_seconds=1))
        result = runner.call("rnn_cell_forward", args)
    assert np.allclose(result.value[0], a_next) and np.allclose(result.value[1], yt_pred)
    assert result.stdout.endswith("\n[... truncated]")
    assert len(result.stdout) <= Limits().output_bytes + 20
    assert result.usage is not None and result.usage.cpu is not None and result.usage.cpu < 1


def test_a_load_that_finished_while_the_grader_was_busy_is_on_time(sandbox):
    """The submission loads while the grader gets on with its own work; a reply that came in
    meanwhile is on time however long that work took (a busy grader is not the student's
    waiting: the worker, done, sleeps, and its waiting clock runs on)."""
    import time

    runner = sandbox("def f():\n    return 41 + 1\n",
                     limits=Limits(call_seconds=0.2, wall_seconds=0.5))
    time.sleep(1.5)  # the grader's own work, three times the wall-clock fallback
    assert runner.call("f").value == 42
    assert runner.load_notes() == []


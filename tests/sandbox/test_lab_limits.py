"""Limits per lab (``lab.yaml``) and per hidden test (``@pytest.mark.limits``) reach the sandbox:
a call within the lab's limits but beyond a test's own fails in that test only."""

from __future__ import annotations

from pathlib import Path

from ..toy_course import TOY, toy_course

LAB_YAML = """\
title: "Toy: slow functions"
module: slow
functions: [wait, spin]
uses_torch: false
limits: {call_seconds: 8}
"""
SOLUTION = '''\
import time


def wait(seconds):
    time.sleep(seconds)
    return seconds


def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds
'''
SUITE = '''\
import pytest


@pytest.mark.limits(call_seconds=0.3)
def test_spin_short_limit(student):
    assert student.spin(0.6) == 0.6


@pytest.mark.limits(wall_seconds=0.3)
def test_wait_short_limit(student):
    assert student.wait(0.6) == 0.6


def test_wait_lab_limit(student):
    assert student.wait(0.6) == 0.6


@pytest.mark.limits(cpu_seconds=1)
def test_spin_short_cpu(student):
    assert student.spin(1.2) == 1.2


def test_spin_lab_cpu(student):
    assert student.spin(1.2) == 1.2
'''
RUBRIC = f"""\
lab: {TOY}
tests:
  test_spin_short_limit: {{points: 1, title: "spin, 0.3 s of CPU per call"}}
  test_wait_short_limit: {{points: 1, title: "wait, 0.3 s of waiting per call"}}
  test_wait_lab_limit: {{points: 1, title: "wait, the lab's limit"}}
  test_spin_short_cpu: {{points: 1, title: "spin, 1 s of CPU"}}
  test_spin_lab_cpu: {{points: 1, title: "spin, the lab's CPU limit"}}
"""


def test_a_test_limit_applies_to_that_test_only(sandbox_protected, tmp_path: Path):
    from rnngrade.grading.engine import grade_isolated

    files = {f"graders/suites/{TOY}/lab.yaml": LAB_YAML,
             f"graders/suites/{TOY}/rubric.yaml": RUBRIC,
             f"graders/suites/{TOY}/test_slow_hidden.py": SUITE,
             f"solutions/{TOY}/slow.py": SOLUTION}
    with toy_course(tmp_path, files):
        submission = tmp_path / "slow.py"
        submission.write_text(SOLUTION)
        result = grade_isolated(submission, TOY, device="cpu")
    by_name = {t.name: t for t in result.tests}
    assert by_name["test_wait_lab_limit"].score == 1.0
    assert by_name["test_spin_lab_cpu"].score == 1.0
    short = by_name["test_spin_short_limit"]
    assert short.score == 0.0 and "timed out: used 0.3 s of CPU time" in short.message
    short = by_name["test_wait_short_limit"]
    assert short.score == 0.0 and "timed out: waited 0.3 s (wall clock)" in short.message
    cpu = by_name["test_spin_short_cpu"]
    assert cpu.score == 0.0 and "CPU time limit 1 s" in cpu.message

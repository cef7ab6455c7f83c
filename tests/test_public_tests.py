"""`pytest assignments/labN` as a student sees it: 0 points on the stub, full with the reference."""

import re
import subprocess
import sys

import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import available_labs, get_lab

PUBLIC_LABS = [lab for lab in available_labs()
               if any(lab.assignment_dir().glob("test_*_public.py"))]


def run_public(course, lab):
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", f"assignments/{lab.name}", "-q", "-p", "no:randomly"],
        cwd=course, capture_output=True, text=True, timeout=300)
    return completed.returncode, completed.stdout + completed.stderr


def points(output, lab):
    match = re.search(rf"^{lab.name}: ([\d.]+)/([\d.]+) public points$", output, re.MULTILINE)
    assert match, f"no points summary in:\n{output[-2000:]}"
    return float(match.group(1)), float(match.group(2))


@pytest.mark.parametrize("lab", PUBLIC_LABS, ids=lambda lab: lab.name)
def test_stub_scores_zero_and_every_failure_says_not_implemented(course_copy, lab):
    code, output = run_public(course_copy, lab)
    earned, possible = points(output, lab)
    assert code == 1 and earned == 0 and possible > 0
    failures = re.findall(r"^_{3,} (test_\w+) _{3,}\n(.*)$", output, re.MULTILINE)
    assert failures and all(text.startswith("not implemented yet") for _, text in failures), \
        output[-3000:]
    assert "Traceback" not in output


@pytest.mark.parametrize("lab", PUBLIC_LABS, ids=lambda lab: lab.name)
def test_reference_pasted_over_the_stub_gets_full_points(course_copy, lab):
    source = strip_markers(lab.solution_path(course_copy).read_text())
    lab.stub_path(course_copy).write_text(source)
    code, output = run_public(course_copy, lab)
    earned, possible = points(output, lab)
    assert code == 0 and earned == possible > 0, output[-3000:]


def test_a_wrong_value_is_reported_with_place_and_size(course_copy):
    lab = get_lab("lab1")
    source = strip_markers(lab.solution_path(course_copy).read_text())
    lab.stub_path(course_copy).write_text(source.replace("yt_pred = softmax(logits)",
                                                         "yt_pred = softmax(2 * logits)"))
    _, output = run_public(course_copy, lab)
    assert "yt_pred: values differ beyond tolerance" in output
    assert "largest error" in output and "expected" in output
    assert "lab1: 12/20 public points" in output  # cell and sequence values fail: 8 points

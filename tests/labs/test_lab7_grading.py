"""Grading lab7 end to end (in-process): the reference gets full marks, the stub 0, known
mistakes are named in the feedback, and a linear_scan that loops over time loses the points of
the logarithmic-rounds test only. The full mutant sweep is `rnngrade validate --lab lab7`."""

import re

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .grading import assert_full_marks, assert_stub_verdict, grade_lab_source

LAB = get_lab("lab7")
SUBMISSIONS = course_root() / "fixtures" / "submissions" / LAB.name

SEQUENTIAL_SCAN = '''    dtype = torch.promote_types(a.dtype, b.dtype)
    a = torch.broadcast_to(a.to(dtype), b.shape)
    h = torch.zeros_like(b[:, 0], dtype=dtype)
    states = []
    for t in range(b.shape[1]):
        h = a[:, t] * h + b[:, t]
        states.append(h)
    return torch.stack(states, dim=1)
'''


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


def test_reference_gets_full_marks():
    result = grade(SUBMISSIONS / "reference", LAB.name, device="cpu", inprocess=True)
    assert_full_marks(result)


def test_stub_scores_zero_and_says_not_implemented():
    result = grade(SUBMISSIONS / "stub", LAB.name, device="cpu", inprocess=True)
    assert_stub_verdict(result)


@pytest.mark.slow
@pytest.mark.parametrize("mutant, failing_test", [
    # the wrapped-around tail shows before the impulse
    ("fft_without_padding", "test_forms_impulse_response"),
    # (a₂, b₂) ∘ (a₁, b₁): wrong from the third step on
    ("scan_operator_swapped", "test_linear_scan_values"),
])
def test_mutant_loses_points_and_is_named(tmp_path, mutant, failing_test):
    table = {m.name: m for m in load_mutant_table(LAB.suite_dir() / "mutants.py").mutants}
    source = table[mutant].apply(LAB.solution_path().read_text(encoding="utf-8"))
    result = grade_source(tmp_path, source)
    assert result.score < result.max_score
    test = next(t for t in result.tests if t.name == failing_test)
    assert test.score < test.max_score
    assert any(d.name == mutant for d in test.diagnosis), test.diagnosis


def test_scan_that_loops_over_time_fails_only_the_rounds_test(tmp_path):
    source = LAB.solution_path().read_text(encoding="utf-8")
    body = re.compile(r"(def linear_scan.*?# BEGIN SOLUTION\n).*?(    # END SOLUTION)", re.S)
    looped, count = body.subn(lambda m: m.group(1) + SEQUENTIAL_SCAN + m.group(2), source)
    assert count == 1
    result = grade_source(tmp_path, looped)
    lost = {t.name for t in result.tests if t.score < t.max_score}
    assert lost == {"test_linear_scan_has_no_loop_over_time"}
    test = next(t for t in result.tests if t.name == "test_linear_scan_has_no_loop_over_time")
    assert "loops over time" in test.message

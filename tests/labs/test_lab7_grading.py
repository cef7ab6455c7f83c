"""Grading lab7 end to end (in-process): a linear_scan that loops over time loses the points of
the logarithmic-rounds test only. The reference, stub and mutants are graded by
test_lab_grading.py."""

import re

from rnngrade.labs import get_lab

from .grading import grade_lab_source

LAB = get_lab("lab7")

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

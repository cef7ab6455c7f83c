"""`rnngrade validate` holds for lab1, and fails when the hidden suite loses a check."""

import os
import re
import subprocess
import sys

import pytest

from rnngrade.grading.rubric import RubricError, load_rubric


def run_validate(course, *args):
    env = {**os.environ, "RNNGRADE_ROOT": str(course)}
    done = subprocess.run([sys.executable, "-m", "rnngrade.cli", "validate", "--lab", "lab1",
                           "--device", "cpu", *args], cwd=course, env=env, capture_output=True,
                          text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow  # `make validate` in CI runs the same for every lab
def test_validate_lab1_prints_margins_and_mutants_and_exits_zero(course_copy):
    code, output = run_validate(course_copy)
    assert code == 0, output[-4000:]
    assert "ref. error/allowed" in output and "margin" in output
    assert "recurrent_term_dropped" in output and "[ok]" in output
    assert "lab1: all checks hold" in output


def test_validate_fails_when_a_check_is_removed(course_copy):
    """Without the large-logit softmax test nothing catches the unstable softmax."""
    suite = course_copy / "graders" / "suites" / "lab1"
    tests = suite / "test_rnn_hidden.py"
    source = tests.read_text()
    start = source.index('@pytest.mark.parametrize("scale"')
    end = source.index("@pytest.mark.parametrize", start + 10)
    tests.write_text(source[:start] + source[end:])
    rubric = suite / "rubric.yaml"
    rubric.write_text("\n".join(line for line in rubric.read_text().splitlines()
                                if "test_softmax_extreme_logits" not in line) + "\n")
    code, output = run_validate(course_copy)
    assert code == 1
    assert "mutant 'softmax_unstable' scores full marks" in output


def test_a_rubric_that_does_not_match_the_suite_is_refused(tmp_path):
    path = tmp_path / "rubric.yaml"
    path.write_text("lab: lab1\ntests:\n  test_a: {points: 1}\n")
    rubric = load_rubric(path)
    with pytest.raises(RubricError, match=r"without a rubric entry: test_b \(t\.py:7\)"):
        rubric.check_matches({"test_a": "t.py:1", "test_b": "t.py:7"})
    with pytest.raises(RubricError, match=r"entries without a test: test_a \(.*rubric.yaml:3\)"):
        rubric.check_matches({"test_b": "t.py:7"})
    path.write_text("lab: lab1\ntests:\n  test_a: {points: -1}\n")
    with pytest.raises(RubricError, match="non-negative"):
        load_rubric(path)


def test_validate_on_a_missing_device_says_so_without_a_traceback():
    from rnngrade.harness.checks.devices import cuda_unavailable_reason

    if not cuda_unavailable_reason():
        pytest.skip("this machine has a CUDA device")
    done = subprocess.run([sys.executable, "-m", "rnngrade.cli", "validate", "--lab", "lab1",
                           "--device", "cuda"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 4
    assert "the grader is broken: --device cuda was asked for but" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_validate_names_the_line_of_a_mutant_that_does_not_apply(course_copy, capsys):
    from rnngrade.cli import main

    from .course_env import course_at
    from .test_grader_faults import break_mutant

    break_mutant(course_copy)
    with course_at(course_copy):
        code = main(["validate", "--lab", "lab1", "--device", "cpu"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"PROBLEM: .*graders/suites/lab1/mutants\.py:\d+: mutant "
                     r"'prediction_from_a_prev': its edit target occurs 0 times", out), out


def test_validate_names_a_hidden_test_without_a_rubric_entry(course_copy, capsys):
    from rnngrade.cli import main

    from .course_env import course_at

    rubric = course_copy / "graders/suites/lab1/rubric.yaml"
    rubric.write_text(rubric.read_text().replace("  test_softmax_dtype:", "  test_softmax_dtypes:"))
    with course_at(course_copy):
        code = main(["validate", "--lab", "lab1", "--device", "cpu"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"tests without a rubric entry: test_softmax_dtype \(.*test_rnn_hidden\.py:"
                     r"\d+\)", out), out
    assert re.search(r"entries without a test: test_softmax_dtypes \(.*rubric\.yaml:\d+\)", out)


def test_a_failing_reference_is_reported_with_the_reason(course_copy):
    """A reference that disagrees with an independent oracle (here nn.RNN) fails validate, and
    the report says which check failed and by how much, not only the test's name."""
    solution = course_copy / "solutions" / "lab1" / "rnn.py"
    source = solution.read_text()
    broken = source.replace("inputs = X @ W_x.T + b", "inputs = X @ W_x.T + 1.01 * b")
    assert broken != source
    solution.write_text(broken)
    code, output = run_validate(course_copy)
    assert code == 1
    assert re.search(r"the reference scores [\d.]+/\d+ \(failing: "
                     r".*test_rnn_forward_batch_vs_torch", output)
    assert re.search(r"\n  test_rnn_forward_batch_vs_torch: case .*-cpu: check "
                     r"`rnn_forward_batch on cpu`: \| .*values differ", output), output[-3000:]
    # nothing about the known mistakes, which were compared with a wrong reference
    assert "the known mistakes were not graded: the reference must score full marks" in output
    assert "mutant '" not in output

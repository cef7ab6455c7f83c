"""A failure of trusted code (a mutant, the reference, the rubric, a renderer) is the grader's:
the submission is not graded, the student is told only that, the instructor gets the details,
``grade`` exits 4 with its reports written, and ``batch`` records the student as not graded."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.grading.engine import grade
from rnngrade.results.model import FailureKind, Status

from .course_env import course_at, edit

BUGGY = Path("fixtures/submissions/lab1/buggy_feeds_a0")
REFERENCE_LINE = "logits = np.dot(Wya, a_next) + by"
MUTANT_TARGET = '("logits = np.dot(Wya, a_next) + by", "logits = np.dot(Wya, a_prev) + by")'


def break_mutant(course: Path) -> None:
    """A TA's plausible edit: a mutant whose target no longer matches the reference."""
    edit(course / "graders/suites/lab1/mutants.py", MUTANT_TARGET,
         '("logits = np.dot(Wya, a_next)  + by", "logits = np.dot(Wya, a_prev) + by")')


def break_reference_on_wide_inputs(course: Path) -> None:
    """A reference that raises on some hidden inputs (found only while grading)."""
    edit(course / "solutions/lab1/rnn.py", "def softmax(x):\n",
         "def softmax(x):\n    if x.shape[1] == 3:\n        raise RuntimeError('reference bug')\n")


def student_text(out: Path) -> str:
    return "".join((out / name).read_text(encoding="utf-8")
                   for name in ("feedback.md", "feedback.html", "junit.xml"))


def test_a_reworded_reference_line_drops_its_mutant_and_the_class_is_graded(course_copy,
                                                                            tmp_path, capsys):
    """A TA rewrites a reference line a mutant quotes, with the same value: the mutant no
    longer applies. Every student is still graded as before; the mutant is left out of
    diagnosis, and the instructor is warned on stderr and in the results' grader notes."""
    names = ("reference", "buggy_feeds_a0", "buggy_softmax_axis")
    with course_at(course_copy):
        before = {name: grade(course_copy / "fixtures/submissions/lab1" / name, "lab1",
                              device="cpu", inprocess=True) for name in names}
    edit(course_copy / "solutions/lab1/rnn.py", REFERENCE_LINE, "logits = Wya @ a_next + by")
    scores = {}
    for name in names:
        out = tmp_path / name
        with course_at(course_copy):
            code = main(["grade", str(course_copy / "fixtures/submissions/lab1" / name),
                         "--lab", "lab1", "--out", str(out), "--device", "cpu", "--inprocess"])
        assert code == ExitCode.OK
        results = json.loads((out / "results.json").read_text())
        assert results["status"] == Status.GRADED
        scores[name] = (results["score"], results["max_score"])
        notes = results["grader_notes"]
        assert len(notes) == 1 and "mutants.py:" in notes[0], notes
        assert "mutant 'prediction_from_a_prev'" in notes[0]
        assert "left out of diagnosis" in notes[0]
        assert "prediction_from_a_prev" not in student_text(out)  # the instructor's only
    assert scores == {name: (r.score, r.max_score) for name, r in before.items()}
    assert all(not r.grader_notes for r in before.values())
    assert scores["reference"][0] == scores["reference"][1] > 0
    assert 0 < scores["buggy_feeds_a0"][0] < scores["buggy_feeds_a0"][1]
    assert 0 < scores["buggy_softmax_axis"][0] < scores["buggy_softmax_axis"][1]
    stderr = capsys.readouterr().err
    assert "rnngrade: warning:" in stderr and "'prediction_from_a_prev'" in stderr
    assert "the grader is broken" not in stderr and "Traceback" not in stderr


def test_a_reference_that_fails_while_grading_is_a_grader_error(course_copy):
    break_reference_on_wide_inputs(course_copy)
    with course_at(course_copy):
        result = grade(course_copy / BUGGY, "lab1", device="cpu", inprocess=True)
    assert result.status == Status.GRADER_ERROR
    assert result.score == 0 and not result.graded
    assert "reference bug" in result.grader_detail and "rnn.py" in result.grader_detail
    for test in result.tests:
        assert "reference bug" not in test.message and not test.diagnosis
    assert "reference bug" not in json.dumps(
        {k: v for k, v in result.to_dict().items() if k != "grader_detail"})


def test_a_check_that_fails_on_the_students_value_is_still_the_students(course_copy):
    with course_at(course_copy):
        result = grade(course_copy / BUGGY, "lab1", device="cpu", inprocess=True)
    assert result.status == Status.GRADED and 0 < result.score < result.max_score
    kinds = {c.kind for t in result.tests for c in t.cases}
    assert FailureKind.TRUSTED not in kinds and not result.grader_detail


def test_a_rubric_without_an_entry_for_a_test_exits_4_in_one_line(course_copy, tmp_path,
                                                                   capsys):
    rubric = course_copy / "graders/suites/lab1/rubric.yaml"
    rubric.write_text("\n".join(line for line in rubric.read_text().splitlines()
                                if "test_softmax_dtype" not in line) + "\n")
    out = tmp_path / "out"
    with course_at(course_copy):
        code = main(["grade", str(course_copy / BUGGY), "--lab", "lab1", "--out", str(out),
                     "--device", "cpu", "--inprocess"])
    assert code == ExitCode.GRADER
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "tests without a rubric entry: test_softmax_dtype" in lines[0]
    assert "test_rnn_hidden.py:" in lines[0]
    assert json.loads((out / "results.json").read_text())["status"] == "grader_error"


def test_a_renderer_that_fails_still_leaves_results_json(monkeypatch, tmp_path, capsys):
    import rnngrade.results.render as render

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("template bug")

    monkeypatch.setattr(render, "write_reports", broken)
    out = tmp_path / "out"
    code = main(["grade", "fixtures/submissions/lab1/reference", "--lab", "lab1", "--out",
                 str(out), "--device", "cpu", "--inprocess"])
    assert code == ExitCode.GRADER
    data = json.loads((out / "results.json").read_text())
    assert "template bug" in data["grader_detail"] and data["score"] == data["max_score"]
    assert "the grader is broken" in capsys.readouterr().err


def grade_rows(out: Path) -> dict[str, dict[str, str]]:
    """grades.csv by student, read by column name."""
    with (out / "grades.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_batch_records_a_grader_fault_as_not_graded_and_grades_it_next_run(course_copy,
                                                                           tmp_path):
    """Subprocesses: the batch's workers must see the temporary course from their start."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("reference", "buggy_feeds_a0"):
        (folder / name).mkdir()
        (folder / name / "rnn.py").write_text(
            (course_copy / "fixtures/submissions/lab1" / name / "rnn.py").read_text())
    pristine = (course_copy / "solutions/lab1/rnn.py").read_text()
    break_reference_on_wide_inputs(course_copy)
    out = tmp_path / "out"
    env = {**os.environ, "RNNGRADE_ROOT": str(course_copy)}

    def batch() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rnngrade.cli", "batch", str(folder), "--lab", "lab1",
             "--out", str(out), "--inprocess", "--device", "cpu", "-j", "1", "--quiet"],
            env=env, capture_output=True, text=True, timeout=600)

    done = batch()
    assert done.returncode == ExitCode.GRADER, done.stderr[-3000:]
    rows = grade_rows(out)
    for student in ("reference", "buggy_feeds_a0"):
        assert rows[student]["status"] == "grader_error"
        assert rows[student]["score"] == "" and rows[student]["percent"] == ""  # not even 0
    assert "grader error" in (out / "lab1" / "summary.html").read_text()
    (course_copy / "solutions/lab1/rnn.py").write_text(pristine)
    done = batch()
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    rows = grade_rows(out)
    assert rows["reference"]["status"] == "graded" and rows["reference"]["score"] == "24"
    assert rows["buggy_feeds_a0"]["status"] == "graded"

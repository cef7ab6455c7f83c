"""run_autograder's grading in a simulated /autograder tree: the reference, the stub and a buggy
submission, each checked against Gradescope's documented results format."""

from __future__ import annotations

import json

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradescope import runner
from rnngrade.gradescope.runner import autograder_root, run_autograder
from rnngrade.grading.scoring import grader_failed

from .conftest import autograder_tree, valid_results

LAB1_POINTS = 24


@pytest.mark.parametrize("submission, expected", [
    ("reference", "full"), ("stub", "zero"), ("buggy_feeds_a0", "partial")])
def test_results_follow_gradescope_format(tmp_path, submission, expected):
    root = autograder_tree(tmp_path / "autograder", submission)
    said: list[str] = []
    run = run_autograder(root, "lab1", device="cpu", inprocess=True, say=said.append)
    assert run.exit_code == ExitCode.OK
    data = valid_results(root / "results" / "results.json")
    score = data["score"]
    assert {"full": score == LAB1_POINTS, "zero": score == 0,
            "partial": 0 < score < LAB1_POINTS}[expected], score
    assert score == pytest.approx(sum(t["score"] for t in data["tests"]))
    # plain text everywhere: Gradescope renders nothing the submission wrote as HTML
    assert data["output_format"] == data["test_output_format"] == "text"
    assert {t["output_format"] for t in data["tests"]} == {"text"}
    assert {t["name_format"] for t in data["tests"]} == {"text"}
    numbers = [t["number"] for t in data["tests"]]
    assert len(set(numbers)) == len(numbers)
    # "2.1" is the first test of the lab's second function, rnn_cell_forward
    by_number = {t["number"]: t for t in data["tests"]}
    assert by_number["1.1"]["tags"] == ["softmax"]
    assert by_number["2.1"]["tags"] == ["rnn_cell_forward"]
    assert by_number["4.1"]["tags"] == ["rnn_forward_batch"]
    assert all(t["extra_data"]["test_id"].startswith("test_") for t in data["tests"])
    assert data["extra_data"]["lab"] == "lab1"
    # which protections were in force: for the instructor (printed) and in the output
    assert any("isolation: none (--inprocess)" in line for line in said)
    assert "grader's own process" in data["output"]
    failing = [t for t in data["tests"] if t["status"] == "failed"]
    if expected == "partial":
        assert failing and all(t["score"] < t["max_score"] for t in failing)
    if expected == "full":
        assert not failing


def test_grader_fault_leaves_no_results_to_score_the_student(tmp_path, monkeypatch):
    import rnngrade.grading.engine as engine
    from rnngrade.grading.rubric import load_rubric
    from rnngrade.labs import get_lab

    root = autograder_tree(tmp_path / "autograder", "reference")
    stale = root / "results" / "results.json"
    stale.write_text(json.dumps({"score": 24}))
    lab = get_lab("lab1")
    broken = grader_failed(lab, load_rubric(lab.suite_dir() / "rubric.yaml"), "rnn.py", "cpu",
                           "Traceback: the rubric broke")
    monkeypatch.setattr(engine, "grade", lambda *args, **kwargs: broken)
    said: list[str] = []
    run = run_autograder(root, "lab1", inprocess=True, say=said.append)
    assert run.exit_code == ExitCode.GRADER
    assert not stale.exists()  # an earlier run's results are not uploaded instead
    assert any("the rubric broke" in line for line in said)
    assert any("not scored" in line for line in said)


def test_root_comes_from_the_environment(tmp_path, monkeypatch, capsys):
    assert autograder_root({}) == runner.Path("/autograder")
    assert autograder_root({"AUTOGRADER_ROOT": str(tmp_path)}) == tmp_path
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path / "nowhere"))
    assert main(["gradescope-run", "--lab", "lab1", "--inprocess"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "nowhere/submission is not a folder" in err and "Traceback" not in err

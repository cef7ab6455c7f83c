"""The GitHub Actions workflows: parsed with yaml, their triggers and steps checked."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from rnngrade.cli import build_parser
from rnngrade.release.build import TORCH_VERSION, workflow

from ..conftest import ROOT

WORKFLOWS = ROOT / "templates" / "workflows"


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and job["timeout-minutes"] <= 60
    return job["steps"]


def step_using(data: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in steps(data) if s.get("uses", "").startswith(action + "@")]


def runs(data: dict[str, Any]) -> str:
    return "\n".join(s.get("run", "") for s in steps(data))


def test_the_student_workflow_runs_the_public_tests_on_push_and_pull_request():
    data = load((WORKFLOWS / "student.yml").read_text())
    assert set(data["on"]) == {"push", "pull_request"}
    assert data["permissions"] == {"contents": "read"}
    assert len(step_using(data, "actions/checkout")) == 1
    (python,) = step_using(data, "actions/setup-python")
    assert python["with"]["python-version"] == "3.11"
    commands = runs(data)
    assert f'pip install "torch=={TORCH_VERSION}" --index-url ' \
           "https://download.pytorch.org/whl/cpu" in commands
    assert "python -m pip install -e ." in commands
    (tests,) = [s for s in steps(data) if "pytest assignments" in s.get("run", "")]
    assert tests["shell"] == "bash"  # bash -eo pipefail: `| tee` keeps pytest's exit status
    summary = [s for s in steps(data) if "GITHUB_STEP_SUMMARY" in s.get("run", "")]
    assert summary and summary[0]["if"] == "always()"
    order = [s.get("uses", s.get("run", ""))[:20] for s in steps(data)]
    assert order.index("actions/checkout@v4") < order.index("actions/setup-python")


def test_the_grading_workflow_grades_pull_requests_with_the_fetched_grader():
    data = load((WORKFLOWS / "grading.yml").read_text())
    assert set(data["on"]) == {"pull_request"}  # never pull_request_target with student code
    assert data["permissions"] == {"contents": "read", "pull-requests": "write"}
    submission, grader = step_using(data, "actions/checkout")
    assert submission["with"] == {"path": "submission", "persist-credentials": False}
    assert grader["with"]["repository"] == "${{ vars.RNNGRADE_GRADER_REPO }}"
    assert grader["with"]["token"] == "${{ secrets.RNNGRADE_GRADER_TOKEN }}"
    assert grader["with"]["persist-credentials"] is False and grader["with"]["path"] == "grader"
    assert step_using(data, "actions/setup-python")[0]["with"]["python-version"] == "3.11"
    commands = runs(data)
    assert f'"torch=={TORCH_VERSION}"' in commands and "pip install -e ./grader" in commands
    (grade,) = [s for s in steps(data) if "rnngrade ci" in s.get("run", "")]
    assert grade["env"]["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    assert grade["env"]["RNNGRADE_ROOT"].endswith("/grader")
    args = build_parser().parse_args(shlex.split(grade["run"])[1:])
    assert args.command == "ci" and args.submission == Path("submission")
    assert args.out == Path("feedback") and not args.inprocess  # student code in the sandbox
    (upload,) = step_using(data, "actions/upload-artifact")
    assert upload["with"]["path"] == "feedback" and upload["if"] == "always()"


@pytest.mark.parametrize("name", ["student.yml", "grading.yml"])
def test_every_action_is_pinned_to_a_major_version(name):
    data = load((WORKFLOWS / name).read_text())
    for step in steps(data):
        assert "uses" not in step or re.fullmatch(r"actions/[\w-]+@v\d+", step["uses"]), step


def test_the_release_ships_the_workflows_with_its_torch_pin(release):
    folder = release / ".github" / "workflows"
    public = load((folder / "public-tests.yml").read_text())
    assert public == load(workflow("student.yml", TORCH_VERSION))
    assert (folder / "public-tests.yml").read_text() == (WORKFLOWS / "student.yml").read_text()
    assert load((folder / "grading.yml").read_text()) == load((WORKFLOWS / "grading.yml")
                                                              .read_text())


def test_another_torch_pin_reaches_every_install_line():
    text = workflow("grading.yml", "2.99.1")
    assert '"torch==2.99.1"' in text and TORCH_VERSION not in text
    assert "torch" not in workflow("student.yml", None)


def test_the_student_readme_and_the_workflow_install_the_same_way(release):
    readme = (release / "README.md").read_text()
    commands = runs(load((release / ".github" / "workflows" / "public-tests.yml").read_text()))
    for line in ("python -m pip install -e .",
                 f"torch=={TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu"):
        assert line in readme and line in commands.replace('"', "")

"""``rnngrade gradescope``: the bundle's layout, its scripts, and its run_autograder run as
Gradescope runs it, in a simulated /autograder tree."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradescope.bundle import build_bundle
from rnngrade.grading.rubric import load_rubric, parse_rubric
from rnngrade.labs import available_labs, get_lab
from rnngrade.release.build import TORCH_INDEX, TORCH_VERSION

from .conftest import autograder_tree, valid_results

BIN = Path(sys.executable).parent  # the environment's `rnngrade` is the one on PATH


def test_bundle_has_the_scripts_at_its_root_and_only_this_labs_course_files(tmp_path, capsys):
    assert main(["gradescope", "--lab", "lab1", "--out", str(tmp_path)]) == ExitCode.OK
    assert "autograder.zip" in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "autograder.zip") as bundle:
        names = set(bundle.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in bundle.infolist()}
        setup = bundle.read("setup.sh").decode()
        run = bundle.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder"} <= names
    assert all(modes[name] & stat.S_IXUSR for name in ("setup.sh", "run_autograder"))
    assert {"course/pyproject.toml", "course/graders/suites/lab1/rubric.yaml",
            "course/solutions/lab1/rnn.py", "course/templates/feedback.html.j2",
            "course/graders/rnngrade/cli.py"} <= names
    assert not any(n.startswith(("course/solutions/lab2", "course/graders/suites/lab2",
                                 "course/fixtures", "course/assignments")) for n in names)
    assert not any("__pycache__" in n for n in names)
    assert f"torch=={TORCH_VERSION} --index-url {TORCH_INDEX}" in setup
    assert "pip install --quiet -e" in setup and "/usr/local/bin" not in setup
    assert "rnngrade gradescope-run --lab lab1" in run and "--inprocess" not in run
    assert 'AUTOGRADER_ROOT="${AUTOGRADER_ROOT:-/autograder}"' in run
    for script in (setup, run):
        checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
        assert checked.returncode == 0, checked.stderr
    first = (tmp_path / "autograder.zip").read_bytes()
    build_bundle("lab1", tmp_path, torch_version=TORCH_VERSION)
    assert (tmp_path / "autograder.zip").read_bytes() == first  # same course, same bytes


def test_a_test_is_visible_at_once_unless_its_rubric_says_otherwise(tmp_path):
    rubric = parse_rubric("lab: lab1\ntests:\n  test_a: {points: 1}\n"
                          "  test_b: {points: 1, visibility: after_due_date}\n",
                          tmp_path / "rubric.yaml")
    assert {e.test: e.visibility for e in rubric.entries.values()} == {
        "test_a": "visible", "test_b": "after_due_date"}


@pytest.mark.parametrize("lab", [lab.name for lab in available_labs()
                                 if (lab.suite_dir() / "rubric.yaml").is_file()])
def test_every_lab_shows_its_tests_in_gradescope_as_soon_as_they_are_graded(lab):
    rubric = load_rubric(get_lab(lab).suite_dir() / "rubric.yaml")
    assert {e.visibility for e in rubric.entries.values()} == {"visible"}


def test_unknown_lab_and_bad_out_are_usage_errors(tmp_path, capsys):
    assert main(["gradescope", "--lab", "lab99", "--out", str(tmp_path)]) == ExitCode.USAGE
    (tmp_path / "file").write_text("")
    assert main(["gradescope", "--lab", "lab1", "--out", str(tmp_path / "file")]) == \
        ExitCode.USAGE
    err = capsys.readouterr().err
    assert "unknown lab 'lab99'" in err and "not a folder" in err and "Traceback" not in err


def _run_autograder(tmp_path: Path, submission: str, *, inprocess: bool) -> tuple[str, Path]:
    """Build the bundle, lay out /autograder as Gradescope does, run its run_autograder."""
    bundle = build_bundle("lab1", tmp_path / "bundle", torch_version=TORCH_VERSION,
                          device="cpu", inprocess=inprocess)
    root = autograder_tree(tmp_path / f"autograder-{submission}", submission)
    with zipfile.ZipFile(bundle.path) as archive:
        archive.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    os.chmod(root / "run_autograder", 0o755)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           # the course files come from the bundle, not from this checkout
           "RNNGRADE_ROOT": str(root / "source" / "course")}
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, text=True,
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, root / "results" / "results.json"


def test_run_autograder_calls_the_rnngrade_on_path_with_the_root(tmp_path):
    """The script's contract, with a stand-in `rnngrade` that records how it was called."""
    bundle = build_bundle("lab1", tmp_path / "bundle", torch_version=TORCH_VERSION)
    with zipfile.ZipFile(bundle.path) as archive:
        script = tmp_path / "run_autograder"
        script.write_bytes(archive.read("run_autograder"))
    script.chmod(0o755)
    fake = tmp_path / "bin" / "rnngrade"
    fake.parent.mkdir()
    fake.write_text('#!/usr/bin/env bash\necho "root=$AUTOGRADER_ROOT args=$*"\n')
    fake.chmod(0o755)
    env = {"PATH": f"{fake.parent}{os.pathsep}/usr/bin:/bin"}
    default = subprocess.run([str(script)], env=env, text=True, capture_output=True)
    assert default.stdout.strip() == "root=/autograder args=gradescope-run --lab lab1 " \
                                     "--device auto"
    moved = subprocess.run([str(script)], env={**env, "AUTOGRADER_ROOT": str(tmp_path)},
                           text=True, capture_output=True)
    assert moved.stdout.startswith(f"root={tmp_path} ")


@pytest.mark.slow
def test_run_autograder_grades_the_stub_from_the_bundles_own_course_files(tmp_path):
    out, results = _run_autograder(tmp_path, "stub", inprocess=True)
    data = valid_results(results)
    assert data["score"] == 0 and data["tests"]
    assert "isolation: none (--inprocess)" in out


@pytest.mark.slow
@pytest.mark.parametrize("submission, full", [
    ("reference", True), ("stub", False), ("buggy_no_batch", False)])
def test_run_autograder_sandboxed(tmp_path, submission, full):
    out, results = _run_autograder(tmp_path, submission, inprocess=False)
    data = valid_results(results)
    assert (data["score"] == 24) == full
    assert "isolation: sandbox" in out and "[x] private filesystem" in out
    assert "protections in force" in data["output"]
    assert data["extra_data"]["protections"]["unprivileged uid"] is True

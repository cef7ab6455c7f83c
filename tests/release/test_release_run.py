"""The released student repository works as its README says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.errors import ExitCode
from rnngrade.labs import get_lab
from rnngrade.release import ReleaseError, build_release
from rnngrade.release.build import MANIFEST, TORCH_VERSION, public_points, workflow

from ..conftest import run_public_inprocess
from .conftest import PUBLIC_LABS


def student_env(**extra: str) -> dict[str, str]:
    """The environment of a student shell: no course checkout in sight."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RNNGRADE_ROOT")}
    env.update(extra)
    return env


def run_public(repo: Path, lab: str, python: str = sys.executable) -> tuple[int, str]:
    done = subprocess.run([python, "-m", "pytest", f"assignments/{lab}", "-p", "no:randomly"],
                          cwd=repo, env=student_env(), capture_output=True, text=True,
                          timeout=600)
    return done.returncode, done.stdout + done.stderr


def points(output: str, lab: str) -> tuple[float, float]:
    match = re.search(rf"^{lab}: ([\d.]+)/([\d.]+) public points$", output, re.MULTILINE)
    assert match, f"no points summary in:\n{output[-3000:]}"
    return float(match.group(1)), float(match.group(2))


def possible_points(repo: Path, lab) -> float:
    return public_points(sorted(lab.assignment_dir(repo).glob("test_*_public.py")))[lab.name]


# The one place each lab's public suite runs on the stub and on the reference (in this process:
# that the shipped package itself works under `python -m pytest` is the next test's job, and the
# notebook tests run it once more through the notebook's test cell).
@pytest.mark.parametrize("lab", PUBLIC_LABS, ids=lambda lab: lab.name)
def test_the_public_tests_score_zero_on_the_stub_and_every_failure_says_not_implemented(
        release_copy, lab, capsys, monkeypatch):
    code, output = run_public_inprocess(capsys, monkeypatch, release_copy, lab.name)
    possible = possible_points(release_copy, lab)
    assert code == 1 and points(output, lab.name) == (0, possible) and possible > 0, output
    failures = re.findall(r"^_{3,} (test_\w+) _{3,}\n(.*)$", output, re.MULTILINE)
    assert failures and all(text.startswith("not implemented yet") for _, text in failures), \
        output[-3000:]
    assert "Traceback" not in output


@pytest.mark.parametrize("lab", PUBLIC_LABS, ids=lambda lab: lab.name)
def test_the_public_tests_give_full_points_to_the_reference_pasted_in(release_copy, lab,
                                                                     capsys, monkeypatch):
    lab.stub_path(release_copy).write_text(strip_markers(lab.solution_path().read_text()))
    code, output = run_public_inprocess(capsys, monkeypatch, release_copy, lab.name)
    possible = possible_points(release_copy, lab)
    assert code == 0 and points(output, lab.name) == (possible, possible) and possible > 0, \
        output[-3000:]


def test_pytest_in_the_release_imports_the_released_package(release_copy):
    """``pythonpath = ["."]`` in the student pyproject: the shipped rnngrade wins over any
    installed one, and the trusted side is not there."""
    probe = release_copy / "assignments" / "lab1" / "test_where_public.py"
    probe.write_text(
        "import importlib\nimport pytest\nimport rnngrade.harness.checks.plugin\n\n"
        f"def test_where():\n    assert rnngrade.harness.checks.plugin.__file__.startswith("
        f"{str(release_copy)!r})\n"
        "    with pytest.raises(ModuleNotFoundError):\n"
        "        importlib.import_module('rnngrade.grading.engine')\n")
    done = subprocess.run([sys.executable, "-m", "pytest", str(probe), "-q", "-p", "no:randomly"],
                          cwd=release_copy, env=student_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_release_holds_what_a_student_needs(release):
    for name in ("README.md", "pyproject.toml", "conftest.py", ".gitignore",
                 ".github/workflows/public-tests.yml", MANIFEST):
        assert (release / name).is_file(), name
    for lab in PUBLIC_LABS:
        folder = release / "assignments" / lab.name
        assert (folder / lab.filename).is_file() and (folder / f"{lab.name}.ipynb").is_file()
        assert list(folder.glob("test_*_public.py"))
        assert (release / "fixtures" / "public" / f"{lab.name}.npz").is_file()
        readme = lab.assignment_dir() / "README.md"
        if readme.exists():  # the instructor's README, as written (its title at least: others
            # may edit the course while this session runs)
            assert (folder / "README.md").read_text().splitlines()[0] == \
                readme.read_text().splitlines()[0]
    conftest = (release / "conftest.py").read_text()
    assert 'pytest_plugins = ["rnngrade.harness.checks.plugin"]' in conftest
    assert "grading" not in conftest
    manifest = json.loads((release / MANIFEST).read_text())
    # Other tests run the shared release, and Python then caches bytecode beside its modules.
    on_disk = {p.relative_to(release).as_posix() for p in release.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert set(manifest["files"]) | {MANIFEST} == on_disk


def test_the_student_pyproject_is_installable_and_pins_torch(release):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((release / "pyproject.toml").read_text())
    dependencies = project["project"]["dependencies"]
    assert f"torch=={TORCH_VERSION}" in dependencies  # lab1 uses torch
    assert any(d.startswith("numpy>=") for d in dependencies)
    assert any(d.startswith("pytest>=") for d in dependencies)
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["rnngrade*"]
    assert project["tool"]["pytest"]["ini_options"]["pythonpath"] == ["."]
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"


def test_the_student_readme_explains_install_tests_failures_and_submission(release):
    readme = (release / "README.md").read_text()
    for heading in ("## Install", "## Run the public tests", "## Read a failing test",
                    "## Work in a notebook", "## Submit"):
        assert heading in readme
    assert f"pip install torch=={TORCH_VERSION} --index-url" in readme
    assert "python -m pip install -e ." in readme
    for lab in PUBLIC_LABS:
        assert f"| [{lab.name}](assignments/{lab.name}/" in readme
    assert "pytest assignments/" in readme and "public points" in readme
    assert "{{" not in readme and "{%" not in readme


def test_a_second_release_replaces_the_first_and_keeps_the_git_folder(tmp_path,
                                                                       lab1_vectors_shared):
    out = tmp_path / "repo"
    build_release(out, [get_lab("lab1")], verify=False)
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    manifest = json.loads((out / MANIFEST).read_text())
    (out / "assignments" / "lab1" / "old_public.py").write_text("# from a previous release\n")
    manifest["files"]["assignments/lab1/old_public.py"] = "0"
    (out / MANIFEST).write_text(json.dumps(manifest))
    (out / "my_notes.txt").write_text("mine")
    build_release(out, [get_lab("lab1")], verify=False)
    assert (out / ".git" / "HEAD").exists() and (out / "my_notes.txt").exists()
    assert not (out / "assignments" / "lab1" / "old_public.py").exists()
    assert (out / "assignments" / "lab1" / "rnn.py").exists()


def test_a_folder_that_is_not_a_release_is_refused(tmp_path):
    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(ReleaseError, match="not empty"):
        build_release(tmp_path, [get_lab("lab1")], verify=False)
    assert (tmp_path / "thesis.tex").read_text() == "precious"


def test_the_command_line_releases_the_labs_asked_for(tmp_path, capsys, lab1_vectors_shared):
    assert main(["release", "--out", str(tmp_path / "r"), "--lab", "lab1",
                 "--torch-version", "2.13.0"]) == ExitCode.OK
    assert "released lab1 into" in capsys.readouterr().out
    assert [p.name for p in (tmp_path / "r" / "assignments").iterdir()] == ["lab1"]
    assert not (tmp_path / "r" / ".github" / "workflows" / "grading.yml").exists()
    assert main(["release", "--out", str(tmp_path / "x"), "--lab", "lab99"]) == ExitCode.USAGE


def test_without_a_torch_lab_nothing_installs_torch():
    text = workflow("student.yml", None)
    assert "torch" not in text and "pip install -e ." in text
    numpy_labs = [lab for lab in PUBLIC_LABS if not lab.uses_torch]
    if numpy_labs:
        from rnngrade.release.build import build_files

        files, _ = build_files(numpy_labs[:1], numpy_labs[0].solution_path().parents[2],
                               torch_version=TORCH_VERSION, grading_workflow=False,
                               name="x", warnings=[])
        assert b"torch" not in files["pyproject.toml"]
        assert b"torch" not in files[".github/workflows/public-tests.yml"]


@pytest.mark.slow
def test_the_documented_install_works_in_a_fresh_virtual_environment(release_copy, tmp_path):
    """The README's install commands, run as written in a new venv (system site packages give
    the local torch; pip still builds and installs the student project)."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    python = str(env_dir / "bin" / "python")
    readme = (release_copy / "README.md").read_text()
    block = readme.split("## Install", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c and not c.startswith(("python -m venv", "source"))
                and "--upgrade pip" not in c]
    assert any("pip install -e ." in c for c in commands)
    for command in commands:
        assert command.startswith("python -m pip install"), command
        done = subprocess.run([python, *command.split()[1:]], cwd=release_copy,
                              env=student_env(), capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = subprocess.run([python, "-m", "pip", "show", "rnn-course"], cwd=tmp_path,
                           env=student_env(), capture_output=True, text=True)
    assert f"Editable project location: {release_copy}" in shown.stdout, shown.stdout
    for lab in PUBLIC_LABS:
        code, output = run_public(release_copy, lab.name, python=python)
        earned, possible = points(output, lab.name)
        assert code == 1 and earned == 0 and possible > 0, output[-2000:]

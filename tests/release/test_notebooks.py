"""The lab notebooks: generated, valid, faithful to the stub, and gradable."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from rnngrade.authoring.generate import stale_files, stub_for
from rnngrade.authoring.notebooks import readme_sections, split_top_level
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.harness.source.notebook import notebook_source
from rnngrade.labs import available_labs

from .conftest import PUBLIC_LABS

LABS = available_labs()
GRADED_LABS = [lab for lab in PUBLIC_LABS if lab.rubric_path().exists()]


def code_cells(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Function name → source of the code cells that carry ``metadata.rnngrade.block``."""
    return {cell.metadata["rnngrade"]["block"]: cell.source for cell in notebook.cells
            if cell.cell_type == "code" and cell.metadata.get("rnngrade", {}).get("block")}


def paste_reference(path: Path, lab, out: Path) -> Path:
    """The notebook at ``path`` with each function cell replaced by the reference's function."""
    notebook = nbformat.read(path, as_version=4)
    reference = dict(split_top_level(strip_markers(lab.solution_path().read_text()))[1])
    for cell in notebook.cells:
        block = cell.get("metadata", {}).get("rnngrade", {}).get("block")
        if block:
            cell.source = reference[block]
    nbformat.write(notebook, out)
    return out


def function_names(source: str) -> list[str]:
    return [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.name)
def test_the_notebook_holds_the_instructions_the_stub_and_a_test_cell(lab):
    path = lab.assignment_dir() / f"{lab.name}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata["rnngrade"] == {"lab": lab.name, "module": lab.module}
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    readme = lab.assignment_dir() / "README.md"
    if readme.exists():
        preamble, sections = readme_sections(readme.read_text())
        assert preamble.splitlines()[0] in markdown
        assert all(text in markdown for _, text in sections)
    for function in lab.functions:
        assert f"#### `{function}(" in markdown, function

    stub = stub_for(lab).content.decode()
    cells = code_cells(notebook)
    assert cells == {name: code for name, code in split_top_level(stub)[1]
                     if name in function_names(stub)}
    source, notes = notebook_source(path.read_text(), path.name)
    assert function_names(source) == function_names(stub)  # same functions, same order
    assert "%run" not in source and notes  # the grader drops the test cell

    last = notebook.cells[-1]
    assert last.cell_type == "code"
    assert last.source == f"%run -m rnngrade.harness.checks.notebook_tests {lab.name}.ipynb"


def test_a_changed_readme_makes_the_notebook_stale(course_copy):
    lab = next(lab for lab in LABS if (lab.assignment_dir() / "README.md").exists())
    readme = lab.assignment_dir(course_copy) / "README.md"
    readme.write_text(readme.read_text() + "\n## One more thing\n\nRead this.\n")
    problems = stale_files(lab, course_copy)
    assert any(p.endswith(f"{lab.name}.ipynb differs from what the reference generates")
               for p in problems), problems


def trains(lab) -> bool:
    """Whether the lab's hidden suite has a training run graded by outcome."""
    return any("mark.outcome" in path.read_text(encoding="utf-8")
               for path in lab.suite_dir().glob("test_*.py"))


# A lab with a training run graded by outcome trains here: with the slow tests.
@pytest.mark.parametrize("lab", [
    pytest.param(lab, marks=pytest.mark.slow if trains(lab) else ())
    for lab in GRADED_LABS], ids=lambda lab: lab.name)
def test_the_released_notebook_grades_to_full_marks_with_the_reference_pasted_in(release, lab,
                                                                                tmp_path):
    released = release / "assignments" / lab.name / f"{lab.name}.ipynb"
    solved = paste_reference(released, lab, tmp_path / f"{lab.name}.ipynb")
    result = grade(solved, lab.name, device="cpu", inprocess=True)
    assert result.status == "graded" and result.score == result.max_score > 0, \
        [(t.name, t.message) for t in result.tests if not t.passed]
    untouched = grade(released, lab.name, device="cpu", inprocess=True)
    assert untouched.score == 0 < untouched.max_score


def run_notebook_cell(repo: Path, lab) -> tuple[int, str]:
    """What the notebook's last cell runs, from the lab folder, as a student's kernel would."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RNNGRADE_ROOT")}
    env["PYTHONPATH"] = str(repo)  # what `pip install -e .` of the release provides
    done = subprocess.run([sys.executable, "-m", "rnngrade.harness.checks.notebook_tests",
                           f"{lab.name}.ipynb", "-p", "no:randomly"],
                          cwd=repo / "assignments" / lab.name, env=env, capture_output=True,
                          text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


# The test cell's machinery is the same for every lab, and each lab's notebook is read by the
# grader in the test above and its public suite run on stub and reference in test_release_run.py:
# one lab here by default, the others with the slow tests.
@pytest.mark.parametrize("lab", [pytest.param(lab, marks=() if i == 0 else pytest.mark.slow)
                                 for i, lab in enumerate(PUBLIC_LABS)], ids=lambda lab: lab.name)
def test_the_test_cell_runs_the_public_tests_on_the_saved_notebook(release_copy, lab):
    folder = release_copy / "assignments" / lab.name
    module_before = (folder / lab.filename).read_bytes()
    paste_reference(folder / f"{lab.name}.ipynb", lab, folder / f"{lab.name}.ipynb")
    code, output = run_notebook_cell(release_copy, lab)
    match = re.search(rf"^{lab.name}: ([\d.]+)/([\d.]+) public points$", output, re.MULTILINE)
    assert code == 0 and match and match.group(1) == match.group(2), output[-3000:]
    assert (folder / lab.filename).read_bytes() == module_before  # the .py file is left alone


def test_the_test_cell_on_the_untouched_notebook_reports_zero_points(release_copy):
    lab = PUBLIC_LABS[0]
    code, output = run_notebook_cell(release_copy, lab)
    assert code == 1 and re.search(rf"^{lab.name}: 0/[\d.]+ public points$", output,
                                   re.MULTILINE), output[-3000:]
    assert "not implemented yet" in output and "Traceback" not in output

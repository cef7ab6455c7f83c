"""Every lab ships a README, and its notebook carries the README's prose."""

import nbformat
import pytest

from rnngrade.labs import LABS, get_lab
from rnngrade.paths import course_root


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_lab_has_a_readme_that_its_notebook_opens_with(lab):
    folder = get_lab(lab).assignment_dir(course_root())
    readme = (folder / "README.md").read_text(encoding="utf-8")
    heading = readme.splitlines()[0]
    assert heading.startswith(f"# Lab {lab[3:]} — ")
    notebook = nbformat.read(folder / f"{lab}.ipynb", as_version=4)
    prose = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert heading in prose and len(prose) >= len(readme) // 2

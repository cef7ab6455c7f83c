"""The student release holds nothing of the solutions, hidden suites, mutants or grader."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from rnngrade.release import find_leaks
from rnngrade.release.audit import (
    mutant_edit_lines,
    published_lines,
    significant,
    solution_lines,
    suite_lines,
)
from rnngrade.release.package import (
    PackageError,
    is_forbidden,
    public_test_imports,
    student_modules,
)

from ..conftest import ROOT

TRUSTED = ("solutions", "graders/suites", "fixtures/submissions")


def released_modules(release: Path) -> set[str]:
    names = set()
    for path in (release / "rnngrade").rglob("*.py"):
        parts = path.relative_to(release).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_audit_has_secrets_to_look_for():
    assert len(solution_lines(ROOT)) >= 20
    assert len(suite_lines(ROOT)) >= 50
    assert len(mutant_edit_lines(ROOT)) >= 3


def test_no_line_of_a_solution_hidden_suite_or_mutant_is_in_the_release(release):
    leaks = find_leaks(release, ROOT)
    assert not leaks, "\n".join(map(str, leaks[:20]))


def _unpublished(secrets: dict[str, str]) -> str:
    published = published_lines(ROOT)
    return next(text for text in sorted(secrets) if text not in published)


def plant(release: Path, kind: str, where: str) -> tuple[str, str]:
    """Plant a secret of ``kind`` (a line of a solution, a hidden suite or a mutant's edit that
    ``assignments/`` does not publish) ``where`` in the release: the secret and the place the
    audit must name."""
    secret = _unpublished({"solution": solution_lines, "suite": suite_lines,
                           "mutant": mutant_edit_lines}[kind](ROOT))
    lab = release / "assignments" / "lab1"
    if where == "readme":
        (release / "README.md").write_text(
            (release / "README.md").read_text() + f"\n    {secret}\n")
        return secret, "README.md"
    if where == "notebook":  # inside a cell, where JSON escapes quotes
        notebook = nbformat.read(lab / "lab1.ipynb", as_version=4)
        notebook.cells[-2].source += f"\n{secret}"
        nbformat.write(notebook, lab / "lab1.ipynb")
        return secret, f"assignments/lab1/lab1.ipynb::cell {len(notebook.cells) - 2}"
    if where == "npz":
        with zipfile.ZipFile(release / "fixtures" / "public" / "lab1.npz", "a") as archive:
            archive.writestr("planted.json", f'{{"x": "{secret}"}}\n')
        return secret, "fixtures/public/lab1.npz::planted.json"
    (release / "rnngrade" / "extra.py").write_text(f"def f():\n    {secret}\n")
    return secret, "rnngrade/extra.py"


def test_the_audit_finds_each_kind_of_secret_in_each_place_at_once(release_copy):
    """Each kind of secret and each place once, planted together in one release: the audit names
    every one where it hides, and nothing else. (Every pairing alone is the slow test below.)"""
    planted = [plant(release_copy, kind, where) for kind, where in (
        ("solution", "readme"), ("suite", "notebook"), ("mutant", "npz"),
        ("solution", "new file"))]
    leaks = find_leaks(release_copy, ROOT)
    found = {(leak.path, leak.text) for leak in leaks}
    for secret, place in planted:
        assert (place, secret) in found, (place, secret, found)
    assert all(any(leak.text in secret for secret, _ in planted) for leak in leaks), found


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["solution", "suite", "mutant"])
@pytest.mark.parametrize("where", ["readme", "notebook", "npz", "new file"])
def test_the_audit_finds_a_planted_secret_wherever_it_hides(release_copy, where, kind):
    """One secret alone in one place (the default test above plants one of each at once)."""
    secret, place = plant(release_copy, kind, where)
    leaks = find_leaks(release_copy, ROOT)
    found = {leak.text for leak in leaks}
    assert secret in found and all(text in secret for text in found), found
    assert place in {leak.path for leak in leaks}


def test_no_file_of_the_trusted_side_is_shipped(release):
    files = [p for p in release.rglob("*") if p.is_file()]
    names = [p.relative_to(release).as_posix() for p in files]
    assert not [n for n in names if n.startswith(("solutions/", "graders/", "fixtures/submissions"))
                or n.endswith(("mutants.py", "rubric.yaml", "_hidden.py"))
                or "reference" in n]
    trusted = {p.read_bytes() for base in TRUSTED for p in (ROOT / base).rglob("*")
               if p.is_file() and "stub" not in p.parts}  # the sample stubs are the stubs
    assert not [n for n, p in zip(names, files) if p.read_bytes() in trusted]


def test_the_released_package_is_the_student_side_and_nothing_else(release):
    tests = sorted((release / "assignments").glob("lab*/test_*_public.py"))
    expected = set(student_modules(public_test_imports(tests)))
    shipped = released_modules(release)
    assert shipped == expected
    assert not [m for m in shipped if is_forbidden(m)]
    # The boundary is the package: nothing of the release outside rnngrade.testing/harness.
    assert {m.split(".")[1] for m in shipped if m != "rnngrade"} == {"testing", "harness"}
    assert {"rnngrade.testing", "rnngrade.harness.checks.plugin",
            "rnngrade.harness.runner.inprocess", "rnngrade.harness.runner.proxy",
            "rnngrade.harness.source.module_builder",
            "rnngrade.harness.source.platform_modules"} <= shipped


def test_the_released_package_imports_on_its_own(release):
    code = ("import importlib, rnngrade, rnngrade.harness.checks.plugin\n"
            "import rnngrade.harness.checks.notebook_tests\n"
            "import rnngrade.testing\n"
            "print(rnngrade.__file__)\n"
            "for name in ('rnngrade.grading', 'rnngrade.sandbox', 'rnngrade.validate',\n"
            "             'rnngrade.diagnosis', 'rnngrade.authoring', 'rnngrade.cli'):\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ModuleNotFoundError:\n"
            "        continue\n"
            "    raise SystemExit(name + ' is importable from the release')\n")
    env = {k: v for k, v in os.environ.items() if k != "RNNGRADE_ROOT"}
    env["PYTHONPATH"] = str(release)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the release is shared: nothing is written into it
    done = subprocess.run([sys.executable, "-c", code], cwd=release, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.strip() == str(release / "rnngrade" / "__init__.py")


@pytest.mark.parametrize(("module", "line", "imported"), [
    ("compare", "from rnngrade.grading.engine import grade", r"rnngrade\.grading\.engine"),
    # not secret, but outside the harness package: the boundary is the package, not a list
    ("tolerance", "from rnngrade.errors import UsageError", r"rnngrade\.errors"),
])
def test_a_module_outside_the_harness_imported_from_the_student_side_stops_the_release(
        tmp_path, module, line, imported):
    base = tmp_path / "rnngrade"
    shutil.copytree(ROOT / "graders" / "rnngrade", base,
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = base / "harness" / "checks" / f"{module}.py"
    path.write_text(path.read_text() + f"\n\ndef _later():\n    {line}\n")
    with pytest.raises(PackageError, match=imported + r"(\.\w+)? \(imported by "
                                           r"rnngrade\.harness\.checks\." + module + r"\)"):
        student_modules(base=base)


def test_public_tests_import_only_the_public_testing_api(release):
    import rnngrade.testing

    tests = sorted(ROOT.glob("assignments/lab*/test_*_public.py"))
    imported = set(public_test_imports(tests))
    assert "rnngrade.testing" in imported
    names = {m.rpartition(".")[2] for m in imported if m != "rnngrade.testing"}
    assert names <= set(rnngrade.testing.__all__)
    assert all(hasattr(rnngrade.testing, name) for name in rnngrade.testing.__all__)
    assert (release / "rnngrade" / "testing" / "__init__.py").is_file()


def test_a_public_test_importing_an_internal_module_stops_the_release(tmp_path):
    test = tmp_path / "test_x_public.py"
    test.write_text("from rnngrade.testing import assert_outputs\n"
                    "from rnngrade.harness.checks.structure import flatten\n")
    with pytest.raises(PackageError, match=r"test_x_public\.py imports rnngrade\.harness\."
                                           r"checks\.structure.*only rnngrade\.testing"):
        public_test_imports([test])


def test_a_name_bound_to_an_empty_container_is_no_secret_but_a_filled_one_is():
    # Such lines are in any training loop, the student-side harness's too; their content is not.
    for line in ("losses = []", "    history = {}", "seen = set()"):
        assert significant(line) is None
    for line in ("losses = [float(x) for x in out]", "history = {'loss': losses}"):
        assert significant(line) == line

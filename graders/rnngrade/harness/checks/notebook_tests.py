"""Run a lab's public tests on the functions saved in a notebook.

The last cell of ``assignments/labN/labN.ipynb`` runs
``%run -m rnngrade.harness.checks.notebook_tests labN.ipynb``. The notebook's code cells become
the lab's module (as the grader builds it: magics and shell lines dropped) in a temporary copy of
the lab folder, next to the public tests and the lab's public vectors, and ``pytest`` runs there
in a fresh process. The student's own
``<module>.py`` is never touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rnngrade.harness.checks.plugin import find_course_root, lab_of
from rnngrade.harness.errors import ExitCode
from rnngrade.harness.source.notebook import NotebookError, notebook_source

EXIT_NO_TESTS = ExitCode.GRADER  # no public tests or no notebook: nothing could run
_STUDENT_MODULE = re.compile(r"^STUDENT_MODULE\s*=\s*['\"](\w+)['\"]", re.MULTILINE)
CONFTEST = '"""Written by rnngrade.harness.checks.notebook_tests."""\n\npytest_plugins = ' \
           '["rnngrade.harness.checks.plugin"]\n'
PYTEST_INI = "[pytest]\naddopts = -p no:cacheprovider --import-mode=importlib\n"


def module_name(notebook: Path, tests: list[Path]) -> str | None:
    """The module the public tests load: the notebook's ``rnngrade.module`` metadata, else the
    tests' ``STUDENT_MODULE``."""
    try:
        meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
        name = meta.get("rnngrade", {}).get("module")
    except (OSError, ValueError, AttributeError):
        name = None
    if isinstance(name, str) and name.isidentifier():
        return name
    for test in tests:
        found = _STUDENT_MODULE.search(test.read_text(encoding="utf-8"))
        if found:
            return found.group(1)
    return None


def run_public_tests(notebook: Path | str, pytest_args: list[str] | None = None) -> int:
    """Run the public tests next to ``notebook`` on its code cells; return pytest's exit code."""
    notebook = Path(notebook).resolve()
    folder = notebook.parent
    lab = lab_of(notebook)
    tests = sorted(folder.glob("test_*_public.py"))
    module = module_name(notebook, tests) if tests else None
    if not tests or module is None:
        print(f"no public tests (test_*_public.py with STUDENT_MODULE) next to {notebook.name}")
        return EXIT_NO_TESTS
    try:
        source, _ = notebook_source(notebook.read_text(encoding="utf-8"), notebook.name)
    except (OSError, NotebookError) as exc:
        print(f"cannot read {notebook.name}: {exc}")
        return EXIT_NO_TESTS
    root = find_course_root(folder)
    print(f"Public tests of {lab} on the functions saved in {notebook.name} "
          "(unsaved edits are not seen)", flush=True)
    with tempfile.TemporaryDirectory(prefix="rnngrade-notebook-") as tmp:
        work = Path(tmp)
        lab_dir = work / "assignments" / lab
        lab_dir.mkdir(parents=True)
        for test in tests:
            shutil.copy2(test, lab_dir / test.name)
        (lab_dir / f"{module}.py").write_text(source, encoding="utf-8")
        vectors = root / "fixtures" / "public" / f"{lab}.npz"
        (work / "fixtures" / "public").mkdir(parents=True)
        if vectors.exists():
            shutil.copy2(vectors, work / "fixtures" / "public" / vectors.name)
        (work / "conftest.py").write_text(CONFTEST, encoding="utf-8")
        (work / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
        command = [sys.executable, "-m", "pytest", f"assignments/{lab}", *(pytest_args or [])]
        with subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, bufsize=1) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(line, end="", flush=True)
            return process.wait()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m rnngrade.harness.checks.notebook_tests labN.ipynb [pytest options]")
        return EXIT_NO_TESTS
    return run_public_tests(args[0], args[1:])


if __name__ == "__main__":
    code = main()
    if code and "IPython" not in sys.modules:  # in a notebook, a SystemExit only adds noise
        sys.exit(code)

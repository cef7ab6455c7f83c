"""Labs come in by one door: every file under ``graders/suites`` imports of ``rnngrade`` only the
lab author's API, ``rnngrade.suite`` (hidden tests, mutants), or ``rnngrade.suite.worker`` (the
lab's worker code: ``helpers.py`` and platform modules, run in the sandboxed worker), so the
engine behind them can move without touching a lab.

Every import counts, at the top of a file or inside a function, ``if TYPE_CHECKING`` ones too, and
``importlib.import_module`` / ``__import__`` of a literal name."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import rnngrade.suite
import rnngrade.suite._grading
import rnngrade.suite.worker
from rnngrade.lab_contract import HELPERS_FILE
from rnngrade.lab_helpers import PLATFORM_PREFIX
from rnngrade.paths import course_root

SUITES = course_root() / "graders" / "suites"
SUITE, WORKER = "rnngrade.suite", "rnngrade.suite.worker"


def is_worker_code(path: Path) -> bool:
    """Whether the file runs in the sandboxed worker (a lab's helpers, a platform module)."""
    return path.name == HELPERS_FILE or path.name.startswith(PLATFORM_PREFIX)


def rnngrade_imports(source: str) -> list[tuple[int, str, list[str]]]:
    """``(line, module, names)`` for each import of an ``rnngrade`` module in ``source`` (names:
    what a ``from`` import takes, ``[]`` for a plain import)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and (getattr(node.func, "id", None) == "__import__"
                   or getattr(node.func, "attr", None) == "import_module")):
            found.append((node.lineno, node.args[0].value, []))
    return [(line, module, names) for line, module, names in found
            if module == "rnngrade" or module.startswith("rnngrade.")]


def strays(source: str, worker_code: bool) -> list[str]:
    """The imports of ``source`` that go past its door (``worker_code``: the worker's,
    ``rnngrade.suite.worker``; else either door), and names its door does not give."""
    doors = {WORKER: rnngrade.suite.worker} if worker_code else {
        SUITE: rnngrade.suite, WORKER: rnngrade.suite.worker}
    found = []
    for line, module, names in rnngrade_imports(source):
        door = doors.get(module)
        if door is None:
            found.append(f"line {line}: {module} (import from {' or '.join(doors)})")
            continue
        found += [f"line {line}: {module}.{name} is not in its __all__" for name in names
                  if name not in door.__all__]
    return found


def suite_files() -> list[Path]:
    return sorted(SUITES.rglob("*.py"))


@pytest.mark.parametrize("path", suite_files(), ids=lambda p: p.relative_to(SUITES).as_posix())
def test_a_suite_file_imports_only_the_lab_author_api(path: Path):
    assert strays(path.read_text(encoding="utf-8"), is_worker_code(path)) == []


def test_the_check_finds_what_goes_past_the_door():
    source = ("import rnngrade.lab_helpers\n"
              "from rnngrade.suite import Tolerance, no_such_name\n"
              "from rnngrade.suite._grading import Chain\n"
              "if True:\n    from rnngrade import suite\n"
              "def f():\n    from rnngrade.grading.chained import Chain\n"
              "    import importlib\n"
              "    return importlib.import_module('rnngrade.results.plots')\n")
    assert strays(source, worker_code=False) == [
        "line 1: rnngrade.lab_helpers (import from rnngrade.suite or rnngrade.suite.worker)",
        "line 2: rnngrade.suite.no_such_name is not in its __all__",
        "line 3: rnngrade.suite._grading (import from rnngrade.suite or rnngrade.suite.worker)",
        "line 5: rnngrade (import from rnngrade.suite or rnngrade.suite.worker)",
        "line 7: rnngrade.grading.chained (import from rnngrade.suite or rnngrade.suite.worker)",
        "line 9: rnngrade.results.plots (import from rnngrade.suite or rnngrade.suite.worker)"]
    helpers = "from rnngrade.suite import Tolerance\nfrom rnngrade.suite.worker import helper\n"
    assert strays(helpers, worker_code=True) == [
        "line 1: rnngrade.suite (import from rnngrade.suite.worker)"]
    assert strays(helpers, worker_code=False) == []


def test_the_suites_are_checked():
    files = suite_files()
    assert sum(p.name == "mutants.py" for p in files) >= 12
    assert sum(is_worker_code(p) for p in files) >= 10
    assert all(rnngrade_imports(p.read_text(encoding="utf-8")) for p in files
               if p.name.startswith("test_") or p.name == "mutants.py")


def test_every_name_of_the_api_is_there():
    imported = {name for name, value in vars(rnngrade.suite._grading).items()
                if not name.startswith("_") and name != "annotations"}
    assert imported == set(rnngrade.suite.__all__)  # each name imported once, none left out
    for name in rnngrade.suite.__all__:
        assert getattr(rnngrade.suite, name) is getattr(rnngrade.suite._grading, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        rnngrade.suite.no_such_name  # noqa: B018 - the lookup is the test
    for name in rnngrade.suite.worker.__all__:
        assert callable(getattr(rnngrade.suite.worker, name))


def test_what_a_type_checker_sees_is_the_api():
    """The package's ``if TYPE_CHECKING`` import names ``__all__``, nothing more or less."""
    tree = ast.parse(Path(rnngrade.suite.__file__).read_text(encoding="utf-8"))
    seen = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "rnngrade.suite._grading" for alias in node.names]
    assert sorted(seen) == sorted(rnngrade.suite.__all__)


def loaded(code: str) -> list[str]:
    """The rnngrade modules a fresh interpreter holds after ``code``."""
    probe = (f"{code}\nimport json, sys\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'rnngrade')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_api_loads_nothing_until_used():
    assert loaded("import rnngrade.suite") == ["rnngrade", "rnngrade.suite"]


def test_the_worker_holds_its_door_and_nothing_of_the_engine():
    """The worker loads ``rnngrade.suite.worker`` before the jail (a lab's helpers import it
    there), and with it no grading engine: only the harness beside the two modules of the door."""
    modules = loaded("import rnngrade.sandbox.worker")
    assert {SUITE, WORKER} <= set(modules)
    assert "rnngrade.suite._grading" not in modules
    door = ("rnngrade", "rnngrade.harness", SUITE, WORKER)
    assert [m for m in loaded(f"import {WORKER}")
            if m not in door and not m.startswith("rnngrade.harness.")] == []
    assert not [m for m in modules if m.startswith(("rnngrade.grading", "rnngrade.diagnosis",
                                                    "rnngrade.results", "rnngrade.lab_helpers"))]

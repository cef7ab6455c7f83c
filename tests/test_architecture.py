"""The engine's shape: its floors (``LAYERS``, as docs/ARCHITECTURE.md draws them), no import
against them, no import cycle, the gradebook below the course, and the lab registry light.

Every import counts, at the top of a module or inside a function (a deferred import is still a
dependency), ``if TYPE_CHECKING`` ones too."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "graders" / "rnngrade"

# Top floor first. A module belongs to the floor of the longest name below that is its own or
# one of its packages'; it may import its own floor and the floors under it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("command", ("rnngrade.cli",)),
    ("tools", ("rnngrade.ci", "rnngrade.gradescope", "rnngrade.release", "rnngrade.similarity",
               "rnngrade.validate", "rnngrade.validate_outcomes")),
    ("course", ("rnngrade.course",)),
    ("gradebook", ("rnngrade.gradebook",)),
    ("suite API", ("rnngrade.suite",)),
    ("grading", ("rnngrade.grading",)),
    ("reports and submissions", ("rnngrade.results", "rnngrade.submission",
                                 "rnngrade.authoring")),
    ("diagnosis and sandbox", ("rnngrade.diagnosis", "rnngrade.sandbox", "rnngrade.testing",
                               "rnngrade.lab_helpers", "rnngrade.suite.worker")),
    ("lab registry and data model", ("rnngrade.labs", "rnngrade.lab_contract",
                                     "rnngrade.results.model", "rnngrade.authoring.stubs")),
    ("foundations", ("rnngrade.errors", "rnngrade.paths", "rnngrade.yaml_files",
                     "rnngrade.limits", "rnngrade.files")),
    ("harness", ("rnngrade.harness",)),
    ("package", ("rnngrade",)),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The rnngrade module ``name`` is, or is an attribute of (None: not rnngrade's)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each module's imports of other rnngrade modules (a package's own submodules aside)."""
    graph: dict[str, frozenset[str]] = {}
    for module, path in modules().items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                target = _resolve(name)
                if target and target != module and not module.startswith(target + "."):
                    found.add(target)
        graph[module] = frozenset(found)
    return graph


def floor(module: str) -> int:
    """The index in LAYERS of ``module``'s floor (0: the top)."""
    best, best_length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def test_every_module_has_a_floor():
    assert modules(), PACKAGE
    assert [m for m in modules() if floor(m) < 0] == []


def test_no_import_runs_against_the_floors():
    upward = [f"{module} ({LAYERS[floor(module)][0]}) imports {target} "
              f"({LAYERS[floor(target)][0]})"
              for module, targets in imports().items() for target in sorted(targets)
              if floor(target) < floor(module)]
    assert upward == []


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycles_are_found():
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}),
             "d": frozenset({"a"})}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle():
    assert cycles(imports()) == []


def test_the_gradebook_imports_nothing_of_the_course():
    gradebook = {m: t for m, t in imports().items() if m.startswith("rnngrade.gradebook")}
    assert gradebook
    assert {m: sorted(t) for m, t in gradebook.items()
            if any(x.startswith("rnngrade.course") for x in t)} == {}


def test_the_zygote_s_process_and_its_client_share_only_their_protocol():
    """The zygote process loads nothing of the grader's side, and the grader's side starts it by
    name, never importing it: each only knows the messages of ``zygote.protocol``."""
    server, client = "rnngrade.sandbox.zygote.server", "rnngrade.sandbox.zygote.client"
    assert client not in imports()[server] and server not in imports()[client]
    assert "rnngrade.sandbox.zygote.protocol" in imports()[server] & imports()[client]


@pytest.mark.parametrize("module", ["rnngrade.labs", "rnngrade.lab_contract", "rnngrade.limits"])
def test_the_lab_registry_loads_no_sandbox(module):
    code = (f"import sys, {module}; "
            "print(sorted(m for m in sys.modules if m.startswith('rnngrade.sandbox')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"

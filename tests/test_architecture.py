"""The engine's shape: its floors (``LAYERS``, as docs/ARCHITECTURE.md draws them), no import
against them, no import cycle, the gradebook below the course, the lab registry light, and no lab
named in the engine's code.

Every import counts, at the top of a module or inside a function (a deferred import is still a
dependency), ``if TYPE_CHECKING`` ones too."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
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


# A lab's name: ``lab`` and a number, inside any word (``lab12``, ``_lab3_cache``, ``"Lab2"``).
LAB_NAME = re.compile(r"lab\d+", re.IGNORECASE)


def _docstrings(tree: ast.Module) -> set[tuple[int, int]]:
    """The (line, column) where each docstring of the module, its classes and functions starts."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                found.add((body[0].value.lineno, body[0].value.col_offset))
    return found


def lab_names(source: str) -> list[tuple[int, str]]:
    """Each (line, token) of ``source`` that names a lab, comments and docstrings aside: every
    other string, identifier and f-string part counts."""
    docstrings = _docstrings(ast.parse(source))
    named = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if token.type == tokenize.STRING and token.start in docstrings:
            continue
        if LAB_NAME.search(token.string):
            named.append((token.start[0], token.string))
    return named


def test_lab_names_are_found_outside_comments_and_docstrings_only():
    source = ('"""Grades lab1."""\n# lab2\ndef f(lab3_cache):\n    """lab4"""\n'
              '    x = "lab5"  # lab6\n    return f"{x} Lab7" + lab3_cache\n')
    assert [line for line, _ in lab_names(source)] == [3, 5, 6, 6]


def test_the_engine_names_no_lab():
    """A lab's own code lives in its folders; the engine reads labs from the registry (labs.py
    and graders/suites/), so it holds no lab's name (docs/AUTHORING.md: "the grading engine
    names no lab")."""
    named = {str(path.relative_to(PACKAGE)): found for path in modules().values()
             if (found := lab_names(path.read_text(encoding="utf-8")))}
    assert named == {}

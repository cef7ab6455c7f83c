"""Audit of what a lab's sandboxed worker holds: nothing that answers a graded function, nothing
of a hidden suite's text.

A submission runs in the worker beside grader code, and can reach all of it (``gc``, frames,
module globals). So the code a worker holds must not implement what the lab grades, or a
submission could call it in place of its own answer. A lab's *worker code* is its helpers and
platform modules as the worker gets them (``rnngrade.lab_helpers.shipped_source``) and the
grader's modules that every worker imports (``worker_modules``). A function of that code
*answers* a graded function ``g`` when

- (a function of a lab's helpers) its name, split into words at underscores (case and leading
  underscores aside), is ``g``'s, or uses only words of ``g``'s name, one of them telling
  (``_adam`` for ``adam_step``; ``cell`` says nothing of ``lstm_cell_forward``); (a module
  every worker imports) its name is ``g``'s, but for the few in ``NAMED_ALIKE``; or
- its body holds the reference's body of ``g`` as a run of statements, names and annotations
  normalised (the reference copied under another name).

The graded functions are the lab's own for its helpers (a lab's helpers reach only its own
workers) and every lab's for the modules every worker imports. The shipped helpers must also
carry no docstring or comment of the suite's file.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rnngrade.lab_helpers import (
    named_like,
    platform_files,
    platform_source,
    shipped_source,
)
from rnngrade.labs import Lab, available_labs

MIN_NODES = 12  # a one-statement reference body smaller than this says nothing (``return x``)
# Functions of the worker's own modules named as some lab's graded function by coincidence.
NAMED_ALIKE = {("codec.py", "encode"): "the protocol's encoder of plain data"}


@dataclass(frozen=True)
class Answer:
    """A function of a lab's worker code that answers a graded function, or suite text found."""

    where: str  # the worker code's origin (``graders/suites/lab9/helpers.py``)
    function: str  # the function there (or the text found)
    graded: str  # ``lab9.adam_step``, or what kind of text
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.function} ({self.why}: {self.graded})"


class _Normalise(ast.NodeTransformer):
    """Local names and arguments become placeholders in order of appearance; annotations and
    docstrings go."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self._name(node.id), ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(arg=self._name(node.arg), annotation=None)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        target = self.visit(node.target)
        value = self.visit(node.value) if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Assign(targets=[target], value=value), node)


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _statements(body: list[ast.stmt]) -> tuple[str, ...]:
    """Each statement's normalised dump (names numbered afresh per statement, so a run of
    statements compares wherever it sits)."""
    return tuple(ast.dump(_Normalise().visit(ast.parse(ast.unparse(s)).body[0]),
                          annotate_fields=False, include_attributes=False) for s in body)


def _runs(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ...]]:
    """Every statement list inside ``function`` (its body, loops', branches', ...), normalised."""
    lists = []
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                lists.append(_statements(_without_docstring(body)))
    return lists


def _contains(run: tuple[str, ...], part: tuple[str, ...]) -> bool:
    return any(run[i:i + len(part)] == part for i in range(len(run) - len(part) + 1))


@dataclass(frozen=True)
class Graded:
    lab: str
    name: str
    body: tuple[str, ...]  # normalised statements of the reference's body (docstring aside)

    @property
    def label(self) -> str:
        return f"{self.lab}.{self.name}"


def graded_functions(lab: Lab, root: Path) -> list[Graded]:
    """The lab's graded functions with the reference's bodies."""
    tree = ast.parse(lab.solution_path(root).read_text(encoding="utf-8"))
    found = {node.name: node for node in tree.body
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    graded = []
    for name in lab.functions:
        node = found.get(name)
        statements = _without_docstring(node.body) if node is not None else []
        body = _statements(statements)
        if len(statements) == 1 and len(list(ast.walk(statements[0]))) < MIN_NODES:
            body = ()  # too small to tell a copy from a coincidence
        graded.append(Graded(lab.name, name, body))
    return graded


def answers_in(source: str, where: str, graded: list[Graded], *,
               strict_names: bool = False) -> list[Answer]:
    """The functions of ``source`` that answer one of ``graded`` (``strict_names``: a name
    counts only when it is a graded function's own, ``NAMED_ALIKE`` aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        name = node.name
        runs = _runs(node)
        alike = strict_names and (Path(where).name, name) in NAMED_ALIKE
        for g in graded:
            if not alike and named_like(name, g.name, strict_names):
                found.append(Answer(where, name, g.label, "named like"))
            elif g.body and any(_contains(run, g.body) for run in runs):
                found.append(Answer(where, name, g.label, "holds the reference's body of"))
    return found


def suite_text_in(shipped: str, original: str, where: str) -> list[Answer]:
    """Docstrings and comments of the suite's file ``original`` found in ``shipped``."""
    texts = [ast.get_docstring(node, clean=False) for node in ast.walk(ast.parse(original))
             if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                           | ast.AsyncFunctionDef)]
    comments = [tok.string.lstrip("#").strip() for tok in tokenize.generate_tokens(
        io.StringIO(original).readline) if tok.type == tokenize.COMMENT]
    found = []
    for kind, items in (("docstring", texts), ("comment", comments)):
        for text in items:
            for line in (text or "").splitlines():
                line = line.strip()
                if len(line) >= 12 and re.search(r"[A-Za-z]{3}", line) and line in shipped:
                    found.append(Answer(where, line[:60], f"the suite's {kind}", "ships"))
    return found


_PROBE = ("import json, sys\nimport rnngrade.sandbox.worker\n"
          "print(json.dumps(sorted({getattr(m, '__file__', None) or '' for n, m in "
          "list(sys.modules.items()) if n.split('.')[0] == 'rnngrade'} - {''})))")


@lru_cache(maxsize=1)
def worker_modules() -> tuple[Path, ...]:
    """The files of the grader's modules a worker imports (the worker side and everything it
    imports, as a fresh interpreter finds them)."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True, timeout=300)
    return tuple(Path(p) for p in json.loads(out.stdout.strip().splitlines()[-1]))


def audit_lab(lab: Lab, root: Path) -> list[Answer]:
    """What ``lab``'s worker holds that answers its graded functions, or ships the suite's
    text: its helpers and its platform modules (its own and the course-wide ones) as shipped."""
    found = []
    helpers = lab.helpers_path(root)
    for path in [helpers, *platform_files(lab, root)]:
        if not path.is_file():
            continue
        original = path.read_text(encoding="utf-8")
        shipped = shipped_source(original if path == helpers else platform_source(lab, original))
        where = path.relative_to(root).as_posix()
        found += (answers_in(shipped, where, graded_functions(lab, root))
                  + suite_text_in(shipped, original, where))
    return found


def audit_worker_modules(root: Path) -> list[Answer]:
    """What the grader's modules every worker imports hold that answers any lab's graded
    function, and any of them found under the hidden suites or the solutions."""
    graded = [g for lab in available_labs(root) for g in graded_functions(lab, root)]
    found = []
    secret = [(root / "graders" / "suites").resolve(), (root / "solutions").resolve()]
    for path in worker_modules():
        resolved = path.resolve()
        if any(resolved.is_relative_to(s) for s in secret):
            found.append(Answer(str(path), path.name, "a hidden suite or a solution",
                                "imported by the worker"))
            continue
        found += answers_in(path.read_text(encoding="utf-8"), str(path), graded,
                            strict_names=True)
    return found

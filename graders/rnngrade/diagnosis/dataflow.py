"""The order and dependencies of a reference function's values, read off its source.

Each name the function assigns is one value, ordered by its first assignment and depending on the
names its right-hand sides read (a name assigned in a loop depends on all its assignments). Each
item of the returned dict or tuple is an output, labelled as the grader labels leaves
(``['dxt']``, ``[0]``). Trusted code only: the reference's source, never a student's.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from rnngrade.diagnosis.mutants import SOURCE


@dataclass
class Flow:
    """params: the function's arguments; order: the names it assigns, first assignment first;
    deps: per assigned name or output label, the parameters and assigned names it reads;
    words: per name, what the docstring calls it (``ft = σ(...)   forget gate``);
    formulas: per name assigned exactly once, by a plain ``name = ...`` in the function's own
    body (no loop or branch), and per output, the expression that computes it."""

    params: tuple[str, ...]
    order: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    deps: dict[str, set[str]] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)
    formulas: dict[str, ast.expr] = field(default_factory=dict)
    # names set inside a loop (its target too): captured at return, such a value is the last
    # step's, not one value of the function (``grads`` of the last step, not of every step)
    looped: set[str] = field(default_factory=set)

    def consumers(self, name: str) -> list[str]:
        return [other for other in (*self.order, *self.outputs)
                if other != name and name in self.deps.get(other, ())]


def flow_of(function: Any) -> Flow | None:
    """The flow of a plain Python function, or None when its source cannot be read."""
    node = _definition(function)
    if node is None:
        return None
    arguments = node.args
    params = tuple(a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                   *arguments.kwonlyargs))
    flow = Flow(params, words=_docstring_words(ast.get_docstring(node) or ""))
    assigned: dict[str, list[ast.expr | None]] = {}
    for statement in node.body:
        _visit(statement, flow)
        _formulas(statement, assigned)
    for inner in node.body:
        for nested in ast.walk(inner):
            if isinstance(nested, ast.stmt) and nested is not inner:
                _formulas(nested, assigned, nested=True)
    flow.formulas.update({name: found[0] for name, found in assigned.items()
                          if len(found) == 1 and found[0] is not None})
    flow.looped = {n.id for loop in ast.walk(node) if isinstance(loop, ast.For | ast.While)
                   for n in ast.walk(loop) if isinstance(n, ast.Name)
                   and isinstance(n.ctx, ast.Store)}
    known = set(params) | set(flow.order)
    flow.deps = {k: {n for n in v if n in known and n != k} for k, v in flow.deps.items()}
    return flow


def _definition(function: Any) -> ast.FunctionDef | None:
    """The ``def`` of ``function``: from the source its module was built from
    (``mutants.load_source_as_module``; its file may hold other lines), else from its file."""
    source = getattr(function, "__globals__", {}).get(SOURCE)
    found: ast.stmt | None
    try:
        if type(source) is str:
            name = getattr(function, "__name__", None)
            found = next((n for n in ast.parse(source).body
                          if isinstance(n, ast.FunctionDef) and n.name == name), None)
        else:
            tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
            found = tree.body[0] if tree.body else None
    except (OSError, TypeError, SyntaxError):
        return None
    return found if isinstance(found, ast.FunctionDef) else None


def _read(expression: ast.AST | None) -> set[str]:
    if expression is None:
        return set()
    return {n.id for n in ast.walk(expression) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def _assign(flow: Flow, target: ast.AST, reads: set[str]) -> None:
    if isinstance(target, ast.Name):
        if target.id not in flow.deps:
            flow.order.append(target.id)
        flow.deps.setdefault(target.id, set()).update(reads)
    elif isinstance(target, ast.Tuple | ast.List):
        for item in target.elts:
            _assign(flow, item, reads)
    elif isinstance(target, ast.Starred):
        _assign(flow, target.value, reads)
    elif isinstance(target, ast.Subscript | ast.Attribute):
        base = target.value
        while isinstance(base, ast.Subscript | ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name):  # a write into an array: it reads what it writes
            _assign(flow, base, reads | _read(target))


def _visit(statement: ast.stmt, flow: Flow) -> None:
    if isinstance(statement, ast.Assign):
        reads = _read(statement.value)
        for target in statement.targets:
            _assign(flow, target, reads)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        if statement.value is not None:
            _assign(flow, statement.target, _read(statement.value) | _read(statement.target))
    elif isinstance(statement, ast.For):
        _assign(flow, statement.target, _read(statement.iter))
    elif isinstance(statement, ast.Return) and statement.value is not None:
        _outputs(statement.value, flow)
    for block in ("body", "orelse", "finalbody"):
        for inner in getattr(statement, block, []) or []:
            if isinstance(inner, ast.stmt):
                _visit(inner, flow)


def _formulas(statement: ast.stmt, assigned: dict[str, list[ast.expr | None]],
              nested: bool = False) -> None:
    """Each name ``statement`` assigns, with its expression when it is a plain ``name = ...``
    of the function's own body (None: assigned otherwise, so no single formula)."""
    if isinstance(statement, ast.Assign):
        plain = not nested and len(statement.targets) == 1
        for target in statement.targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(
                        statement.value if plain and name is target else None)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign | ast.For | ast.With):
        targets = ([i.optional_vars for i in statement.items if i.optional_vars is not None]
                   if isinstance(statement, ast.With) else [statement.target])
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(None)


def _outputs(value: ast.expr, flow: Flow) -> None:
    if isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                _output(flow, f"[{key.value!r}]", item)
    elif isinstance(value, ast.Tuple | ast.List):
        for index, item in enumerate(value.elts):
            _output(flow, f"[{index}]", item)
    else:
        _output(flow, "", value)


def _output(flow: Flow, label: str, item: ast.expr) -> None:
    if label not in flow.outputs:
        flow.outputs.append(label)
        flow.formulas[label] = item
    else:
        flow.formulas.pop(label, None)  # two returns: no single formula
    flow.deps.setdefault(label, set()).update(_read(item))


_WORDS = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*\S.*?\s{2,}([A-Za-z][A-Za-z ()'\-]{2,60})\s*$")


def _docstring_words(docstring: str) -> dict[str, str]:
    """``{name: words}`` from docstring lines that end in words after a formula
    (``ft      = σ(Wf · concat + bf)          forget gate``)."""
    words: dict[str, str] = {}
    for line in docstring.splitlines():
        match = _WORDS.match(line)
        if match:
            words.setdefault(match.group(1), match.group(2).strip())
    return words

"""Formula slips in a PyTorch function, found by running the reference rewritten.

Localisation and the edit diagnosis read a NumPy function's values; a PyTorch function's tensors
they do not see. For a function of the reference that uses ``torch``, its own statements are
rewritten one small way at a time, on the trusted side, and the check run on each rewriting:

- **Unpacked in another order.** Two names of a tuple assignment exchanged (``f, i, g, o =
  gates.chunk(4, dim=1)`` for ``i, f, g, o = ...``).
- **Returned in another order.** Two names of a returned tuple exchanged, nested tuples too
  (``out, (c, h)`` for ``out, (h, c)``).
- **A term left out.** One term of a sum in an assignment left out (``X @ W_x.T`` for
  ``X @ W_x.T + b``).

A rewriting names the student's mistake only when it reproduces every output the student returns
on the case, and differs from the correct value on every failing output with enough distinct
entries to tell; when two rewritings both do, neither is named.
"""

from __future__ import annotations

import ast
import copy
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnngrade.diagnosis.mutants import SOURCE
from rnngrade.diagnosis.structural import float_leaves
from rnngrade.harness.checks.evidence import informative
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

UNPACKED = "unpacked_in_another_order"
RETURNED = "returned_in_another_order"
TERM_LEFT_OUT = "term_left_out"
MAX_REWRITES = 24  # each one run of the reference on the case


@dataclass(frozen=True)
class Rewrite:
    """One rewriting of the reference's ``function``: its ``kind``, the statement as the course
    writes it (``old``) and as rewritten (``new``)."""

    function: str
    module: types.ModuleType
    kind: str
    old: str
    new: str


def rewrites_of(reference: types.ModuleType, function: str) -> tuple[Rewrite, ...]:
    """The rewritings of ``reference``'s ``function`` when it uses ``torch`` (none otherwise:
    a NumPy function's values are localised and edited instead), at most ``MAX_REWRITES``."""
    built = _BUILT.setdefault(reference, {})
    if function not in built:
        built[function] = _rewrites(reference, function)
    return built[function]


_BUILT: weakref.WeakKeyDictionary[types.ModuleType, dict[str, tuple[Rewrite, ...]]] = \
    weakref.WeakKeyDictionary()


def _rewrites(reference: types.ModuleType, function: str) -> tuple[Rewrite, ...]:
    source = reference.__dict__.get(SOURCE)
    if not isinstance(source, str):
        return ()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if len(found) != 1 or not any(isinstance(n, ast.Name) and n.id == "torch"
                                  for n in ast.walk(found[0])):
        return ()
    definition = found[0]
    made: list[Rewrite] = []
    for kind, statement, rewritten in _candidates(definition):
        if len(made) >= MAX_REWRITES:
            break
        module = _load(reference, rewritten)
        if module is not None:
            made.append(Rewrite(function, module, kind, ast.unparse(statement),
                                ast.unparse(_statement_at(rewritten, statement))))
    return tuple(made)


_PATH = "_rnngrade_rewritten"


def _statement_at(rewritten: ast.FunctionDef, original: ast.stmt) -> ast.stmt:
    for node in ast.walk(rewritten):
        if isinstance(node, ast.stmt) and getattr(node, _PATH, False):
            return node
    return original


def _candidates(definition: ast.FunctionDef) -> Iterator[tuple[str, ast.stmt, ast.FunctionDef]]:
    statements = [n for n in ast.walk(definition) if isinstance(n, ast.Assign | ast.Return)]
    for index, statement in enumerate(statements):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Tuple):
            for tuple_path in _tuples(statement.targets[0]):
                for i, j in _pairs(tuple_path):
                    yield UNPACKED, statement, _changed(definition, index, "targets", i, j,
                                                        tuple_path)
        if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Tuple):
            for tuple_path in _tuples(statement.value):
                for i, j in _pairs(tuple_path):
                    yield RETURNED, statement, _changed(definition, index, "value", i, j,
                                                        tuple_path)
        if isinstance(statement, ast.Assign):
            for term in range(_terms(statement.value)):
                yield TERM_LEFT_OUT, statement, _without_term(definition, index, term)


def _tuples(node: ast.Tuple) -> list[tuple[ast.Tuple, list[int]]]:
    """Each tuple inside ``node`` (itself first) whose items are plain names, with its path."""
    found: list[tuple[ast.Tuple, list[int]]] = []

    def walk(t: ast.Tuple, path: list[int]) -> None:
        if sum(isinstance(e, ast.Name) for e in t.elts) >= 2:
            found.append((t, path))
        for k, e in enumerate(t.elts):
            if isinstance(e, ast.Tuple):
                walk(e, [*path, k])

    walk(node, [])
    return found


def _pairs(found: tuple[ast.Tuple, list[int]]) -> list[tuple[int, int]]:
    names = [k for k, e in enumerate(found[0].elts) if isinstance(e, ast.Name)]
    return [(a, b) for n, a in enumerate(names) for b in names[n + 1:]]


def _changed(definition: ast.FunctionDef, index: int, field: str, i: int, j: int,
             found: tuple[ast.Tuple, list[int]]) -> ast.FunctionDef:
    rewritten = copy.deepcopy(definition)
    statement = [n for n in ast.walk(rewritten) if isinstance(n, ast.Assign | ast.Return)][index]
    node = statement.targets[0] if field == "targets" else statement.value  # type: ignore[union-attr]
    for k in found[1]:
        node = node.elts[k]  # type: ignore[union-attr]
    assert isinstance(node, ast.Tuple)
    node.elts[i], node.elts[j] = node.elts[j], node.elts[i]
    setattr(statement, _PATH, True)
    return rewritten


def _sum_terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_sum_terms(node.left), node.right]
    return [node]


def _terms(value: ast.expr) -> int:
    terms = _sum_terms(value)
    return len(terms) if len(terms) >= 2 else 0


def _without_term(definition: ast.FunctionDef, index: int, term: int) -> ast.FunctionDef:
    rewritten = copy.deepcopy(definition)
    statement = [n for n in ast.walk(rewritten) if isinstance(n, ast.Assign | ast.Return)][index]
    assert isinstance(statement, ast.Assign)
    terms = _sum_terms(statement.value)
    kept = [t for k, t in enumerate(terms) if k != term]
    value = kept[0]
    for t in kept[1:]:
        value = ast.BinOp(value, ast.Add(), t)
    statement.value = value
    setattr(statement, _PATH, True)
    return rewritten


def _load(reference: types.ModuleType, definition: ast.FunctionDef) -> types.ModuleType | None:
    """The reference module with ``definition`` in place of its function (trusted code)."""
    module = types.ModuleType(f"{reference.__name__}_rewritten")
    module.__dict__.update(reference.__dict__)
    try:
        code = compile(ast.fix_missing_locations(ast.Module([definition], [])),
                       f"<rewrite of {definition.name}>", "exec")
        exec(code, module.__dict__)
    except Exception:  # noqa: BLE001 - a rewriting that does not compile is none
        return None
    return module


def _close(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> bool:
    return a.shape == b.shape and bool(np.all(np.isfinite(a)) and np.all(
        np.abs(a - b) <= tol.atol + tol.rtol * np.abs(b)))


def explain_rewrites(rewrites: tuple[Rewrite, ...], run: Callable[[Rewrite], Any], got: Any,
                     want: Any, failing: list[str], tol: Tolerance, name: str,
                     names: tuple[str, ...] | None) -> list[Diagnosis]:
    """The one rewriting that reproduces the student's values on this case (see the module
    docstring); ``run(rewrite)`` is the check's result with it (None: it failed)."""
    if not rewrites or not failing:
        return []
    leaves_want = float_leaves(want, name, names)
    leaves_got = float_leaves(got, name, names, {k: v.shape for k, v in leaves_want.items()})
    if any(leaf not in leaves_got for leaf in failing):
        return []
    telling = [leaf for leaf in failing if informative(leaves_want[leaf], tol.atol)]
    if not telling:
        return []
    found: list[Rewrite] = []
    for rewrite in rewrites:
        result = run(rewrite)
        if result is None:
            continue
        theirs = float_leaves(result, name, names)
        if all(leaf in theirs and not _close(theirs[leaf], leaves_want[leaf], tol)
               for leaf in telling) and all(
                k in theirs and _close(g, theirs[k], tol) for k, g in leaves_got.items()):
            found.append(rewrite)
    if len({(r.kind, r.new) for r in found}) != 1:
        return []  # none, or two different rewritings: name neither
    return [_diagnosis(found[0])]


def _diagnosis(rewrite: Rewrite) -> Diagnosis:
    what = {UNPACKED: "the names are unpacked in another order",
            RETURNED: "the values are returned in another order",
            TERM_LEFT_OUT: "a term of the sum is left out"}[rewrite.kind]
    return Diagnosis(
        rewrite.kind, f"in `{rewrite.function}`, {what}: your results are the course's with "
        f"`{rewrite.new}` where it has `{rewrite.old}`", rewrite.function,
        hint="Compare this line of yours with the formula in the docstring: the values are "
        "right, but one of them goes to the wrong place (or is missing).",
        evidence=f"your results equal the course's solution's with `{rewrite.new}` in place of "
        f"`{rewrite.old}`", source=STRUCTURAL)

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rnngrade.diagnosis.rewriting import PerReference, definition_of, load_rewritten, reproducing
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
    return _BUILT.get(reference, function, _rewrites)


_BUILT: PerReference[Rewrite] = PerReference()


def _rewrites(reference: types.ModuleType, function: str) -> tuple[Rewrite, ...]:
    definition = definition_of(reference, function)
    if definition is None or not any(isinstance(n, ast.Name) and n.id == "torch"
                                     for n in ast.walk(definition)):
        return ()
    made: list[Rewrite] = []
    for kind, statement, rewritten in _candidates(definition):
        if len(made) >= MAX_REWRITES:
            break
        module = load_rewritten(reference, rewritten, "rewrite")
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


def explain_rewrites(rewrites: tuple[Rewrite, ...], run: Callable[[Rewrite], Any], got: Any,
                     want: Any, failing: list[str], tol: Tolerance, name: str,
                     names: tuple[str, ...] | None) -> list[Diagnosis]:
    """The one rewriting that reproduces the student's values on this case (see the module
    docstring); ``run(rewrite)`` is the check's result with it (None: it failed)."""
    found = list(reproducing(rewrites, run, got, want, failing, tol, name, names))
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

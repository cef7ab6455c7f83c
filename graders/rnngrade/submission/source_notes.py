"""Notes read off a submission's source on the trusted side, before anything runs.

Two causes of failure that test results alone cannot name:

- a lab function that reads a module-level name where its parameter dict holds the same key
  (``Wf`` left by notebook demo code instead of ``parameters["Wf"]``): evidence is the free name
  in the function, its top-level binding, and the key in the reference's parameter dicts;
- a lab function whose signature cannot take the call the lab makes (an extra required argument,
  a missing one), compared with the reference solution's signature.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from rnngrade.harness.source.module_builder import Salvaged, salvage
from rnngrade.labs import Lab

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class ReferenceFacts:
    """What the notes compare a submission with, read once from the reference's source:
    each function's positional argument names and how many a call passes (its required ones),
    and the identifier keys its parameter dicts hold."""

    signatures: dict[str, tuple[tuple[str, ...], int]]
    parameter_keys: frozenset[str]


def reference_facts(reference_source: str) -> ReferenceFacts:
    """The facts of a reference solution's source (SyntaxError when it does not parse)."""
    tree = ast.parse(reference_source)
    return ReferenceFacts(_reference_signatures(tree), _parameter_keys(tree))


def source_notes(source: str, lab: Lab, facts: ReferenceFacts | None = None, *,
                 salvaged: Salvaged | None = None) -> list[str]:
    """Notes about the lab's functions in ``source`` (never raises on student input).

    facts: the reference's (default: read from the lab's solution file now); salvaged:
    ``salvage(source)``, when the caller has it already."""
    try:
        tree = (salvage(source) if salvaged is None else salvaged).tree
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if tree is None:
        return []
    if facts is None:
        facts = reference_facts(lab.solution_path().read_text(encoding="utf-8"))
    reference, keys = facts.signatures, facts.parameter_keys
    top_level = _top_level_bindings(tree)
    suspects = keys & set(top_level)  # only these names can be read by mistake
    notes = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                or node.name not in lab.functions:
            continue
        expected = reference.get(node.name)
        if expected is not None:
            note = _signature_note(node, *expected)
            if note:
                notes.append(note)
        if not suspects:
            continue
        for name in sorted(_free_names(node) & suspects):
            notes.append(f"`{node.name}` reads the global `{name}` defined at line "
                         f"{top_level[name]}, not `parameters['{name}']`: a module-level name "
                         "keeps whatever value your demo code gave it, so the function ignores "
                         "the parameters it is called with")
    return notes


def _signature_note(node: ast.FunctionDef | ast.AsyncFunctionDef, names: tuple[str, ...],
                    required: int) -> str | None:
    """A note when the student's def cannot be called with the reference's positional args."""
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    student_required = len(positional) - len(args.defaults)
    accepts = len(positional) >= required or args.vararg is not None
    needs_keywords = any(d is None for d in args.kw_defaults)
    if student_required <= required and accepts and not needs_keywords:
        return None
    shown = ", ".join(positional + ([f"*{args.vararg.arg}"] if args.vararg else [])
                      + [a.arg for a in args.kwonlyargs])
    return (f"`{node.name}` takes ({shown}); the lab calls it as "
            f"{node.name}({', '.join(names[:required])}), as the lab README and the stub define it")


def _reference_signatures(tree: ast.Module) -> dict[str, tuple[tuple[str, ...], int]]:
    """Each reference function's positional argument names and how many a call passes (its
    required ones)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            positional = [a.arg for a in node.args.posonlyargs + node.args.args]
            found[node.name] = (tuple(positional), len(positional) - len(node.args.defaults))
    return found


def _parameter_keys(tree: ast.Module) -> frozenset[str]:
    """The string keys the reference reads by subscript (``parameters["Wf"]``) that are
    identifiers: the names a parameter dict of the lab holds."""
    return frozenset(node.slice.value for node in ast.walk(tree)
                     if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                     and isinstance(node.slice.value, str) and node.slice.value.isidentifier())


def _top_level_bindings(tree: ast.Module) -> dict[str, int]:
    """Names bound by top-level assignments, with the line of the first binding."""
    bound: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound.setdefault(name.id, node.lineno)
    return bound


def _free_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function reads but never binds (not arguments, not assigned, not imported
    inside it, not builtins)."""
    local = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    read: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else local).add(node.id)
        elif isinstance(node, ast.alias):
            local.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                and node is not function:
            local.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            read.update(node.names)
    return read - local - _BUILTINS

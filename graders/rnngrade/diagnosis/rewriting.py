"""What the rewritings of a reference function share (``slips``, ``carried``, ``rewrites``):
its definition read from the reference's source, the rewritten function loaded beside the
reference's other names, and the rewritings built once per reference module and function.
Trusted code only: the reference and rewritings of it, never a student's source."""

from __future__ import annotations

import ast
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import numpy as np

from rnngrade.diagnosis.mutants import SOURCE
from rnngrade.diagnosis.structural import float_leaves
from rnngrade.harness.checks.evidence import informative
from rnngrade.harness.checks.tolerance import Tolerance

T = TypeVar("T")


class PerReference(Generic[T]):
    """Rewritings built once per reference module and function (a lab's assets hold the
    module: new assets, new module, built anew)."""

    def __init__(self) -> None:
        self._built: weakref.WeakKeyDictionary[types.ModuleType, dict[str, tuple[T, ...]]] = \
            weakref.WeakKeyDictionary()

    def get(self, reference: types.ModuleType, function: str,
            build: Callable[[types.ModuleType, str], tuple[T, ...]]) -> tuple[T, ...]:
        built = self._built.setdefault(reference, {})
        if function not in built:
            built[function] = build(reference, function)
        return built[function]


def definition_of(reference: types.ModuleType, function: str) -> ast.FunctionDef | None:
    """The top-level definition of ``function`` in the reference's source (None: none, or
    more than one)."""
    source = reference.__dict__.get(SOURCE)
    if not isinstance(source, str):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    return found[0] if len(found) == 1 else None


def load_rewritten(reference: types.ModuleType, definition: ast.FunctionDef, what: str
                   ) -> types.ModuleType | None:
    """The reference module with ``definition`` in place of its function (None when it does
    not compile or run); ``what`` names the rewriting (``slip``: ``<slip of f>``)."""
    module = types.ModuleType(f"{reference.__name__}_{what.replace(' ', '_')}")
    module.__dict__.update(reference.__dict__)
    try:
        code = compile(ast.fix_missing_locations(ast.Module([definition], [])),
                       f"<{what} of {definition.name}>", "exec")
        exec(code, module.__dict__)
    except Exception:  # noqa: BLE001 - a rewriting that does not compile is none
        return None
    return module


def loads(node: ast.AST, name: str) -> bool:
    """Whether ``node`` reads the name ``name``."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def close(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> bool:
    """Same shape and every entry finite and within ``tol`` of ``b``'s."""
    return a.shape == b.shape and bool(np.all(np.isfinite(a)) and np.all(
        np.abs(a - b) <= tol.atol + tol.rtol * np.abs(b)))


def reproducing(candidates: tuple[T, ...], run: Callable[[T], Any], got: Any, want: Any,
                failing: list[str], tol: Tolerance, name: str,
                names: tuple[str, ...] | None) -> Iterator[T]:
    """The rewritings whose result (``run(candidate)``; None: it failed) reproduces the
    student's on this case: every output the student has equal to theirs, and the failing
    outputs with enough distinct entries to tell a rewriting from a coincidence differing from
    the course's, as the student's do. Run one at a time, as they are asked for."""
    if not candidates or not failing:
        return
    leaves_want = float_leaves(want, name, names)
    leaves_got = float_leaves(got, name, names, {k: v.shape for k, v in leaves_want.items()})
    if any(leaf not in leaves_got for leaf in failing):
        return
    telling = [leaf for leaf in failing if informative(leaves_want[leaf], tol.atol)]
    if not telling:
        return
    for candidate in candidates:
        result = run(candidate)
        if result is None:
            continue
        theirs = float_leaves(result, name, names)
        if all(leaf in theirs and not close(theirs[leaf], leaves_want[leaf], tol)
               for leaf in telling) and all(
                k in theirs and close(g, theirs[k], tol) for k, g in leaves_got.items()):
            yield candidate

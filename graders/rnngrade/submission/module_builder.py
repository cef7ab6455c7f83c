"""Turning a submission's source text into a module, as a careful teaching assistant would.

Runs on the student side (inside the worker, or in-process with ``--inprocess``):

- ``np`` is predefined (classic notebooks imported it in a cell that was not exported);
- the classic platform's helper modules resolve to stand-ins (see ``standins``), and
  ``get_ipython()`` (magics in a script exported from a notebook) does nothing;
- source that does not parse as a whole is salvaged: every top-level statement that parses on its
  own is kept, and the notes say which lines were skipped;
- top-level statements run one at a time; one that raises is noted and skipped, and the rest
  (every function definition after it included) still runs;
- a function that only a stand-in supplies (``softmax`` from ``rnn_utils``) is not the
  student's work: it leaves the module's namespace for its builtins, so the student's own
  functions still call it but the grader finds it missing (and a note says where it came from).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
import traceback
import types
from dataclasses import dataclass, field

import numpy as np

from rnngrade.submission.standins import (
    get_ipython,
    looks_like_platform_test,
    make_standins,
    standin_origin,
)


@dataclass
class BuiltModule:
    module: types.ModuleType
    notes: list[str] = field(default_factory=list)
    fatal: str | None = None  # set when nothing usable could be loaded


def salvage_source(source: str) -> tuple[str, list[str]]:
    """Return source that parses, dropping top-level chunks that do not, and notes about it."""
    try:
        ast.parse(source)
        return source, []
    except SyntaxError:
        pass
    lines = source.splitlines(keepends=True)
    # Split into top-level chunks: a chunk starts at a line with no indentation that is not blank,
    # not a comment, and not the line right after a decorator.
    starts: list[int] = []
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] not in " \t" and not (starts and lines[starts[-1]].startswith("@")
                                          and i == _next_code_line(lines, starts[-1] + 1)):
            starts.append(i)
    kept: list[str] = []
    skipped: list[tuple[int, int]] = []
    lost: dict[int, list[str]] = {}  # first line of a skipped chunk -> functions defined there
    bounds = starts + [len(lines)]
    for begin, end in zip(bounds, bounds[1:]):
        chunk = "".join(lines[begin:end])
        try:
            ast.parse(chunk)
        except SyntaxError:
            skipped.append((begin + 1, _last_code_line(lines, begin, end) + 1))
            lost[begin + 1] = _DEF.findall(chunk)
            kept.append("\n" * (end - begin))  # keep line numbers stable for tracebacks
            continue
        kept.append(chunk if chunk.endswith("\n") else chunk + "\n")
    prefix = "".join(lines[: starts[0]]) if starts else ""
    notes = []
    for a, b in _merge(skipped):
        note = (f"lines {a}-{b} do not parse as Python and were skipped" if a != b
                else f"line {a} does not parse as Python and was skipped")
        names = [n for first, found in lost.items() if a <= first <= b for n in found]
        if names:
            note += (" — they define " + ", ".join(f"`{n}`" for n in names)
                     + ", which cannot be graded")
        notes.append(note)
    return prefix + "".join(kept), notes


_DEF = re.compile(r"^(?:async\s+)?def\s+(\w+)", re.MULTILINE)


def _next_code_line(lines: list[str], start: int) -> int:
    for i in range(start, len(lines)):
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            return i
    return len(lines)


def _last_code_line(lines: list[str], begin: int, end: int) -> int:
    for i in range(end - 1, begin - 1, -1):
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            return i
    return begin


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in ranges:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


class _StandinImporter:
    """Resolves imports of the classic platform's helper modules to stand-ins."""

    def __init__(self, real_import, standins: dict[str, types.ModuleType]) -> None:
        self.real_import = real_import
        self.standins = standins

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in self.standins:
            return self.standins[name]
        return self.real_import(name, globals, locals, fromlist, level)


def build_module(source: str, filename: str, module_name: str = "submission") -> BuiltModule:
    """Execute a submission's source as a module, one top-level statement at a time: a statement
    that fails (demo code, a stray name) is noted and skipped and the rest still runs."""
    module = types.ModuleType(module_name)
    module.__file__ = filename
    if "\x00" in source:
        return BuiltModule(module, [], fatal="the file contains NUL bytes: is it a binary file?")
    source, notes = salvage_source(source)
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError) as exc:
        return BuiltModule(module, notes, fatal=f"the submission does not compile: {exc}")
    module_builtins = dict(vars(builtins))
    standins = make_standins(_undefined_test_names(tree))
    module_builtins["__import__"] = _StandinImporter(builtins.__import__, standins)
    module_builtins.setdefault("get_ipython", get_ipython)  # magics in a .py export
    module.__dict__["__builtins__"] = module_builtins
    module.__dict__["np"] = np
    sys.modules[module_name] = module
    failures: list[tuple[int, str]] = []
    for statement in tree.body:
        try:
            code = compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec")
            exec(code, module.__dict__)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any top-level failure is the submission's
            kind = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            failures.append((statement.lineno, kind.splitlines()[0] if kind else
                             type(exc).__name__))
    borrowed = _hide_standin_functions(module, module_builtins)
    return BuiltModule(module, notes + _failure_notes(failures) + borrowed)


def _hide_standin_functions(module: types.ModuleType, module_builtins: dict) -> list[str]:
    """Move the public names bound to a stand-in's function from the module's namespace to its
    builtins (still found by the student's functions, no longer by the grader); one note."""
    hidden: dict[str, list[str]] = {}
    for name, value in list(module.__dict__.items()):
        origin = standin_origin(value) if not name.startswith("_") else None
        if origin is None:
            continue
        del module.__dict__[name]
        module_builtins[name] = value
        hidden.setdefault(origin, []).append(f"`{name}`")
    return [f"{' and '.join(names)} {'comes' if len(names) == 1 else 'come'} from `{origin}` "
            "(the course platform's helper module, which the grader provides), not from your "
            "file: a lab function among them scores as missing; your own functions still call "
            f"{'it' if len(names) == 1 else 'them'}" for origin, names in hidden.items()]


def _failure_notes(failures: list[tuple[int, str]], shown: int = 3) -> list[str]:
    """One note per failing top-level statement, the ones after ``shown`` in a single note."""
    notes = [f"line {line}: top-level code uses something that still looks unfinished ({kind}); "
             "skipped (functions are still graded)" if "NoneType" in kind else
             f"line {line}: top-level code raised {kind}; skipped (functions are still graded)"
             for line, kind in failures[:shown]]
    rest = failures[shown:]
    if rest:
        lines = ", ".join(str(line) for line, _ in rest[:12]) + (", ..." if len(rest) > 12 else "")
        notes.append(f"{len(rest)} more top-level statement(s) raised as well (lines {lines}); "
                     "skipped (demo code does not affect the grade)")
    return notes


def _undefined_test_names(tree: ast.Module) -> frozenset[str]:
    """Names the submission reads but never binds that look like the platform's tests."""
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else used).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return frozenset(n for n in used - bound if looks_like_platform_test(n))

"""Turning a submission's source text into a module, as a careful teaching assistant would.

Runs on the student side (inside the worker, or in-process with ``--inprocess``):

- ``np`` is predefined (classic notebooks imported it in a cell that was not exported);
- the classic platform's helper modules resolve to the lab's platform modules
  (``platform_modules``), and
  ``get_ipython()`` (magics in a script exported from a notebook) does nothing;
- source that does not parse as a whole is salvaged: every top-level statement that parses on its
  own is kept, and the notes say which lines were skipped and the syntax error in them; a
  function defined there raises that SyntaxError when called, so its tests name it;
- top-level statements run one at a time; one that raises is noted and skipped, and the rest
  (every function definition after it included) still runs;
- a function that only a platform module supplies (``softmax`` from ``rnn_utils``) is not the
  student's work: it leaves the module's namespace for its builtins, so the student's own
  functions still call it but the grader finds it missing (and a note says where it came from).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
import tokenize
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from rnngrade.harness.source.platform_modules import (
    get_ipython,
    looks_like_platform_test,
    make_platform_modules,
    platform_origin,
)


@dataclass
class BuiltModule:
    module: types.ModuleType
    notes: list[str] = field(default_factory=list)
    fatal: str | None = None  # set when nothing usable could be loaded


@dataclass(frozen=True)
class SkippedDefinition:
    """A function defined in lines that do not parse: what the grader tells the student."""

    name: str
    detail: str  # "line 29: expected ':' in `def rnn_forward(x, a0, parameters)`"


@dataclass(frozen=True)
class Salvaged:
    """What ``salvage`` keeps of a source: the part that parses, parsed once for every reader."""

    source: str  # the lines that parse; dropped lines are left blank, so line numbers hold
    tree: ast.Module | None  # ``source`` parsed (None: the kept lines still do not parse)
    notes: list[str]  # what was dropped, and why
    definitions: list[SkippedDefinition]  # the functions defined in the dropped lines


def salvage(source: str, merge_limit: int = 12) -> Salvaged:
    """Source that parses (and its tree), notes on what was dropped, and the functions defined
    in the dropped lines (each with the syntax error that dropped it).

    The file is cut into top-level chunks (a chunk starts at a line with no indentation that is
    neither blank, nor a comment, nor right after a decorator, nor inside a string literal begun
    on an earlier line: a docstring's text at column 0). A chunk that does not parse on
    its own is tried together with the next ones (up to ``merge_limit``), so a string or a
    bracket that continues at column 0 keeps its definition whole; a chunk that parses in no
    such merge is dropped, with the first syntax error in it.
    """
    try:
        return Salvaged(source, ast.parse(source), [], [])
    except SyntaxError:
        pass
    lines = source.splitlines(keepends=True)
    in_string = _inside_strings(lines)
    starts: list[int] = []
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or i in in_string:
            continue
        if line[0] not in " \t" and not (starts and lines[starts[-1]].startswith("@")
                                          and i == _next_code_line(lines, starts[-1] + 1)):
            starts.append(i)
    bounds = starts + [len(lines)]
    kept: list[str] = []
    skipped: list[tuple[int, int, SyntaxError]] = []
    lost: dict[int, list[str]] = {}  # first line of a skipped chunk -> functions defined there
    k = 0
    while k < len(starts):
        begin = bounds[k]
        for j in range(k + 1, min(k + 1 + merge_limit, len(starts) + 1)):
            chunk = "".join(lines[begin:bounds[j]])
            if _parses(chunk):
                kept.append(chunk if chunk.endswith("\n") else chunk + "\n")
                k = j
                break
        else:
            end = bounds[k + 1]
            chunk = "".join(lines[begin:end])
            skipped.append((begin + 1, _last_code_line(lines, begin, end) + 1,
                            _first_error(chunk, begin)))
            lost[begin + 1] = _DEF.findall(chunk)
            kept.append("\n" * (end - begin))  # keep line numbers stable for tracebacks
            k += 1
    prefix = "".join(lines[: starts[0]]) if starts else ""
    notes: list[str] = []
    definitions: list[SkippedDefinition] = []
    for a, b, error in _merge(skipped):
        detail = _describe_syntax_error(error, lines)
        note = (f"lines {a}-{b} do not parse as Python and were skipped" if a != b
                else f"line {a} does not parse as Python and was skipped")
        note += f" ({detail.replace(':', ': SyntaxError:', 1)})"
        names = [n for first, found in lost.items() if a <= first <= b for n in found]
        if names:
            note += (" — they define " + ", ".join(f"`{n}`" for n in names)
                     + ", which cannot be graded; the rest of the file is graded")
        notes.append(note)
        definitions += [SkippedDefinition(n, detail) for n in names]
    salvaged = prefix + "".join(kept)
    try:
        tree: ast.Module | None = ast.parse(salvaged)
    except (SyntaxError, ValueError):
        tree = None
    return Salvaged(salvaged, tree, notes, definitions)


def _inside_strings(lines: list[str]) -> set[int]:
    """The indices of the lines that continue a string literal begun on an earlier line. The
    lexer reads as far as the source makes sense (an unterminated string ends it quietly)."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            first, last = token.start[0], token.end[0]  # rows, from 1: the lines after ``first``
            inside.update(range(first, last))
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError):
        pass
    return inside


def _parses(chunk: str) -> bool:
    try:
        ast.parse(chunk)
    except (SyntaxError, ValueError):
        return False
    return True


def _first_error(chunk: str, offset: int) -> SyntaxError:
    """The syntax error of ``chunk`` (which starts at line ``offset + 1`` of the file)."""
    try:
        ast.parse(chunk)
    except SyntaxError as exc:
        exc.lineno = (exc.lineno or 1) + offset
        return exc
    except ValueError as exc:  # e.g. NUL bytes
        return SyntaxError(str(exc), (None, offset + 1, 0, ""))
    return SyntaxError("does not parse", (None, offset + 1, 0, ""))


def _describe_syntax_error(error: SyntaxError, lines: list[str]) -> str:
    """``line 29: expected ':' in `def rnn_forward(x, a0, parameters)```."""
    line = error.lineno or 0
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    if len(text) > 80:
        text = text[:77] + "..."
    where = f" in `{text}`" if text and "`" not in text else ""
    return f"line {line}: {error.msg}{where}"


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


def _merge(ranges: list[tuple[int, int, SyntaxError]]) -> list[tuple[int, int, SyntaxError]]:
    """Adjacent skipped ranges as one, with the first range's syntax error."""
    merged: list[tuple[int, int, SyntaxError]] = []
    for a, b, error in ranges:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]), merged[-1][2])
        else:
            merged.append((a, b, error))
    return merged


# builtins.__import__'s signature
_Import = Callable[[str, Mapping[str, object] | None, Mapping[str, object] | None, Sequence[str],
                    int], types.ModuleType]


class _PlatformImporter:
    """Resolves imports of the classic platform's helper modules to the platform modules."""

    def __init__(self, real_import: _Import, modules: dict[str, types.ModuleType]) -> None:
        self.real_import = real_import
        self.modules = modules

    def __call__(self, name: str, globals: Mapping[str, object] | None = None,
                 locals: Mapping[str, object] | None = None, fromlist: Sequence[str] = (),
                 level: int = 0) -> types.ModuleType:
        if level == 0 and name in self.modules:
            return self.modules[name]
        return self.real_import(name, globals, locals, fromlist, level)


def build_module(source: str, filename: str, module_name: str = "submission",
                 salvaged: Salvaged | None = None,
                 lab_modules: dict[str, str] | None = None) -> BuiltModule:
    """Execute a submission's source as a module, one top-level statement at a time: a statement
    that fails (demo code, a stray name) is noted and skipped and the rest still runs.

    salvaged: ``salvage(source)``, when the caller has it already; ``lab_modules``: the lab's
    own platform modules (``Registry.modules``), importable by the submission."""
    module = types.ModuleType(module_name)
    module.__file__ = filename
    if "\x00" in source:
        return BuiltModule(module, [], fatal="the file contains NUL bytes: is it a binary file?")
    kept = salvage(source) if salvaged is None else salvaged
    notes, unparsable, tree = list(kept.notes), kept.definitions, kept.tree
    if tree is None:
        try:
            tree = ast.parse(kept.source, filename)  # fails again, now naming the file
        except (SyntaxError, ValueError) as exc:
            return BuiltModule(module, notes, fatal=f"the submission does not compile: {exc}")
    module_builtins = dict(vars(builtins))
    platform = make_platform_modules(_undefined_test_names(tree), lab_modules)
    module_builtins["__import__"] = _PlatformImporter(builtins.__import__, platform)
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
    for definition in unparsable:  # graded as what it is: a syntax error, not a missing name
        if definition.name not in module.__dict__:
            module.__dict__[definition.name] = _unparsable(definition)
    borrowed = _hide_platform_functions(module, module_builtins)
    return BuiltModule(module, notes + _failure_notes(failures) + borrowed)


def _unparsable(definition: SkippedDefinition) -> Callable[..., NoReturn]:
    """What stands for a function whose definition does not parse: it raises SyntaxError with
    the line, so its tests say why they score 0."""
    message = f"`{definition.name}` cannot be graded: {definition.detail}"

    def unparsable(*args: object, **kwargs: object) -> NoReturn:
        raise SyntaxError(message)
    unparsable.__name__ = definition.name
    return unparsable


def _hide_platform_functions(module: types.ModuleType, module_builtins: dict) -> list[str]:
    """Move the public names bound to a platform module's function from the module's namespace
    to its builtins (still found by the student's functions, no longer by the grader); one note."""
    hidden: dict[str, list[str]] = {}
    for name, value in list(module.__dict__.items()):
        origin = platform_origin(value) if not name.startswith("_") else None
        if origin is None:
            continue
        del module.__dict__[name]
        module_builtins[name] = value
        hidden.setdefault(origin, []).append(f"`{name}`")
    return [platform_note(origin, names) for origin, names in hidden.items()]


def platform_note(origin: str, names: list[str]) -> str:
    """The note on the names (in backticks) that a platform module ``origin`` supplied."""
    one = len(names) == 1
    return (f"{' and '.join(names)} {'comes' if one else 'come'} from `{origin}` (the course "
            "platform's helper module, which the grader provides), not from your file: if the "
            f"lab asks for {'it' if one else 'one of them'}, its tests score as missing; your "
            f"own functions still call {'it' if one else 'them'}")


def failure_note(line: int, kind: str, unfinished: bool | None = None) -> str:
    """The note on a top-level statement that raised (``kind``: the exception's first line;
    unfinished: whether it tripped on a None placeholder, by default read off ``kind``)."""
    if "NoneType" in kind if unfinished is None else unfinished:
        return (f"line {line}: top-level code uses something that still looks unfinished "
                f"({kind}); skipped (functions are still graded)")
    return f"line {line}: top-level code raised {kind}; skipped (functions are still graded)"


def _failure_notes(failures: list[tuple[int, str]], shown: int = 3) -> list[str]:
    """One note per failing top-level statement, the ones after ``shown`` in a single note."""
    notes = [failure_note(line, kind) for line, kind in failures[:shown]]
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

"""Argument writes in the public tests: a student function that changes an array it was passed.

The public harness calls the student's functions on copies of their arguments
(``InProcessRunner``), so the caller's arrays never change and an in-place write (``c_prev *=
ft``, ``np.multiply(..., out=c_prev)``, ``a_prev[:] = a_next``) would go unseen: the values a
test compares can still be right. Each call's arguments as passed are compared with the copies
after the call, bit for bit where the bits agree, else value for value (NaN equal to NaN), as
the grader does (``diagnosis/aliasing.py`` names the same write ``result_written_into_argument``).
The line names the argument by the function's own parameter name and, when the argument now
holds one of the returned entries, that entry by the name the function's docstring gives it
(``Returns ``(a_next, c_next, yt_pred, cache)````) or its key.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import to_numpy
from rnngrade.harness.runner.proxy import ModuleProxy

_PATH = re.compile(r"^argument (\d+)(.*)$")
_RETURNS = re.compile(r"Returns\s+``\(([^`]*)\)``")


def changed_entry(before: Any, after: Any, path: str) -> str:
    """The path of the first entry where ``after`` differs from ``before`` (``argument 3``,
    ``argument 4['Wf']``, ``argument 1['b'] added``); '' when they hold the same values (the
    same object: the sandbox vouched that the call left it alone; the same bits: equal, NaN
    included)."""
    if before is after:
        return ""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                return f"{path}[{key!r}] removed"
            found = changed_entry(before[key], after[key], f"{path}[{key!r}]")
            if found:
                return found
        added = [key for key in after if key not in before]
        return f"{path}[{added[0]!r}] added" if added else ""
    if isinstance(before, tuple | list) and isinstance(after, tuple | list):
        for i, (b, a) in enumerate(zip(before, after)):
            found = changed_entry(b, a, f"{path}[{i}]")
            if found:
                return found
        return "" if len(before) == len(after) else f"{path} changed length"
    b, a = to_numpy(before), to_numpy(after)
    if b is not None and a is not None:
        if b.shape != a.shape:
            return path
        if b.dtype == a.dtype and b.dtype.kind in "biufc" and b.tobytes() == a.tobytes():
            return ""
        if not np.array_equal(b, a, equal_nan=b.dtype.kind in "fc"):
            return path
    return ""


def entry_at(value: Any, rest: str) -> Any:
    """The entry of ``value`` at ``rest`` (``['Wf']``, ``[0]``); None when there is none."""
    for key in re.findall(r"\[('[^']*'|\d+)\]", rest):
        try:
            value = value[key[1:-1]] if key.startswith("'") else value[int(key)]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def parameters_of(target: Any) -> tuple[str, ...]:
    """The parameter names of the student's function (() when it has no readable signature)."""
    try:
        return tuple(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return ()


def returned_names(target: Any) -> tuple[str, ...]:
    """The names of the returned entries as the function's docstring gives them (the course's
    stub says ``Returns ``(a_next, c_next, yt_pred, cache)````); () when it gives none."""
    doc = getattr(target, "__doc__", None)
    found = _RETURNS.search(doc) if isinstance(doc, str) else None
    if found is None:
        return ()
    names = tuple(n.strip() for n in found.group(1).split(","))
    return names if all(re.fullmatch(r"[A-Za-z_]\w{0,39}", n) for n in names) else ()


def returned_entries(value: Any, names: tuple[str, ...],
                     complete: bool = True) -> list[tuple[str, Any]]:
    """The returned value's entries one level down, with their names (``names`` used only when
    it names every entry, unless not ``complete``)."""
    if isinstance(value, tuple | list):
        usable = bool(names) and (len(names) == len(value) or not complete)
        return [(names[i] if usable and i < len(names) else f"output {i + 1}", v)
                for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    return [("the result", value)]


def holds_returned_entry(entry: Any, now: Any, was: Any) -> bool:
    """Whether the argument ``now`` is the returned ``entry``, or holds exactly its values after
    the call and held other values before."""
    if now is None:
        return False
    if entry is now:
        return True
    a, b, c = to_numpy(entry), to_numpy(now), to_numpy(was)
    if a is None or b is None or c is None or a.shape != b.shape or a.dtype.kind not in "fc" \
            or a.size < 2:
        return False
    return bool(np.array_equal(a, b) and not np.array_equal(b, c))


@dataclass(frozen=True)
class ArgumentWrite:
    """An in-place write read from its path: ``shown``, the argument by the function's parameter
    name with the entry written (``c_prev``, ``parameters['Wf']``); ``entry``, the returned entry
    the argument now holds (None when none); ``same``, that entry *is* the argument."""

    shown: str
    entry: str | None = None
    same: bool = False


def read_write(path: str, parameters: tuple[str, ...], before: tuple, after: tuple,
               entries: list[tuple[str, Any]]) -> ArgumentWrite | None:
    """The write at ``path`` (``changed_entry``'s "argument 3['Wf']") of a call whose arguments
    were ``before`` and are ``after``, ``entries`` its named returned entries; None when the path
    names no argument of the call."""
    found = _PATH.match(path)
    if found is None:
        return None
    position, rest = int(found.group(1)) - 1, found.group(2)
    if not 0 <= position < min(len(before), len(after)):
        return None
    label = parameters[position] if position < len(parameters) else f"argument {position + 1}"
    shown = label + rest.removesuffix(" added").removesuffix(" removed").removesuffix(
        " changed length")
    was, now = entry_at(before[position], rest), entry_at(after[position], rest)
    for entry, value in entries:
        if holds_returned_entry(value, now, was):
            return ArgumentWrite(shown, entry, value is now)
    return ArgumentWrite(shown)


def write_line(function: str, path: str, parameters: tuple[str, ...], before: tuple,
               after: tuple, returned: Any, names: tuple[str, ...]) -> str:
    """What the public tests say of the in-place write ``path`` of a call of ``function``."""
    write = read_write(path, parameters, before, after, returned_entries(returned, names)) \
        or ArgumentWrite(path)
    shown, entry = write.shown, write.entry
    if entry is not None:
        return (f"`{function}` writes `{entry}` into the array passed as `{shown}`: the "
                f"caller's `{shown}` is changed in place"
                f"{f', and the `{entry}` it returns is that same array' if write.same else ''}"
                f"; build `{entry}` as a new array (no `*=`, `+=`, `out=` or slice "
                f"assignment on an argument): the caller still needs `{shown}`")
    return (f"`{function}` changes its argument `{shown}` in place; work on a copy or build new "
            "arrays: the caller still needs the values it passed")


def argument_writes(calls: list[Any], functions: dict[str, Any]) -> list[tuple[str, str]]:
    """``(function, line)`` for each student function among ``calls`` (``CallRecord`` of a
    ``ModuleProxy``) that changed an argument in place, the first write of each function
    (``functions``: the student's functions by name, for their parameter and output names)."""
    found: dict[str, str] = {}
    for record in calls:
        if record.function in found or record.function.startswith("helper:"):
            continue
        after = getattr(record.result, "args_after", None)
        if after is None:
            continue
        for position, (was, now) in enumerate(zip(record.args_before, after)):
            path = changed_entry(was, now, f"argument {position + 1}")
            if path:
                target = functions.get(record.function)
                found[record.function] = write_line(
                    record.function, path, parameters_of(target), tuple(record.args_before),
                    tuple(after), record.result.value, returned_names(target))
                break
    return list(found.items())


@dataclass(eq=False)
class WriteCheckingProxy(ModuleProxy):
    """A ``ModuleProxy`` that compares each call's arguments as passed with the copies the
    student's function ran on as soon as the call returns: a test may change its own arrays
    afterwards (a numerical gradient perturbs its inputs between calls), so a comparison at the
    end of the test would report the test's own changes. ``writes``: (index of the call in
    ``calls``, function, line) of each write found."""

    writes: list[tuple[int, str, str]] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        call = super().__getattr__(name)

        def checked(*args: Any, **kwargs: Any) -> Any:
            start = len(self.calls)
            try:
                return call(*args, **kwargs)
            finally:
                self._check(start)

        checked.__name__ = name
        return checked

    def head(self, name: str, n: int, *args: Any, **kwargs: Any) -> Any:
        start = len(self.calls)
        try:
            return super().head(name, n, *args, **kwargs)
        finally:
            self._check(start)

    def on_cache(self, function: str, before: tuple, producer: str, producer_args: tuple,
                 index: int) -> Any:
        start = len(self.calls)
        try:
            return super().on_cache(function, before, producer, producer_args, index)
        finally:
            self._check(start)

    def _check(self, start: int) -> None:
        """Record the writes of the calls logged from ``start`` on; never raises (a failure to
        tell is no finding, and the call's own outcome stands)."""
        module = getattr(self.runner, "module", None)
        try:
            for index, record in enumerate(self.calls[start:], start):
                target = {record.function: getattr(module, record.function, None)}
                self.writes += [(index, f, line) for f, line in argument_writes([record], target)]
        except Exception:  # noqa: BLE001
            return

"""A public test whose function calls another of the student's functions that has failed its
own test: its values carry that function's mistake, so no headline names a mistake of its own.

Which of the student's functions a function calls is read off the student's file (the names of
the module's own functions in its body); which ones failed is what this pytest session has seen
so far (a test's function: the longest of the module's function names its name holds).
"""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

FAILED = pytest.StashKey[set[str]]()


def subject(test_name: str, functions: set[str]) -> str | None:
    """The function a test is about: the longest of ``functions`` its name holds as a whole
    word between underscores (``test_lstm_cell_backward_values``: ``lstm_cell_backward``)."""
    named = [f for f in functions if re.search(rf"(^|_){re.escape(f)}(_|\[|$)", test_name)]
    return max(named, key=len) if named else None


def _own_functions(module: types.ModuleType) -> set[str]:
    return {name for name, value in vars(module).items()
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__}


def callees(module: types.ModuleType, function: str) -> set[str]:
    """The module's own functions that ``function`` names in its body (read off its file;
    none when the file cannot be read or parsed)."""
    try:
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    own = _own_functions(module) - {function}
    return {n.id for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == function
            for n in ast.walk(d) if isinstance(n, ast.Name) and n.id in own}


def failed_callees(item: pytest.Item, module: types.ModuleType) -> tuple[str, list[str]]:
    """The failed test ``item``'s function, and the functions it calls that failed a test
    earlier in this session (none: ""); records the test's own function as failed."""
    failed = item.session.stash.setdefault(FAILED, set())
    function = subject(item.name, _own_functions(module))
    if function is None:
        return "", []
    blamed = sorted(callees(module, function) & failed)
    failed.add(function)
    return function, blamed


def note(function: str, blamed: list[str]) -> str:
    listed = " and ".join(f"`{f}`" for f in blamed)
    return (f"your {listed} failed {'its' if len(blamed) == 1 else 'their'} own test above, "
            f"and your `{function}` calls {'it' if len(blamed) == 1 else 'them'}: this result "
            f"carries that mistake, so fix {listed} first and run the tests again.")

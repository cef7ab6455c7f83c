"""Reference solution → student stub: each solution region becomes a NotImplementedError."""

from __future__ import annotations

import ast
import re

from rnngrade.errors import GraderError

# The solution markers of a reference: the one definition (mutants strip them, stubs replace what
# they enclose, the release audit treats what they enclose as secret).
BEGIN_MARKER = "# BEGIN SOLUTION"
END_MARKER = "# END SOLUTION"
BEGIN = re.compile(rf"^(?P<indent>[ \t]*){re.escape(BEGIN_MARKER)}[ \t]*$")
END = re.compile(rf"^[ \t]*{re.escape(END_MARKER)}[ \t]*$")
SOLUTION_MARKER = re.compile(  # a whole marker line, newline included
    rf"^[ \t]*(?:{re.escape(BEGIN_MARKER)}|{re.escape(END_MARKER)})[ \t]*\n", re.MULTILINE)

STUB_HEADER = (
    "# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`\n"
    "# with your code; keep the function names and signatures. Run `pytest {test_path}` to check.\n"
)


class MarkerError(GraderError, ValueError):
    """Unbalanced or misplaced solution markers."""


def solution_regions(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, indentation) of each region, 0-based inclusive of the markers."""
    regions: list[tuple[int, int, str]] = []
    start: tuple[int, str] | None = None
    for number, line in enumerate(source.splitlines()):
        begin = BEGIN.match(line)
        if begin:
            if start is not None:
                raise MarkerError(f"line {number + 1}: BEGIN SOLUTION inside another region")
            start = (number, begin.group("indent"))
        elif END.match(line):
            if start is None:
                raise MarkerError(f"line {number + 1}: END SOLUTION without BEGIN SOLUTION")
            regions.append((start[0], number, start[1]))
            start = None
    if start is not None:
        raise MarkerError(f"line {start[0] + 1}: BEGIN SOLUTION is never closed")
    return regions


def _enclosing_functions(source: str) -> dict[int, str]:
    """Map each 0-based line number to the name of the innermost function containing it."""
    owner: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # ast.walk is breadth-first, so inner functions overwrite their enclosing ones.
            for line in range(node.lineno - 1, node.end_lineno or node.lineno):
                owner[line] = node.name
    return owner


def make_stub(source: str, test_path: str) -> str:
    """The student stub for a reference module."""
    lines = source.splitlines()
    regions = solution_regions(source)
    owners = _enclosing_functions(source)
    out: list[str] = []
    cursor = 0
    for first, last, indent in regions:
        function = owners.get(first)
        if function is None:
            raise MarkerError(f"line {first + 1}: a solution region must sit inside a function")
        out.extend(lines[cursor:first])
        out.append(
            f'{indent}raise NotImplementedError("{function}: not implemented yet — '
            f'replace this line with your code")'
        )
        cursor = last + 1
    out.extend(lines[cursor:])
    return STUB_HEADER.format(test_path=test_path) + "\n".join(out) + "\n"

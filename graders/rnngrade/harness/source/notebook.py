"""Notebook → module source: code cells joined, IPython magics and shell lines dropped.

Read tolerantly, as the student's file may be anything: a version-4 notebook is read from its
JSON directly (a cell that is not an object, or whose ``source`` is not text, is skipped with a
note); older versions go through nbformat's upgrade first. JSON nested too deep to parse, and
anything nbformat refuses, are NotebookError.
"""

from __future__ import annotations

import json
from typing import Any

import nbformat

from rnngrade.harness.errors import SubmissionError


class NotebookError(SubmissionError, ValueError):
    """The file is not a readable Jupyter notebook."""


def notebook_source(text: str, name: str) -> tuple[str, list[str]]:
    """The code of a notebook's code cells, and notes about what was dropped."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not valid JSON "
                            f"(line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise NotebookError(f"{name} is not a Jupyter notebook: its JSON is nested too deeply "
                            "to read") from None
    if not isinstance(parsed, dict):
        raise NotebookError(f"{name} is not a Jupyter notebook: it is JSON, but not an object")
    cells = parsed.get("cells") if parsed.get("nbformat") == 4 else _upgraded(text, name)
    if not isinstance(cells, list):
        raise NotebookError(f"{name} is not a readable Jupyter notebook: its 'cells' is not "
                            "a list")
    return _code(cells)


def _upgraded(text: str, name: str) -> Any:
    """The cells of an older (or unversioned) notebook, upgraded by nbformat."""
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds
        raise NotebookError(f"{name} is not a readable Jupyter notebook: "
                            f"{str(exc)[:300]}") from None
    return notebook.get("cells") if isinstance(notebook, dict) else None


def _text(source: Any) -> str | None:
    """A cell's source as text: a string or a list of strings; None for anything else."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def _code(cells: list[Any]) -> tuple[str, list[str]]:
    chunks: list[str] = []
    dropped_lines = dropped_cells = malformed = 0
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            malformed += 1
            continue
        if cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source", ""))
        if source is None:
            malformed += 1
            continue
        if source.lstrip().startswith("%%"):
            dropped_cells += 1
            continue
        kept = []
        for line in source.splitlines():
            if line.lstrip().startswith(("%", "!")):
                dropped_lines += 1
                kept.append("")  # keep the line count of the cell
            else:
                kept.append(line)
        chunks.append(f"# --- notebook cell {number} ---\n" + "\n".join(kept))
    notes = []
    if dropped_lines:
        notes.append(f"{dropped_lines} IPython magic or shell line(s) were skipped")
    if dropped_cells:
        notes.append(f"{dropped_cells} cell(s) with a cell magic (%%) were skipped")
    if malformed:
        notes.append(f"{malformed} cell(s) were skipped: not a notebook cell, or their source "
                     "is not text")
    return "\n\n".join(chunks) + "\n", notes

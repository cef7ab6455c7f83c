"""Notebook → module source: code cells joined, IPython magics and shell lines dropped."""

from __future__ import annotations

import json

import nbformat

from rnngrade.errors import SubmissionError


class NotebookError(SubmissionError, ValueError):
    """The file is not a readable Jupyter notebook."""


def notebook_source(text: str, name: str) -> tuple[str, list[str]]:
    """The code of a notebook's code cells, and notes about what was dropped."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not valid JSON "
                            f"(line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds
        raise NotebookError(f"{name} is not a readable Jupyter notebook: {exc}") from None
    chunks: list[str] = []
    dropped_lines = 0
    dropped_cells = 0
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
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
    return "\n\n".join(chunks) + "\n", notes

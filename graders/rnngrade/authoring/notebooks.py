"""Module source → Jupyter notebook: one code cell per top-level block, markdown around them."""

from __future__ import annotations

import ast

import nbformat


def split_top_level(source: str) -> tuple[str, list[tuple[str, str]]]:
    """(module docstring, [(name, code)]) with imports gathered into one block named ''."""
    tree = ast.parse(source)
    lines = source.splitlines()
    docstring = ast.get_docstring(tree) or ""
    blocks: list[tuple[str, str]] = []
    imports: list[str] = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        code = "\n".join(lines[start:node.end_lineno])
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(code)
        elif isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant) \
                and node is tree.body[0]:
            continue  # the module docstring, shown as markdown
        else:
            name = getattr(node, "name", "")
            blocks.append((name, code))
    if imports:
        blocks.insert(0, ("", "\n".join(imports)))
    return docstring, blocks


def module_to_notebook(source: str, title: str, *, test_command: str | None = None,
                       intro: str = "") -> nbformat.NotebookNode:
    """A notebook whose code cells, run in order, define the same module."""
    docstring, blocks = split_top_level(source)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{intro}".rstrip() + "\n\n" +
                                           _as_markdown(docstring))]
    for name, code in blocks:
        if name:
            cells.append(nbformat.v4.new_markdown_cell(f"### `{name}`"))
        cells.append(nbformat.v4.new_code_cell(code))
    if test_command:
        cells.append(nbformat.v4.new_markdown_cell(
            "## Check your work\n\nRun the public tests (they grade the module file, so copy "
            "your functions into it first or export this notebook):"))
        cells.append(nbformat.v4.new_code_cell(f"!{test_command}"))
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index:03d}"
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def _as_markdown(docstring: str) -> str:
    return "\n".join(("    " + line) if line.startswith(" ") else line
                     for line in docstring.splitlines())


def notebook_bytes(nb: nbformat.NotebookNode) -> bytes:
    return (nbformat.writes(nb) + "\n").encode()

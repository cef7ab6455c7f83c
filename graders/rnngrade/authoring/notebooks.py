"""Module source → Jupyter notebook: one code cell per top-level block, markdown around them."""

from __future__ import annotations

import ast
import re

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


# --- the lab notebook: README sections beside the stub's code cells ------------------------------

NOTEBOOK_TEST_MODULE = "rnngrade.harness.checks.notebook_tests"
_HEADING = re.compile(r"^(#{2,3})\s+(?P<text>.+?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_NAME = re.compile(r"`([A-Za-z_]\w*)")


def readme_sections(readme: str) -> tuple[str, list[tuple[str, str]]]:
    """(text before the first ``##``/``###`` heading, [(heading text, section markdown)])."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in readme.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            sections.append((heading.group("text"), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return ("\n".join(preamble).strip(),
            [(title, "\n".join(body).strip()) for title, body in sections])


def _function_nodes(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {node.name: node for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    if node.args.vararg:
        names.append("*" + node.args.vararg.arg)
    names += [a.arg for a in node.args.kwonlyargs]
    if node.args.kwarg:
        names.append("**" + node.args.kwarg.arg)
    return f"{node.name}({', '.join(names)})"


def _is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n)
               for n in ast.walk(node))


def lab_notebook(lab: str, title: str, module: str, stub: str,
                 readme: str | None = None) -> nbformat.NotebookNode:
    """The student notebook of a lab: the README's sections as Markdown, each placed before the
    code cell of the first function its heading names; the stub's top-level blocks as code cells
    in source order (so the cells, run in order, define the same module as ``<module>.py``); and a
    last cell that runs the public tests on the saved notebook.

    Code cells carry ``metadata.rnngrade.block`` (the function name, or "" for other code) so a
    tool can find the cell of a function."""
    docstring, blocks = split_top_level(stub)
    functions = _function_nodes(stub)
    preamble, sections = readme_sections(readme or "")
    intro = preamble or f"# {lab} — {title}"
    before: dict[int, list[str]] = {}
    first_def = next((i for i, (name, _) in enumerate(blocks) if name in functions), len(blocks))
    position = {name: i for i, (name, _) in enumerate(blocks) if name}
    anchor = first_def
    for heading, text in sections:
        named = sorted(position[n] for n in _CODE_NAME.findall(heading)
                       if n in functions and position[n] >= anchor)
        at = named[0] if named else anchor
        before.setdefault(at, []).append(text)
        if named:
            anchor = named[-1] + 1
    working = (
        "## Working in this notebook\n\n"
        f"This notebook holds the same functions as `{module}.py`. Work in one of the two, not "
        "both: replace every `raise NotImplementedError(...)` with your code and keep the function "
        "names and arguments. Run the cells from the top so later cells see earlier ones.\n\n"
        "To check your work, **save the notebook** and run the last cell: it runs the public "
        f"tests of {lab} on the functions saved in this notebook.")
    cells = [nbformat.v4.new_markdown_cell(intro), nbformat.v4.new_markdown_cell(working)]
    if docstring:
        cells.append(nbformat.v4.new_markdown_cell(f"## About `{module}.py`\n\n"
                                                   + _as_markdown(docstring)))
    for index, (name, code) in enumerate(blocks):
        cells += [nbformat.v4.new_markdown_cell(text) for text in before.get(index, [])]
        node = functions.get(name)
        if node is not None:
            doc = (ast.get_docstring(node) or "").strip().split("\n\n")[0].replace("\n", " ")
            role = "your code" if _is_stub(node) else "given — run this cell"
            cells.append(nbformat.v4.new_markdown_cell(
                f"#### `{_signature(node)}` ({role})" + (f"\n\n{doc}" if doc else "")))
        cell = nbformat.v4.new_code_cell(code)
        cell.metadata["rnngrade"] = {"block": name if node is not None else ""}
        cells.append(cell)
    cells += [nbformat.v4.new_markdown_cell(text) for text in before.get(len(blocks), [])]
    cells.append(nbformat.v4.new_markdown_cell(
        "## Check your work\n\nSave the notebook first (the tests read the saved file), then run "
        f"this cell. It runs `pytest assignments/{lab}` on the functions of this notebook and "
        f"ends with `{lab}: x/y public points`. The grader ignores lines that start with `%` "
        "or `!`."))
    cells.append(nbformat.v4.new_code_cell(f"%run -m {NOTEBOOK_TEST_MODULE} {lab}.ipynb"))
    for index, cell in enumerate(cells):
        cell["id"] = f"{lab}-{index:03d}"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["rnngrade"] = {"lab": lab, "module": module}
    nb.cells = cells
    nbformat.validate(nb)
    return nb

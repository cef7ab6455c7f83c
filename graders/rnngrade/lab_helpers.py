"""The grader's side of a lab's own worker helpers (``graders/suites/labN/helpers.py``).

The file is read here, on the trusted side, and run once to check it (a broken one is the
grader's fault: ``SuiteError``). Its code then travels to the sandboxed worker with the
submission and runs there beside the generic helpers (``rnngrade.harness.worker_helpers``):
only its code (``shipped_source``: docstrings and comments left out, so nothing of the hidden
suite's text is there for a submission to quote); the suite folder is never made visible to
the worker. In-process runners (reference, mutants, ``--inprocess``) use the registry built
here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SuiteError
from rnngrade.harness.worker_helpers import GENERIC, Registry, with_lab_helpers
from rnngrade.labs import Lab, get_lab

HELPERS_FILE = "helpers.py"


@dataclass(frozen=True)
class LabHelpers:
    """A lab's helper code as the worker gets it (``shipped_source``; ``""``: the lab has none)
    and every helper it may call."""

    source: str
    filename: str
    registry: Registry = field(default_factory=lambda: GENERIC, compare=False)


def lab_helpers(lab: Lab | str) -> LabHelpers:
    """The helpers of ``lab`` as its ``helpers.py`` reads now (none: the generic ones only).

    Built afresh on every call: the grader keeps the built helpers in the lab's assets
    (``LabAssets.helpers``), keyed with everything else by the course files' digest."""
    lab = get_lab(lab) if isinstance(lab, str) else lab
    path = lab.suite_dir() / HELPERS_FILE
    if not path.is_file():
        return LabHelpers("", "")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read it ({exc})") from None
    return build_lab_helpers(lab.name, source, path)


def build_lab_helpers(lab_name: str, source: str | None, path: Path) -> LabHelpers:
    """``LabHelpers`` from the text of ``path`` (None: the lab has no helpers file)."""
    if source is None:
        return LabHelpers("", "")
    filename = f"<{lab_name} helpers>"
    try:
        registry = with_lab_helpers(source, filename)
    except Exception as exc:
        raise SuiteError(f"{path}: the lab's helpers do not load: "
                         f"{type(exc).__name__}: {exc}") from exc
    return LabHelpers(shipped_source(source), filename, registry)


def shipped_source(source: str) -> str:
    """``source`` as the worker gets it: the same code without its docstrings and comments
    (regenerated from the syntax tree)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree) + "\n"

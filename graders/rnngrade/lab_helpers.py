"""The grader's side of a lab's own worker helpers (``graders/suites/labN/helpers.py``).

The file is read here, on the trusted side, and run once to check it (a broken one is the
grader's fault: ``SuiteError``). Its code then travels to the sandboxed worker with the
submission and runs there beside the generic helpers (``rnngrade.harness.worker_helpers``):
only its code (``shipped_source``: docstrings and comments left out, so nothing of the hidden
suite's text is there for a submission to quote); the suite folder is never made visible to
the worker. A lab's platform modules (``platform_<name>.py`` beside it: lab 12's classic
``utils``; and the course-wide ones in ``graders/suites`` itself: the classic ``rnn_utils``,
unless the lab has its own of that name) travel the same way, appended to the helpers' code as
``platform_module`` calls, and are what the lab's submissions get for ``import <name>``. A
platform module reaches a lab without any function the lab grades (``platform_source``: each is
withheld, and a call of it says so). In-process runners (reference, mutants, ``--inprocess``)
use the registry built here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SuiteError
from rnngrade.harness.worker_helpers import GENERIC, Registry, with_lab_helpers
from rnngrade.labs import Lab, get_lab
from rnngrade.paths import course_root

PLATFORM_PREFIX = "platform_"  # ``platform_utils.py``: what a submission's ``import utils`` gets


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
    path = lab.helpers_path()
    modules = {platform_name(module): platform_source(lab, _read(module))
               for module in platform_files(lab)}
    return build_lab_helpers(lab.name, _read(path) if path.is_file() else None, path, modules)


def platform_files(lab: Lab, root: Path | None = None) -> list[Path]:
    """The platform modules a lab's submissions get: its own (``platform_<name>.py`` in its
    suite folder) and the course-wide ones (``course_platform_files``) it has none of the same
    name of, sorted by name."""
    own = {platform_name(path): path
           for path in lab.suite_dir(root).glob(f"{PLATFORM_PREFIX}*.py")}
    shared = {platform_name(path): path for path in course_platform_files(root)}
    return [path for _, path in sorted({**shared, **own}.items())]


def course_platform_files(root: Path | None = None) -> list[Path]:
    """The course-wide platform modules (``graders/suites/platform_<name>.py``), sorted."""
    return sorted((root or course_root()).joinpath("graders", "suites").glob(
        f"{PLATFORM_PREFIX}*.py"))


# Words of graded functions' names that do not tell which function a helper would answer.
PLAIN_WORDS = frozenset({"cell", "step", "forward", "backward", "batch", "params", "loss", "text",
                         "sequence", "init", "of", "and", "with", "to", "from", "by", "fn"})


def name_words(name: str) -> frozenset[str]:
    """The words of a snake_case name."""
    return frozenset(w for w in name.lower().split("_") if w)


def named_like(name: str, graded: str, strict: bool) -> bool:
    """Whether a function ``name`` reads as ``graded`` (``strict``: only the same words)."""
    words, theirs = name_words(name), name_words(graded)
    if not words or words == theirs:
        return bool(words)
    return not strict and words < theirs and bool(words - PLAIN_WORDS)


def platform_name(path: Path) -> str:
    """The import name a platform module's file gives (``platform_utils.py``: ``utils``)."""
    return path.stem.removeprefix(PLATFORM_PREFIX)


def platform_source(lab: Lab, source: str) -> str:
    """A platform module's ``source`` as ``lab``'s submissions get it: without the top-level
    functions that answer a function the lab grades (named as one, by the release audit's rule:
    lab 1's ``softmax``, and lab 5's ``masked_softmax`` withholds a plain ``softmax`` too), whose
    names are listed in ``__withheld__`` instead (the worker binds each to a function that says
    it is not given: ``harness.source.platform_modules``)."""
    tree = ast.parse(source)
    withheld = [node.name for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and any(named_like(node.name, graded, False) for graded in lab.functions)]
    if not withheld:
        return source
    tree.body = [ast.parse(f"{node.name} = None").body[0]  # its place, for the notes' order
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                 and node.name in withheld else node for node in tree.body]
    tree.body.append(ast.parse(f"__withheld__ = {withheld!r}").body[0])
    return ast.unparse(tree) + "\n"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read it ({exc})") from None


def build_lab_helpers(lab_name: str, source: str | None, path: Path,
                      modules: dict[str, str] | None = None) -> LabHelpers:
    """``LabHelpers`` from the text of ``path`` (None: the lab has no helpers file) and the
    lab's platform modules (import name → source), shipped as calls of ``platform_module``
    after the helpers' code."""
    if source is None and not modules:
        return LabHelpers("", "")
    filename = f"<{lab_name} helpers>"
    try:
        shipped = shipped_source(source or "")
        if modules:
            shipped += ("\nfrom rnngrade.harness.worker_helpers import platform_module\n"
                        + "".join(f"platform_module({name!r}, {shipped_source(text)!r})\n"
                                  for name, text in sorted(modules.items())))
        registry = with_lab_helpers(shipped, filename)
    except Exception as exc:
        raise SuiteError(f"{path}: the lab's helpers do not load: "
                         f"{type(exc).__name__}: {exc}") from exc
    return LabHelpers(shipped, filename, registry)


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

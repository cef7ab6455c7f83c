"""The student-side subset of the ``rnngrade`` package that ships with the public tests.

It is the public testing API (``rnngrade.testing``, the only module public tests may import) and
the harness package (``rnngrade.harness``), with the closure of their ``rnngrade.*`` imports
(lazy ones included) checked to stay inside them. A module of the trusted side (grading engine,
sandbox, suites, diagnosis, authoring, instructor tooling) in that closure is an error, never a
silent inclusion; so is a public test importing anything but ``rnngrade.testing``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from rnngrade.errors import ExitCode, RnngradeError

PACKAGE = "rnngrade"
PUBLIC_API = "rnngrade.testing"

HARNESS = "rnngrade.harness"

# Where the student side starts (a package means every module in it).
SEEDS = (PACKAGE, PUBLIC_API, HARNESS)

# The package boundary is the trust boundary: the student side is the root ``rnngrade``
# package (its ``__init__`` only), the public API and the harness package. Anything else in
# the closure is a module of the trusted side (engine, sandbox, suites, diagnosis, authoring,
# instructor tooling) and an error, never a silent inclusion.
STUDENT_SIDE = (PUBLIC_API, HARNESS)


class PackageError(RnngradeError):
    """The student side would need a module of the trusted side, or a module is missing."""

    exit_code = ExitCode.FAILURES


def package_dir() -> Path:
    """The ``rnngrade`` package folder of this installation."""
    return Path(__file__).resolve().parent.parent


def module_file(name: str, base: Path | None = None) -> Path | None:
    """The source file of module ``name`` (a package's ``__init__.py``), or None."""
    base = base or package_dir()
    parts = name.split(".")[1:]
    folder = base.joinpath(*parts)
    if (folder / "__init__.py").is_file():
        return folder / "__init__.py"
    path = base.joinpath(*parts[:-1], parts[-1] + ".py") if parts else base / "__init__.py"
    return path if path.is_file() else None


def imported_modules(source: str, name: str, is_package: bool) -> set[str]:
    """Every ``rnngrade.*`` module that ``source`` imports anywhere (functions included); for
    ``from X import y`` both ``X`` and ``X.y`` are returned (``X.y`` may not be a module)."""
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


def is_forbidden(name: str) -> bool:
    """True for every module outside the student side."""
    return name != PACKAGE and not any(name == f or name.startswith(f + ".")
                                       for f in STUDENT_SIDE)


def _expand(name: str, base: Path) -> list[str]:
    """A seed: the module itself, or every module of a package and its subpackages."""
    path = module_file(name, base)
    if path is None:
        raise PackageError(f"{name} does not exist in {base}")
    if path.name != "__init__.py" or name == PACKAGE:
        return [name]
    found = [name]
    for file in sorted(path.parent.rglob("*.py")):
        parts = file.relative_to(path.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and "__pycache__" not in parts:
            found.append(".".join((name, *parts)))
    return found


def student_modules(extra: tuple[str, ...] = (), base: Path | None = None) -> dict[str, Path]:
    """Module name → source file of the student side: the seeds, ``extra`` (e.g. what public
    tests import), everything they import, and the packages above them."""
    base = base or package_dir()
    todo = [m for seed in SEEDS for m in _expand(seed, base)] + list(extra)
    chosen: dict[str, Path] = {}
    needed_by: dict[str, str] = {}
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        if is_forbidden(name):
            raise PackageError(f"the student side would ship {name} (imported by "
                               f"{needed_by.get(name, 'a seed')}), a trusted-side module")
        path = module_file(name, base)
        if path is None:
            continue  # ``from rnngrade.x import function``: not a module
        chosen[name] = path
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        source = path.read_text(encoding="utf-8")
        for other in parents + sorted(imported_modules(source, name, path.name == "__init__.py")):
            if other not in chosen:
                needed_by.setdefault(other, name)
                todo.append(other)
    return dict(sorted(chosen.items()))


def public_test_imports(paths: list[Path]) -> tuple[str, ...]:
    """The ``rnngrade.*`` modules the public test files import; PackageError when one imports
    anything but the public testing API (``rnngrade.testing`` and the names it exports)."""
    found: set[str] = set()
    for path in paths:
        imported = imported_modules(path.read_text(encoding="utf-8"), "assignments", False)
        internal = sorted(m for m in imported
                          if m != PUBLIC_API and m.rpartition(".")[0] != PUBLIC_API)
        if internal:
            raise PackageError(f"{path.name} imports {', '.join(internal)}; public tests import "
                               f"only {PUBLIC_API}")
        found |= imported
    return tuple(sorted(found))


def relative_path(name: str, path: Path, base: Path | None = None) -> str:
    """Where module ``name`` goes in the release (``rnngrade/harness/checks/plugin.py``)."""
    base = base or package_dir()
    return (Path(PACKAGE) / path.relative_to(base)).as_posix()

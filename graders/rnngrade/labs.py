"""The lab registry: the labs of the course, discovered from their folders.

A lab is the folder ``graders/suites/labN`` holding a ``lab.yaml`` (title, student module, graded
functions in order, whether it needs torch, the time budget and the sandbox limits), beside
``solutions/labN`` and ``assignments/labN``. Nothing in the engine names a lab: adding one adds
those folders only. ``LABS`` is read from the course at ``course_root()`` when first used, and
again when that root or a ``lab.yaml`` changes; a malformed ``lab.yaml`` raises
``LabConfigError`` naming the file and the field to fix.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnngrade.errors import GraderError, UsageError
from rnngrade.limits import Limits
from rnngrade.paths import course_root
from rnngrade.yaml_files import load_mapping

METADATA = "lab.yaml"
RUBRIC = "rubric.yaml"  # beside lab.yaml: points, visibility and titles of the hidden tests
LAB_NAME = re.compile(r"^lab(\d+)$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
DEFAULT_BUDGET_SECONDS = 300.0
RECHECK_SECONDS = 0.5  # how stale LABS may be after a lab.yaml changes (a stat per lab.yaml)


class UnknownLabError(UsageError):
    """A lab name that the course does not have."""


class LabConfigError(GraderError):
    """A lab's ``lab.yaml`` is missing, unreadable or malformed."""


@dataclass(frozen=True)
class Lab:
    """One lab: the student module file and the functions graded in it (README order)."""

    name: str
    title: str
    module: str
    functions: tuple[str, ...]
    uses_torch: bool
    limits: Limits = field(default_factory=Limits)  # per worker; a test may override by marker
    budget_seconds: float = DEFAULT_BUDGET_SECONDS  # CPU seconds of one submission's calls
    # modules the sandbox's workers have imported before the student's code runs (a lab that
    # trains: torch.optim imports torch._dynamo on first use, seconds in every fresh worker)
    worker_imports: tuple[str, ...] = ()

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    def solution_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "solutions" / self.name / self.filename

    def stub_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "assignments" / self.name / self.filename

    def assignment_dir(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "assignments" / self.name

    def suite_dir(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "graders" / "suites" / self.name

    def rubric_path(self, root: Path | None = None) -> Path:
        return self.suite_dir(root) / RUBRIC

    def public_fixture_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "fixtures" / "public" / f"{self.name}.npz"


_FIELDS = {"title", "module", "functions", "uses_torch", "budget_seconds", "limits",
           "worker_imports"}


def load_lab(path: Path) -> Lab:
    """The lab described by ``path`` (``graders/suites/labN/lab.yaml``); LabConfigError when it
    cannot be read or a field is wrong."""
    name = path.parent.name
    data = load_mapping(path, LabConfigError, "a mapping with title, module, functions, "
                        "uses_torch (and optionally budget_seconds, limits, worker_imports)")
    unknown = sorted(set(map(str, data)) - _FIELDS)
    if unknown:
        raise LabConfigError(f"{path}: unknown field(s) {', '.join(unknown)}; the fields are "
                             + ", ".join(sorted(_FIELDS)))
    missing = sorted({"title", "module", "functions", "uses_torch"} - set(data))
    if missing:
        raise LabConfigError(f"{path}: missing field(s) {', '.join(missing)}")
    title, module, functions = data["title"], data["module"], data["functions"]
    if not isinstance(title, str) or not title.strip():
        raise LabConfigError(f"{path}: title must be a non-empty string")
    if not isinstance(module, str) or not IDENTIFIER.match(module):
        raise LabConfigError(f"{path}: module must be a Python module name (the student's "
                             f"file without .py), not {module!r}")
    if (not isinstance(functions, list) or not functions
            or not all(isinstance(f, str) and IDENTIFIER.match(f) for f in functions)):
        raise LabConfigError(f"{path}: functions must be a non-empty list of function names")
    if len(set(functions)) != len(functions):
        raise LabConfigError(f"{path}: functions lists a name twice")
    if not isinstance(data["uses_torch"], bool):
        raise LabConfigError(f"{path}: uses_torch must be true or false")
    budget = data.get("budget_seconds", DEFAULT_BUDGET_SECONDS)
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
        raise LabConfigError(f"{path}: budget_seconds must be a positive number of seconds")
    limits = data.get("limits") or {}
    if not isinstance(limits, dict):
        raise LabConfigError(f"{path}: limits must be a mapping such as {{call_seconds: 10}}")
    try:
        lab_limits = Limits().overridden(limits, f"{path}: limits")
    except ValueError as exc:
        raise LabConfigError(str(exc)) from None
    imports = data.get("worker_imports") or []
    if (not isinstance(imports, list)
            or not all(isinstance(m, str) and MODULE_NAME.match(m) for m in imports)):
        raise LabConfigError(f"{path}: worker_imports must be a list of module names such as "
                             "[torch._dynamo]")
    return Lab(name, title.strip(), module, tuple(functions), data["uses_torch"],
               limits=lab_limits, budget_seconds=float(budget), worker_imports=tuple(imports))


def discover_labs(root: Path) -> dict[str, Lab]:
    """Every lab of the course at ``root``, in lab-number order."""
    suites = root / "graders" / "suites"
    folders = [p for p in suites.iterdir() if p.is_dir() and LAB_NAME.match(p.name)] \
        if suites.is_dir() else []
    folders.sort(key=lambda p: int(LAB_NAME.match(p.name).group(1)))  # type: ignore[union-attr]
    return {p.name: load_lab(p / METADATA) for p in folders if (p / METADATA).is_file()}


class _Registry(Mapping[str, Lab]):
    """``LABS``: name → Lab of the course at ``course_root()``, read again whenever that root or
    one of its ``lab.yaml`` files (its path, size or modification time) changes."""

    def __init__(self) -> None:
        self._key: tuple = ()
        self._labs: dict[str, Lab] = {}
        # (root, time.monotonic()) of the last look at disk
        self._checked: tuple[Path | None, float] = (None, -math.inf)

    def _current(self) -> dict[str, Lab]:
        root = course_root()
        now = time.monotonic()
        if self._checked[0] == root and now - self._checked[1] < RECHECK_SECONDS:
            return self._labs
        key = (root, _metadata_signature(root))
        if key != self._key:
            self._labs = discover_labs(root)
            self._key = key
        self._checked = (root, now)
        return self._labs

    def reload(self) -> None:
        """Read the lab folders again at the next use."""
        self._key = ()
        self._checked = (None, -math.inf)

    def __getitem__(self, name: str) -> Lab:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return f"LABS({', '.join(self._current())})"


def _metadata_signature(root: Path) -> tuple:
    """(path, size, mtime) of every ``lab.yaml`` of the course: cheap to take on every lookup."""
    found = []
    for path in sorted((root / "graders" / "suites").glob(f"lab*/{METADATA}")):
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((path.parent.name, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


LABS = _Registry()


def get_lab(name: str) -> Lab:
    """Return the lab called ``name`` or raise UnknownLabError listing the known ones."""
    try:
        return LABS[name]
    except KeyError:
        known = ", ".join(LABS)
        raise UnknownLabError(f"unknown lab {name!r}; this course has: {known}") from None


def available_labs(root: Path | None = None) -> list[Lab]:
    """The labs whose reference solution exists in this checkout (``root``: that course's)."""
    labs: Mapping[str, Any] = LABS if root is None or root == course_root() \
        else discover_labs(root)
    return [lab for lab in labs.values() if lab.solution_path(root).exists()]

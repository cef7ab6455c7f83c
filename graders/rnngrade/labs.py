"""The lab registry: the labs of the course, discovered from their folders.

A lab is the folder ``graders/suites/labN`` holding a ``lab.yaml`` (title, student module, graded
functions in order, whether it needs torch, the time budget, the sandbox limits and the names the
structural diagnosis reads: the fields ``rnngrade.lab_contract.LAB`` declares), beside
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
from rnngrade.lab_contract import (
    DEFAULT_BUDGET_SECONDS,
    GATE,
    HELPERS_FILE,
    LAB,
    LAB_FILE,
    MUTANTS_FILE,
    PUBLIC_CASES_FILE,
    RUBRIC_FILE,
    STRUCTURE,
    Gate,
    Structure,
)
from rnngrade.limits import Limits
from rnngrade.paths import course_root
from rnngrade.yaml_files import load_mapping

METADATA = LAB_FILE
RUBRIC = RUBRIC_FILE  # beside lab.yaml: points, visibility and titles of the hidden tests
LAB_NAME = re.compile(r"^lab(\d+)$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
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
    structure: Structure = field(default_factory=Structure)  # names the diagnosis reads

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

    def mutants_path(self, root: Path | None = None) -> Path:
        return self.suite_dir(root) / MUTANTS_FILE

    def helpers_path(self, root: Path | None = None) -> Path:
        return self.suite_dir(root) / HELPERS_FILE

    def public_cases_path(self, root: Path | None = None) -> Path:
        return self.solution_path(root).parent / PUBLIC_CASES_FILE

    def public_fixture_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "fixtures" / "public" / f"{self.name}.npz"


def load_lab(path: Path) -> Lab:
    """The lab described by ``path`` (``graders/suites/labN/lab.yaml``); LabConfigError when it
    cannot be read or a field is wrong (the fields and their messages: ``lab_contract.LAB``)."""
    name = path.parent.name
    data = load_mapping(path, LabConfigError, "a mapping with " + ", ".join(LAB.required)
                        + " (and optionally " + ", ".join(
                            n for n in LAB.names if n not in LAB.required) + ")")
    unknown = LAB.unknown(data)
    if unknown:
        raise LabConfigError(f"{path}: {LAB.unknown_message(unknown)}")
    missing = [n for n in LAB.required if n not in data]
    if missing:
        raise LabConfigError(f"{path}: missing field(s) {', '.join(missing)}")
    title, module, functions = data["title"], data["module"], data["functions"]
    if not isinstance(title, str) or not title.strip():
        raise LabConfigError(LAB["title"].wrong(str(path)))
    if not isinstance(module, str) or not IDENTIFIER.match(module):
        raise LabConfigError(f"{LAB['module'].wrong(str(path))}, not {module!r}")
    if not _names(functions):
        raise LabConfigError(LAB["functions"].wrong(str(path)))
    if len(set(functions)) != len(functions):
        raise LabConfigError(f"{path}: functions lists a name twice")
    if not isinstance(data["uses_torch"], bool):
        raise LabConfigError(LAB["uses_torch"].wrong(str(path)))
    budget = data.get("budget_seconds", DEFAULT_BUDGET_SECONDS)
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
        raise LabConfigError(LAB["budget_seconds"].wrong(str(path)))
    limits = data.get("limits") or {}
    if not isinstance(limits, dict):
        raise LabConfigError(LAB["limits"].wrong(str(path)))
    try:
        lab_limits = Limits().overridden(limits, f"{path}: limits")
    except ValueError as exc:
        raise LabConfigError(str(exc)) from None
    imports = data.get("worker_imports") or []
    if (not isinstance(imports, list)
            or not all(isinstance(m, str) and MODULE_NAME.match(m) for m in imports)):
        raise LabConfigError(LAB["worker_imports"].wrong(str(path)))
    return Lab(name, title.strip(), module, tuple(functions), data["uses_torch"],
               limits=lab_limits, budget_seconds=float(budget), worker_imports=tuple(imports),
               structure=_structure(data.get("structure"), path))


def _names(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of Python names."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(v, str) and IDENTIFIER.match(v) for v in value))


def _structure(value: Any, path: Path) -> Structure:
    """A lab's ``structure`` (``lab_contract.STRUCTURE``); LabConfigError naming the key."""
    if value is None:
        return Structure()
    if not isinstance(value, dict):
        raise LabConfigError(LAB["structure"].wrong(str(path)))
    where = f"{path}: structure"
    unknown = STRUCTURE.unknown(value)
    if unknown:
        raise LabConfigError(f"{where}: {STRUCTURE.unknown_message(unknown)}")
    cases = {}
    for key in ("initial_state_zeroed", "previous_state_zeroed"):
        names = value.get(key) or []
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise LabConfigError(STRUCTURE[key].wrong(where))
        cases[key] = tuple(names)
    gates = value.get("gates") or {}
    if not isinstance(gates, dict):
        raise LabConfigError(STRUCTURE["gates"].wrong(where))
    found = []
    for gate, spec in gates.items():
        at = f"{where}.gates.{gate}"
        if not isinstance(gate, str) or not gate.strip():
            raise LabConfigError(f"{where}.gates: a gate's name must be text, not {gate!r}")
        if not isinstance(spec, dict):
            raise LabConfigError(f"{at}: expected a mapping with " + ", ".join(GATE.names))
        unknown = GATE.unknown(spec)
        missing = [n for n in GATE.required if n not in spec]
        if unknown or missing:
            raise LabConfigError(f"{at}: " + (GATE.unknown_message(unknown) if unknown else
                                              f"missing field(s) {', '.join(missing)}"))
        gradient, parameters = spec["gradient"], spec["parameters"]
        if not isinstance(gradient, str) or not IDENTIFIER.match(gradient):
            raise LabConfigError(GATE["gradient"].wrong(at))
        if not _names(parameters):
            raise LabConfigError(GATE["parameters"].wrong(at))
        found.append(Gate(gate.strip(), gradient, tuple(parameters)))
    owners = [p for g in found for p in g.parameters]
    twice = sorted({p for p in owners if owners.count(p) > 1})
    if twice:
        raise LabConfigError(f"{where}.gates: {', '.join(twice)} named by more than one gate")
    return Structure(cases["initial_state_zeroed"], cases["previous_state_zeroed"],
                     tuple(found))


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

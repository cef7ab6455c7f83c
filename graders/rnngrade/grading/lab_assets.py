"""Everything the grader derives from one lab's course files, owned by one object.

``LabAssets`` holds the lab's rubric, its reference solution loaded as a module, every mutant
applied and loaded, the ``INDISTINGUISHABLE`` table of its mutants, the lab's worker helpers
(``helpers.py``, built and checked), what the source notes compare a submission with (the
reference's signatures and parameter keys) and which graded functions the reference's call
each other (for stand-ins), all read from one snapshot of the files and keyed by one
content digest: SHA-256 over the lab's metadata, every file of its hidden suite and its
reference solution. The same digest decides when a long-lived grader is
rebuilt and is recorded as the results' ``grader_version``; nothing here is cached at module
level, so an edited reference is always seen by the next grader built.

Loading fails with a ``GraderError`` that names the file and line to fix: ``RubricError`` for a
rubric that does not parse, ``SuiteError`` for a reference that does not load. Mutants only name
mistakes, so they never stop grading: one that no longer applies (an edit whose target the
reference no longer holds exactly once, or that does not load once applied) is left out of
diagnosis, and so is every mutant of a table that does not load; the reason, naming the line of
mutants.py to fix, is a warning for the instructor (``LabAssets.warnings``: on stderr when the
assets load, in every result's ``grader_notes``, and a problem for ``rnngrade validate``).
"""

from __future__ import annotations

import ast
import hashlib
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade import __version__
from rnngrade.diagnosis.mutants import (
    Mutant,
    load_mutant_table,
    load_source_as_module,
    strip_markers,
)
from rnngrade.diagnosis.reach import Reach
from rnngrade.errors import MutantError, RubricError, SuiteError, file_line
from rnngrade.grading.rubric import Rubric, parse_rubric
from rnngrade.grading.stand_ins import callees_of
from rnngrade.lab_contract import HELPERS_FILE, MUTANTS_FILE
from rnngrade.lab_helpers import (
    LabHelpers,
    build_lab_helpers,
    course_platform_files,
    platform_files,
    platform_name,
    platform_source,
)
from rnngrade.labs import RUBRIC, Lab, get_lab
from rnngrade.paths import course_root
from rnngrade.submission.source_notes import ReferenceFacts, reference_facts

MUTANTS = MUTANTS_FILE


def _suite_files(lab: Lab, root: Path) -> list[Path]:
    """The files of a lab's hidden suite (caches and hidden files aside), in a stable order."""
    suite = lab.suite_dir(root)
    if not suite.is_dir():
        return []
    return sorted(p for p in suite.rglob("*") if p.is_file() and not any(
        part == "__pycache__" or part.startswith(".") for part in p.relative_to(suite).parts))


def _snapshot(lab: Lab, root: Path) -> tuple[str, dict[str, bytes]]:
    """The digest of the lab's course files and their bytes, by path relative to ``root``."""
    h = hashlib.sha256(repr(lab).encode())
    files: dict[str, bytes] = {}
    for path in [*_suite_files(lab, root), *course_platform_files(root),
                 lab.solution_path(root)]:
        if not path.is_file():
            continue
        name = path.relative_to(root).as_posix()
        data = path.read_bytes()
        files[name] = data
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest(), files


def lab_digest(lab_name: str, root: Path | None = None) -> str:
    """The content digest of a lab's course files as they are on disk now."""
    return _snapshot(get_lab(lab_name), root or course_root())[0]


def grader_version_of(digest: str) -> str:
    """The version recorded in results: the package version and the course files' digest."""
    return f"{__version__}+suite.{digest[:12]}"


@dataclass(frozen=True, eq=False)
class LabAssets:
    """One lab's trusted assets, from one snapshot of its files (see the module docstring)."""

    lab: Lab
    root: Path
    digest: str
    rubric: Rubric
    reference_source: str  # with the solution markers
    reference: types.ModuleType
    mutants: tuple[tuple[Mutant, types.ModuleType], ...] = ()
    indistinguishable: dict[frozenset[str], str] = field(default_factory=dict)
    helpers: LabHelpers = field(default_factory=lambda: LabHelpers("", ""))
    facts: ReferenceFacts = field(default_factory=lambda: ReferenceFacts({}, frozenset()))
    callees: dict[str, frozenset[str]] = field(default_factory=dict)  # see stand_ins.callees_of
    reach: Reach = field(default_factory=Reach)  # what each check may tell from each mutant
    warnings: tuple[str, ...] = ()  # for the instructor: the mutants left out, and why

    @property
    def version(self) -> str:
        return grader_version_of(self.digest)

    @property
    def mutant_table(self) -> list[Mutant]:
        return [mutant for mutant, _ in self.mutants]

    def is_current(self) -> bool:
        """Whether the files on disk are still those these assets were built from."""
        return _snapshot(self.lab, self.root)[0] == self.digest


def load_lab_assets(lab_name: str, root: Path | None = None) -> LabAssets:
    """Read and build every asset of ``lab_name`` (raises a GraderError naming what to fix)."""
    lab = get_lab(lab_name)
    root = root or course_root()
    digest, files = _snapshot(lab, root)
    solution = lab.solution_path(root)
    suite = lab.suite_dir(root)
    source = _text(files, solution, root)
    if source is None:
        raise SuiteError(f"{solution}: the reference solution of {lab.name} is missing")
    try:
        reference = load_source_as_module(strip_markers(source), f"_reference_{lab.name}",
                                          str(solution))
    except Exception as exc:
        raise SuiteError(f"{file_line(exc, solution)}: the reference solution of {lab.name} does "
                         f"not load: {type(exc).__name__}: {exc}") from exc
    rubric_text = _text(files, suite / RUBRIC, root)
    if rubric_text is None:
        raise RubricError(f"{suite / RUBRIC}: {lab.name} has no rubric")
    rubric = parse_rubric(rubric_text, suite / RUBRIC)
    table_text = _text(files, suite / MUTANTS, root)
    mutants: list[tuple[Mutant, types.ModuleType]] = []
    allowed: dict[frozenset[str], str] = {}
    warnings: list[str] = []
    table: list[Mutant] = []
    if table_text is not None:
        try:
            loaded = load_mutant_table(suite / MUTANTS, table_text)
            table, allowed = loaded.mutants, loaded.indistinguishable
        except MutantError as exc:
            warnings.append(f"{exc}; no mutant is used in diagnosis until it is fixed")
        for mutant in table:
            try:
                mutants.append((mutant, _mutant_module(mutant, source, table_text,
                                                       suite / MUTANTS, lab.name)))
            except MutantError as exc:
                warnings.append(f"{exc}; left out of diagnosis until it is fixed")
    for warning in warnings:
        print(f"rnngrade: warning: {warning}", file=sys.stderr)
    modules = {platform_name(path): platform_source(lab, _text(files, path, root) or "")
               for path in platform_files(lab, root)}
    helpers = build_lab_helpers(lab.name, _text(files, suite / HELPERS_FILE, root),
                                suite / HELPERS_FILE, modules)
    return LabAssets(lab, root, digest, rubric, source, reference, tuple(mutants), allowed,
                     helpers, reference_facts(source),
                     callees_of(strip_markers(source), tuple(lab.functions)),
                     Reach.of(strip_markers(source),  # both as they run: without the markers
                              {m.name: strip_markers(m.apply(source)) for m, _ in mutants}),
                     tuple(warnings))


def _text(files: dict[str, bytes], path: Path, root: Path) -> str | None:
    data = files.get(path.relative_to(root).as_posix())
    return None if data is None else data.decode("utf-8")


def _mutant_module(mutant: Mutant, reference: str, table_text: str, path: Path,
                   lab_name: str) -> types.ModuleType:
    """The reference with ``mutant`` applied, loaded; MutantError at the edit that fails."""
    source = reference
    for old, new in mutant.edits:
        count = source.count(old)
        if count != 1:
            line = _edit_line(table_text, mutant.name, old)
            raise MutantError(
                f"{path}:{line}: mutant {mutant.name!r}: its edit target occurs {count} times in "
                f"the reference (it must occur exactly once): {old!r}")
        source = source.replace(old, new)
    try:
        return load_source_as_module(strip_markers(source), f"_mutant_{lab_name}_{mutant.name}",
                                     f"<mutant {mutant.name}>")
    except Exception as exc:
        line = _edit_line(table_text, mutant.name, None)
        raise MutantError(f"{path}:{line}: mutant {mutant.name!r} does not load once applied: "
                          f"{type(exc).__name__}: {exc}") from exc


def _edit_line(text: str, name: str, old: str | None) -> int:
    """The line in mutants.py of mutant ``name``'s edit target ``old`` (or of the mutant)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        named = any(k.arg == "name" and isinstance(k.value, ast.Constant) and k.value.value == name
                    for k in node.keywords)
        if not named:
            continue
        if old is not None:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Constant) and inner.value == old:
                    return inner.lineno
        return node.lineno
    return 0

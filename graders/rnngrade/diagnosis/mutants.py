"""Mutants: named variants of a lab's reference solution that each carry one known mistake.

A mutant is a list of textual edits applied to the reference source, so it is always the
reference except for the mistake. It can be loaded as a module (for diagnosis, in the trusted
process) or written out as a complete submission (for end-to-end tests and `rnngrade validate`).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.authoring.stubs import SOLUTION_MARKER
from rnngrade.errors import MutantError
from rnngrade.results.model import Diagnosis


@dataclass(frozen=True)
class Mutant:
    """One known mistake.

    name: short identifier, e.g. ``"recurrent_term_dropped"``.
    function: the student function the mistake lives in (its tests must fail).
    description: one line for instructors ("a_next computed without Waa·a_prev").
    hint: one or two sentences for the student: what to look at, never the answer.
    edits: ``(old, new)`` pairs; each ``old`` occurs exactly once in the reference source.
    patterns: names of structural or heuristic diagnoses that also describe this mistake
        correctly (``"not_carried_across_time"``, ``"constant_factor"``).
    """

    name: str
    function: str
    description: str
    hint: str
    edits: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    patterns: tuple[str, ...] = ()

    def diagnosis(self, evidence: str = "") -> Diagnosis:
        """This mistake as a diagnosis, with the evidence that the student's result shows it."""
        return Diagnosis(self.name, self.description, self.function, self.hint, evidence)

    def apply(self, reference_source: str) -> str:
        """Return the reference source with this mutant's edits applied (markers removed)."""
        source = reference_source
        for old, new in self.edits:
            count = source.count(old)
            if count != 1:
                raise MutantError(
                    f"mutant {self.name!r}: edit target occurs {count} times in the reference "
                    f"(must be exactly once): {old!r}"
                )
            source = source.replace(old, new)
        return strip_markers(source)


def strip_markers(source: str) -> str:
    """Remove ``# BEGIN SOLUTION`` / ``# END SOLUTION`` lines, keeping the code between them."""
    return SOLUTION_MARKER.sub("", source)


SOURCE = "__rnngrade_source__"


def load_source_as_module(source: str, name: str, filename: str = "<mutant>") -> types.ModuleType:
    """Execute trusted source (a reference or a mutant) as a fresh module (not in sys.modules)."""
    module = types.ModuleType(name)
    module.__file__ = filename
    module.__dict__[SOURCE] = source  # what inspect cannot read back (``dataflow.py``)
    code = compile(source, filename, "exec")
    exec(code, module.__dict__)
    return module


def load_mutant_table(path: Path) -> list[Mutant]:
    """Load ``MUTANTS`` from a suite's ``mutants.py`` (read afresh on every call)."""
    spec = importlib.util.spec_from_file_location(f"_rnngrade_mutants_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise MutantError(f"cannot load mutants from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # only while it runs: dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise MutantError(f"{path}: the mutant table does not load: {type(exc).__name__}: {exc}"
                          ) from exc
    finally:
        sys.modules.pop(spec.name, None)
    mutants = list(module.MUTANTS)
    names = [m.name for m in mutants]
    if len(set(names)) != len(names):
        raise MutantError(f"{path}: duplicate mutant names {sorted(names)}")
    return mutants

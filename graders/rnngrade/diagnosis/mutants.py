"""Mutants: named variants of a lab's reference solution that each carry one known mistake.

A mutant is a list of textual edits applied to the reference source, so it is always the
reference except for the mistake. It can be loaded as a module (for diagnosis, in the trusted
process) or written out as a complete submission (for end-to-end tests and `rnngrade validate`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.authoring.stubs import SOLUTION_MARKER
from rnngrade.errors import MutantError, file_line
from rnngrade.lab_contract import INDISTINGUISHABLE, MUTANTS
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


@dataclass(frozen=True)
class MutantTable:
    """What a suite's mutants.py declares (``lab_contract.MUTANT_TABLE``): ``MUTANTS``, and
    ``INDISTINGUISHABLE`` (the sets of mutant names no check can tell apart, each with the
    reason)."""

    mutants: list[Mutant]
    indistinguishable: dict[frozenset[str], str] = field(default_factory=dict)


def load_mutant_table(path: Path, text: str | None = None) -> MutantTable:
    """Run the mutant table ``path`` (a suite's mutants.py, read afresh unless ``text`` gives its
    contents) and check it; a ``MutantError`` names the line of mutants.py to fix."""
    lab_name = path.parent.name
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MutantError(f"{path}: the mutant table of {lab_name} cannot be read ({exc})"
                              ) from None
    name = f"_rnngrade_mutants_{lab_name}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module  # dataclasses defined in the table look their module up
    try:
        exec(compile(text, str(path), "exec"), module.__dict__)
        if not hasattr(module, MUTANTS.name):
            raise AttributeError(f"it defines no {MUTANTS.name} ({MUTANTS.form})")
        mutants = list(getattr(module, MUTANTS.name))
        allowed = {frozenset(k): str(v)
                   for k, v in getattr(module, INDISTINGUISHABLE.name, {}).items()}
    except Exception as exc:
        raise MutantError(f"{file_line(exc, path)}: the mutant table of {lab_name} does not "
                          f"load: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.modules.pop(name, None)
    bad = [m for m in mutants if not isinstance(m, Mutant)]
    if bad:
        raise MutantError(f"{path}: {MUTANTS.name} holds {type(bad[0]).__name__}, not Mutant")
    names = [m.name for m in mutants]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise MutantError(f"{path}:{_line_of(text, repr(duplicated[0])[1:-1])}: duplicate "
                          f"mutant name(s) {duplicated}")
    return MutantTable(mutants, allowed)


def _line_of(text: str, needle: str) -> int:
    """The first line of ``text`` holding ``needle`` (0: none)."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return 0

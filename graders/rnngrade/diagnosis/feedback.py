"""The "what to fix" part of a feedback page: one section per mistake, shown once.

Failing tests that share a diagnosis (a softmax mistake fails the softmax tests and every test that
uses softmax) form one section: the mistake, its hint and evidence once, the affected tests folded
under it. Tests without a diagnosis are grouped by the function they test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rnngrade.results.model import (
    PASSED,
    SKIPPED,
    Diagnosis,
    DiagnosisSource,
    GradeResult,
    TestResult,
)

_ORDER = {source.value: rank for rank, source in enumerate(DiagnosisSource)}  # trusted first
_UNRANKED = len(_ORDER)


@dataclass
class FixSection:
    """One thing to fix: a diagnosis (or none) and the failing tests it explains.

    function: the function the mistake lies in, or the one the tests test when undiagnosed.
    diagnosis: the best diagnosis; also: other mistakes that fit the same results equally well.
    """

    function: str
    diagnosis: Diagnosis | None
    tests: list[TestResult] = field(default_factory=list)
    also: list[Diagnosis] = field(default_factory=list)

    @property
    def hint(self) -> str:
        if self.diagnosis is not None and self.diagnosis.hint:
            return self.diagnosis.hint
        return next((t.hint for t in self.tests if t.hint), "")

    @property
    def points_lost(self) -> float:
        return sum(t.max_score - t.score for t in self.tests)


def tested_function(test: TestResult) -> str:
    """The function a test is about: the first word of its title (``rnn_forward: T_x = 200``)."""
    match = re.match(r"\s*([A-Za-z_]\w*)", test.title)
    return match.group(1) if match else test.title


def fix_sections(result: GradeResult) -> list[FixSection]:
    """The failing tests of ``result`` grouped by their best diagnosis, known mistakes first,
    then edits of the reference's formula, structural, localised and heuristic ones, then tests
    without a diagnosis (by function)."""
    sections: dict[tuple[str, str], FixSection] = {}
    for test in result.tests:
        if test.outcome in (PASSED, SKIPPED):
            continue
        best = _best(test.diagnosis)
        if best is None:
            key = ("", tested_function(test))
            section = sections.setdefault(key, FixSection(key[1], None))
        else:
            key = (best.name, best.function or tested_function(test))
            section = sections.setdefault(key, FixSection(key[1], best))
            for other in test.diagnosis:
                if other.name != best.name and other.name not in {d.name for d in section.also}:
                    section.also.append(other)
        section.tests.append(test)
    return sorted(sections.values(), key=lambda s: (
        _UNRANKED + 1 if s.diagnosis is None else _ORDER.get(s.diagnosis.source, _UNRANKED),
        -s.points_lost))


def _best(diagnoses: list[Diagnosis]) -> Diagnosis | None:
    if not diagnoses:
        return None
    return min(diagnoses, key=lambda d: _ORDER.get(d.source, _UNRANKED))

"""Four counts of how fair and how helpful grading is, over submissions with known mistakes.

Per function of a graded submission whose verdict is known (correct, or wrong with a known
mistake): correct functions that lose points, wrong functions with full marks, wrong functions
whose mistake is named, and tests whose diagnosis names a mistake the submission does not have.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from rnngrade.diagnosis.feedback import tested_function
from rnngrade.diagnosis.mutants import Mutant
from rnngrade.labs import get_lab
from rnngrade.results.model import PASSED, SKIPPED, GradeResult


@dataclass(frozen=True)
class Verdict:
    """What is known about one function of a submission.

    mistake: the known mistake's name when the function is wrong ("" when correct).
    accepted: every diagnosis name that correctly describes the mistake (the mistake's own name,
    and structural patterns such as ``not_carried_across_time`` that fit it).
    """

    function: str
    mistake: str = ""
    accepted: frozenset[str] = frozenset()

    @property
    def wrong(self) -> bool:
        return bool(self.mistake)


@dataclass
class FairnessTally:
    correct: int = 0
    correct_losing: int = 0  # target 0
    wrong: int = 0
    wrong_full_marks: int = 0  # target 0
    named: int = 0  # target ≥ 80 % of wrong
    # failing tests of a wrong function whose diagnosis names no mistake the function has (a
    # correct function's failing test counts in correct_losing, whatever it says); target 0
    misnamed: int = 0
    details: list[str] = field(default_factory=list)

    def __iadd__(self, other: FairnessTally) -> FairnessTally:
        self.correct += other.correct
        self.correct_losing += other.correct_losing
        self.wrong += other.wrong
        self.wrong_full_marks += other.wrong_full_marks
        self.named += other.named
        self.misnamed += other.misnamed
        self.details += other.details
        return self

    def lines(self) -> list[str]:
        share = f" ({100 * self.named / self.wrong:.0f}%)" if self.wrong else ""
        return [f"correct functions that lose points: {self.correct_losing} of {self.correct}",
                f"wrong functions with full marks:    {self.wrong_full_marks} of {self.wrong}",
                f"mistakes named:                     {self.named} of {self.wrong}{share}",
                f"hints naming a wrong mistake:       {self.misnamed}"]


@dataclass(frozen=True)
class _Part:
    """The cases of one test that check one function."""

    test: str
    lost: bool  # a case failed (points lost)
    diagnoses: frozenset[str]  # the diagnosis names of its failing cases


def _parts(result: GradeResult) -> dict[str, list[_Part]]:
    """Per function, the parts of the tests that check it. A test about one function (its title
    starts with the function's name) is that function's; a test of several (``every function:
    ...``, ``loop, FFT and scan forms: ...``) is split by its cases, each case going to the lab
    function its id names; a case that names none goes to the test's title word."""
    try:
        functions: tuple[str, ...] = get_lab(result.lab).functions
    except Exception:  # noqa: BLE001 - a result of a lab not on disk: titles only
        functions = ()
    parts: dict[str, list[_Part]] = {}
    for test in result.tests:
        if test.outcome == SKIPPED:
            continue
        owner = tested_function(test)
        if owner in functions or not test.cases:
            failing = test.outcome != PASSED
            parts.setdefault(owner, []).append(_Part(
                test.name, test.score < test.max_score,
                frozenset(d.name for d in test.diagnosis) if failing else frozenset()))
            continue
        by_case: dict[str, list] = {}
        for case in test.cases:
            if case.outcome == SKIPPED:
                continue
            named = [f for f in functions if re.search(rf"(?<![A-Za-z0-9_]){f}(?![A-Za-z0-9_])",
                                                        case.case)]
            by_case.setdefault(named[0] if len(named) == 1 else owner, []).append(case)
        for function, cases in by_case.items():
            bad = [c for c in cases if c.outcome not in (PASSED, SKIPPED)]
            parts.setdefault(function, []).append(_Part(
                test.name, bool(bad), frozenset(d.name for c in bad for d in c.diagnosis)))
    return parts


def tally(result: GradeResult, verdicts: Mapping[str, Verdict], label: str = "") -> FairnessTally:
    """The counts of one graded submission; ``verdicts`` by function (functions not listed are
    taken to be correct)."""
    counts = FairnessTally()
    by_function = _parts(result)
    wrong = [v for v in verdicts.values() if v.wrong]
    for function, parts in by_function.items():
        verdict = verdicts.get(function, Verdict(function))
        lost = [p for p in parts if p.lost]
        if not verdict.wrong:
            counts.correct += 1
            if lost:
                counts.correct_losing += 1
                counts.details.append(f"{label}: correct {function} loses points in "
                                       f"{', '.join(p.test for p in lost)}")
    for verdict in wrong:
        counts.wrong += 1
        parts = by_function.get(verdict.function, [])
        failing = [p for p in parts if p.lost]
        if parts and not failing:
            counts.wrong_full_marks += 1
            counts.details.append(f"{label}: wrong {verdict.function} has full marks")
        names = {n for p in failing for n in p.diagnoses}
        if names & (verdict.accepted | {verdict.mistake}):
            counts.named += 1
        else:
            counts.details.append(f"{label}: {verdict.function}'s mistake {verdict.mistake} "
                                   f"not named (diagnoses: {sorted(names) or 'none'})")
    accepted = set().union(*(v.accepted | {v.mistake} for v in wrong)) if wrong else set()
    wrong_functions = {v.function for v in wrong}
    for function, parts in by_function.items():
        if function not in wrong_functions:
            continue  # a correct function's failing test is counted in correct_losing
        for part in parts:
            if part.lost and part.diagnoses and not part.diagnoses & accepted:
                counts.misnamed += 1
                counts.details.append(f"{label}: {part.test} diagnosed as "
                                       f"{sorted(part.diagnoses)}")
    return counts


def mutant_tally(result: GradeResult, mutant: Mutant) -> FairnessTally:
    """The counts of a graded mutant: its own function is wrong, every other one correct."""
    verdict = Verdict(mutant.function, mutant.name, frozenset(mutant.patterns))
    return tally(result, {mutant.function: verdict}, mutant.name)

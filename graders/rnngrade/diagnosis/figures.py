"""Four figures of how fair and how helpful grading is, over submissions with known mistakes.

Per function of a graded submission whose verdict is known (correct, or wrong with a known
mistake): correct functions that lose points, wrong functions with full marks, wrong functions
whose mistake is named, and tests whose diagnosis names a mistake the submission does not have.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rnngrade.diagnosis.feedback import tested_function
from rnngrade.diagnosis.mutants import Mutant
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
class Figures:
    correct: int = 0
    correct_losing: int = 0  # target 0
    wrong: int = 0
    wrong_full_marks: int = 0  # target 0
    named: int = 0  # target ≥ 80 % of wrong
    # failing tests of a wrong function whose diagnosis names no mistake the function has (a
    # correct function's failing test counts in correct_losing, whatever it says); target 0
    misnamed: int = 0
    details: list[str] = field(default_factory=list)

    def __iadd__(self, other: Figures) -> Figures:
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


def tally(result: GradeResult, verdicts: Mapping[str, Verdict], label: str = "") -> Figures:
    """The figures of one graded submission; ``verdicts`` by function (functions not listed are
    taken to be correct)."""
    figures = Figures()
    by_function: dict[str, list] = {}
    for test in result.tests:
        if test.outcome != SKIPPED:
            by_function.setdefault(tested_function(test), []).append(test)
    wrong = [v for v in verdicts.values() if v.wrong]
    for function, tests in by_function.items():
        verdict = verdicts.get(function, Verdict(function))
        lost = [t for t in tests if t.score < t.max_score]
        if not verdict.wrong:
            figures.correct += 1
            if lost:
                figures.correct_losing += 1
                figures.details.append(f"{label}: correct {function} loses points in "
                                       f"{', '.join(t.name for t in lost)}")
    for verdict in wrong:
        figures.wrong += 1
        tests = by_function.get(verdict.function, [])
        failing = [t for t in tests if t.outcome != PASSED]
        if tests and not failing:
            figures.wrong_full_marks += 1
            figures.details.append(f"{label}: wrong {verdict.function} has full marks")
        names = {d.name for t in failing for d in t.diagnosis}
        if names & (verdict.accepted | {verdict.mistake}):
            figures.named += 1
        else:
            figures.details.append(f"{label}: {verdict.function}'s mistake {verdict.mistake} "
                                   f"not named (diagnoses: {sorted(names) or 'none'})")
    accepted = set().union(*(v.accepted | {v.mistake} for v in wrong)) if wrong else set()
    wrong_functions = {v.function for v in wrong}
    for test in result.tests:
        if test.outcome in (PASSED, SKIPPED) or not test.diagnosis:
            continue
        if tested_function(test) not in wrong_functions and tested_function(test) in by_function:
            continue  # a correct function's test that fails is counted in correct_losing
        if not any(d.name in accepted for d in test.diagnosis):
            figures.misnamed += 1
            figures.details.append(f"{label}: {test.name} diagnosed as "
                                   f"{[d.name for d in test.diagnosis]}")
    return figures


def mutant_figures(result: GradeResult, mutant: Mutant) -> Figures:
    """The figures of a graded mutant: its own function is wrong, every other one correct."""
    verdict = Verdict(mutant.function, mutant.name, frozenset(mutant.patterns))
    return tally(result, {mutant.function: verdict}, mutant.name)

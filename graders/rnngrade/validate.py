"""Self-validation: test the tests.

Per lab: the reference scores full marks (CPU, and CUDA when present), the untouched stub scores
0, every mutant loses points and is diagnosed by its own name (graded only once the reference
scores full marks: each check compares with the reference's values), no two mutants are
indistinguishable (unless the lab's mutants.py says why in ``INDISTINGUISHABLE``), every tolerance
keeps at least a 10x margin over the reference's own error, and generated files are up to date.
"""

from __future__ import annotations

import math
import tempfile
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.authoring.generate import stale_files
from rnngrade.diagnosis.fairness import FairnessTally, mutant_tally
from rnngrade.diagnosis.mutants import Mutant
from rnngrade.errors import GraderError
from rnngrade.grading.engine import grade, shared_grader
from rnngrade.harness.formatting import format_magnitude
from rnngrade.labs import Lab
from rnngrade.results.model import GradeResult, Outcome, Status
from rnngrade.validate_outcomes import (
    OutcomeReport,
    format_outcomes,
    outcome_specs,
    validate_outcomes,
)

REQUIRED_MARGIN = 10.0


@dataclass
class MarginRow:
    check: str
    tolerance: str
    reference_ratio: float  # worst |ref − expected| / allowed over the check's cases

    @property
    def margin(self) -> float:
        return math.inf if self.reference_ratio == 0 else 1.0 / self.reference_ratio


@dataclass
class MutantRow:
    name: str
    function: str
    score: float
    max_score: float
    tests_failed: list[str]
    diagnosed: list[str]  # mutant names in the top diagnoses of its failing tests
    signature: tuple = ()

    @property
    def caught(self) -> bool:
        return self.score < self.max_score

    @property
    def named(self) -> bool:
        return self.name in self.diagnosed


@dataclass
class LabReport:
    lab: str
    reference: GradeResult | None = None
    stub: GradeResult | None = None
    margins: list[MarginRow] = field(default_factory=list)
    mutants: list[MutantRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    tally: FairnessTally = field(default_factory=FairnessTally)  # fairness and naming, mutants
    outcome: OutcomeReport = field(default_factory=OutcomeReport)  # tests graded by outcome

    @property
    def ok(self) -> bool:
        return not self.problems


def _grade_source(source: str, lab: Lab, name: str, *, device: str,
                  inprocess: bool, outcome: bool = True) -> GradeResult:
    with tempfile.TemporaryDirectory(prefix=f"rnngrade-validate-{name}-") as tmp:
        folder = Path(tmp) / name
        folder.mkdir()
        (folder / lab.filename).write_text(source, encoding="utf-8")
        return grade(folder, lab.name, device=device, inprocess=inprocess, outcome=outcome)


def margin_rows(result: GradeResult) -> list[MarginRow]:
    """The worst reference error per (check, tolerance) over all its cases."""
    worst: dict[tuple[str, str], float] = defaultdict(float)
    for test in result.tests:
        for record in test.checks:
            key = (record["check"], record["tolerance"])
            worst[key] = max(worst[key], record["ratio"])
    return [MarginRow(check, tol, ratio) for (check, tol), ratio in sorted(worst.items())]


def _diagnosed_names(result: GradeResult, names: set[str]) -> list[str]:
    found = []
    for test in result.tests:
        for diagnosis in test.diagnosis:
            name = diagnosis.name
            if name in names and name not in found:
                found.append(name)
    return found


def _signature(result: GradeResult) -> tuple:
    return tuple((t.name, tuple(c.outcome for c in t.cases)) for t in result.tests)


def validate_lab(lab: Lab, *, device: str = "auto", inprocess: bool = True,
                 full: bool = False) -> LabReport:
    report = LabReport(lab.name)
    report.problems += stale_files(lab)
    try:  # the assets load (every mutant applies) and the collected suite matches the rubric
        assets = shared_grader(lab.name, device=device, inprocess=inprocess).assets
    except GraderError as exc:
        report.problems.append(str(exc))
        return report
    report.problems += assets.warnings  # mutants that no longer apply, left out of diagnosis
    reference_source = assets.reference_source
    report.reference = _grade_source(reference_source, lab, "reference", device=device,
                                     inprocess=inprocess)
    ref = report.reference
    if ref.status == Status.GRADER_ERROR:
        report.problems.append(f"the grader fails on the reference: {ref.grader_detail}")
        return report
    if ref.score != ref.max_score or ref.max_score == 0:
        failing = [t for t in ref.tests if t.outcome not in (Outcome.PASSED, Outcome.SKIPPED)]
        report.problems.append(f"the reference scores {ref.score:g}/{ref.max_score:g} "
                               f"(failing: {[t.name for t in failing]})" + "".join(
                                   f"\n  {t.name}: {_first_lines(t.message)}" for t in failing))
    _check_margins(report, ref)
    stub_source = lab.stub_path().read_text(encoding="utf-8")
    report.stub = _grade_source(stub_source, lab, "stub", device=device, inprocess=inprocess)
    if report.stub.status == Status.GRADER_ERROR:
        report.problems.append(f"the grader fails on the stub: {report.stub.grader_detail}")
    elif report.stub.score != 0:
        passing = [t.name for t in report.stub.tests if t.score > 0]
        report.problems.append(f"the untouched stub scores {report.stub.score:g} "
                               f"(passing: {passing})")
    if ref.score != ref.max_score or ref.max_score == 0:
        # every check compares with the reference's values: its mutants' results would say
        # nothing but that it is wrong
        report.problems.append("the known mistakes were not graded: the reference must score "
                               "full marks first")
        return report
    specs = outcome_specs(lab)
    catching = {name for spec in specs.values() for name in spec.catches}
    results = _grade_mutants(report, lab, assets.mutant_table, reference_source, device,
                             inprocess, catching)
    _check_distinguishable(report, assets.indistinguishable)
    report.outcome = validate_outcomes(lab, specs, results,
                                       {m.name for m in assets.mutant_table}, full=full)
    report.problems += report.outcome.problems
    return report


def _check_margins(report: LabReport, ref: GradeResult) -> None:
    """Every tolerance must sit well above the reference's own error."""
    report.margins = margin_rows(ref)
    for margin_row in report.margins:
        if margin_row.margin < REQUIRED_MARGIN:
            report.problems.append(f"check {margin_row.check!r}: tolerance "
                                   f"{margin_row.tolerance} has only a "
                                   f"{margin_row.margin:.1f}x margin over the reference's own "
                                   "error")


def _grade_mutants(report: LabReport, lab: Lab, mutants: list[Mutant], reference_source: str,
                   device: str, inprocess: bool, catching: Collection[str] = ()
                   ) -> dict[str, GradeResult]:
    """Grade every mutant: each must lose points and be diagnosed by name. The tests graded
    by outcome run only for the mutants they name in ``catches`` (the others' training runs
    would cost minutes and show nothing). Returns the results by mutant."""
    names = {m.name for m in mutants}
    results = {}
    for mutant in mutants:
        result = _grade_source(mutant.apply(reference_source), lab, mutant.name, device=device,
                               inprocess=inprocess, outcome=mutant.name in catching)
        results[mutant.name] = result
        if result.status == Status.GRADER_ERROR:
            report.problems.append(f"the grader fails on mutant {mutant.name!r}: "
                                   f"{result.grader_detail}")
            continue
        row = MutantRow(mutant.name, mutant.function, result.score, result.max_score,
                        [t.name for t in result.tests
                         if t.outcome not in (Outcome.PASSED, Outcome.SKIPPED)],
                        _diagnosed_names(result, names), _signature(result))
        report.mutants.append(row)
        report.tally += mutant_tally(result, mutant)
        if not row.caught:
            report.problems.append(f"mutant {mutant.name!r} scores full marks: no test catches "
                                   f"it ({mutant.description})")
        elif not row.named:
            report.problems.append(f"mutant {mutant.name!r} is caught but not diagnosed by name "
                                   f"(diagnoses: {row.diagnosed or 'none'})")
    return results


def _check_distinguishable(report: LabReport, allowed: dict[frozenset[str], str]) -> None:
    """Two mutants with the same outcomes and diagnoses everywhere need a separating case."""
    by_signature: dict[tuple, list[MutantRow]] = defaultdict(list)
    for row in report.mutants:
        by_signature[(row.signature, tuple(sorted(row.diagnosed)))].append(row)
    for group in by_signature.values():
        if len(group) > 1:
            pair = frozenset(r.name for r in group)
            if pair not in allowed:
                report.problems.append(
                    f"mutants {sorted(pair)} are indistinguishable on every test; add a case that "
                    "separates them or explain why in INDISTINGUISHABLE in mutants.py")


def format_report(report: LabReport) -> str:
    lines = [f"== {report.lab} =="]
    if report.reference is not None:
        r = report.reference
        lines.append(f"reference: {r.score:g}/{r.max_score:g} on {r.device}")
    if report.stub is not None:
        lines.append(f"stub:      {report.stub.score:g}/{report.stub.max_score:g}")
    lines.append("")
    width = max([len(m.check) for m in report.margins] + [5])
    lines.append(f"{'check':<{width}}  {'tolerance (atol, rtol)':<24}  {'ref. error/allowed':>18}"
                 f"  {'margin':>8}")
    for margin_row in report.margins:
        tol = margin_row.tolerance.split(" (", 1)[0]
        margin = ("exact" if math.isinf(margin_row.margin)
                  else f"{format_magnitude(margin_row.margin)}x")
        lines.append(f"{margin_row.check:<{width}}  {tol:<24}  "
                     f"{margin_row.reference_ratio:>18.3g}"
                     f"  {margin:>8}")
    lines.append("")
    width = max([len(m.name) for m in report.mutants] + [6])
    lines.append(f"{'mutant':<{width}}  {'score':>11}  {'tests failed':>12}  diagnosis given")
    for row in report.mutants:
        mark = "ok" if row.caught and row.named else "PROBLEM"
        lines.append(f"{row.name:<{width}}  {row.score:>5.4g}/{row.max_score:<5g}  "
                     f"{len(row.tests_failed):>12}  {', '.join(row.diagnosed) or '-'}  [{mark}]")
    lines += format_outcomes(report.outcome)
    lines += ["", *report.tally.lines(), ""]
    if report.problems:
        lines += [f"PROBLEM: {p}" for p in report.problems]
    else:
        lines.append(f"{report.lab}: all checks hold")
    return "\n".join(lines)


def _first_lines(message: str, lines: int = 5, width: int = 400) -> str:
    """The start of a failing test's message: enough to tell why the reference failed."""
    text = " | ".join(line.strip() for line in message.strip().splitlines()[:lines])
    return text if len(text) <= width else text[: width - 1] + "…"

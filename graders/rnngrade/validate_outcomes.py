"""Self-validation of the tests graded by outcome (``rnngrade validate``).

For every outcome test of a lab: the reference reaches every band on seeds 0–4 (each seed a run
of the hidden suite's outcome tests on the reference, in this process, with
``--outcome-seed``), and every known mistake the test names in ``catches`` fails it on seed 0
(from the mutants' ordinary grading). The margin of each figure to its band is printed. Where the
five seeds would cost more than ``SEED_BUDGET`` CPU-seconds (projected from seed 0), only seed
0 runs unless ``full``.
"""

from __future__ import annotations

import io
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from rnngrade.grading.engine import suite_args
from rnngrade.grading.outcome import OutcomeSpec, measurements_of, outcome_spec
from rnngrade.grading.session import run_fresh
from rnngrade.labs import Lab
from rnngrade.results.model import GradeResult, Measurement, Outcome

SEEDS = (0, 1, 2, 3, 4)
SEED_BUDGET = 120.0  # CPU-seconds per lab for the five seeds; beyond it, seed 0 unless --full


@dataclass
class SeedRun:
    """One outcome test on the reference at one seed."""

    test: str
    seed: int
    passed: bool
    measurements: list[Measurement]
    message: str = ""


@dataclass
class OutcomeReport:
    specs: dict[str, OutcomeSpec] = field(default_factory=dict)  # by test name
    runs: list[SeedRun] = field(default_factory=list)
    caught: dict[tuple[str, str], bool] = field(default_factory=dict)  # (test, mutant)
    seconds_per_seed: float = 0.0  # CPU-seconds of seed 0
    seeds_skipped: tuple[int, ...] = ()
    problems: list[str] = field(default_factory=list)


class _Recorder:
    """A pytest plugin: collects the outcome markers, or each outcome test's result."""

    def __init__(self) -> None:
        self.specs: dict[str, OutcomeSpec] = {}
        self.results: dict[str, tuple[bool, list[Measurement], str]] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            spec = outcome_spec(item)
            if spec is not None:
                self.specs[getattr(item, "originalname", None) or item.name] = spec

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = report.nodeid.rsplit("::", 1)[-1].split("[")[0]
        if report.when == "call" or (report.when == "setup" and not report.passed):
            text = "" if report.passed else str(report.longreprtext)[-600:]
            self.results[name] = (report.passed, measurements_of(report.user_properties), text)


def outcome_specs(lab: Lab) -> dict[str, OutcomeSpec]:
    """The outcome tests of ``lab``'s hidden suite, by test name (a collection run only)."""
    recorder = _Recorder()
    run_fresh([*suite_args(lab), "--collect-only"], [recorder], io.StringIO(),
              f"the {lab.name} hidden suite")
    return recorder.specs


def run_reference_seed(lab: Lab, seed: int) -> dict[str, tuple[bool, list[Measurement], str]]:
    """The lab's outcome tests on the reference (in this process) with ``--outcome-seed``."""
    recorder = _Recorder()
    run_fresh([*suite_args(lab), "-m", "outcome", "--outcome-seed", str(seed)], [recorder],
              io.StringIO(), f"the {lab.name} outcome tests (seed {seed})")
    return recorder.results


def validate_outcomes(lab: Lab, specs: Mapping[str, OutcomeSpec],
                      mutant_results: Mapping[str, GradeResult], known: set[str], *,
                      full: bool = False) -> OutcomeReport:
    """Seeds 0–4 on the reference, and each named mistake against its test on seed 0."""
    report = OutcomeReport(dict(specs))
    if not specs:
        return report
    for test, spec in specs.items():
        for name in spec.catches:
            if name not in known:
                report.problems.append(f"outcome test {test!r} names {name!r} in catches, but "
                                       "no known mistake has that name")
                continue
            result = mutant_results.get(name)
            entry = next((t for t in result.tests if t.name == test), None) if result else None
            caught = entry is not None and entry.outcome not in (Outcome.PASSED,
                                                                 Outcome.SKIPPED)
            report.caught[(test, name)] = caught
            if not caught:
                report.problems.append(f"outcome test {test!r} does not catch {name!r} on "
                                       "seed 0")
    for seed in SEEDS:
        started = time.process_time()
        results = run_reference_seed(lab, seed)
        if seed == 0:
            report.seconds_per_seed = time.process_time() - started
            if not full and report.seconds_per_seed * len(SEEDS) > SEED_BUDGET:
                report.seeds_skipped = SEEDS[1:]
        for test in specs:
            passed, measurements, message = results.get(test, (False, [], "did not run"))
            report.runs.append(SeedRun(test, seed, passed, measurements, message))
            if not passed:
                report.problems.append(f"the reference fails outcome test {test!r} on seed "
                                       f"{seed}: {message.strip().splitlines()[-1:] or ''}")
        if report.seeds_skipped:
            break
    return report


def margin(m: Measurement) -> str:
    """How far a figure is inside (+) or outside (−) its band, in its own units."""
    if m.value is None:
        return "no figure"
    inside = m.threshold - m.value if m.bound in ("≤", "<") else m.value - m.threshold
    return f"{100 * inside:+.1f} points" if m.unit == "%" else f"{inside:+.3g}"


def format_outcomes(report: OutcomeReport) -> list[str]:
    if not report.specs:
        return []
    lines = ["", "graded by outcome (reference per seed; figure, band, margin):"]
    for run in report.runs:
        mark = "ok" if run.passed else "PROBLEM"
        lines.append(f"  {run.test} seed {run.seed}: [{mark}]")
        lines += [f"    {m.name} {m.figure(m.value)} (needs {m.bound} {m.band()}; margin "
                  f"{margin(m)})" for m in run.measurements]
    for (test, name), caught in report.caught.items():
        lines.append(f"  {test}: known mistake {name} on seed 0 "
                     f"{'fails it' if caught else 'PASSES it'}")
    cost = f"{report.seconds_per_seed:.1f} CPU-s per seed"
    if report.seeds_skipped:
        lines.append(f"  seeds {', '.join(map(str, report.seeds_skipped))} not run: {cost}, "
                     f"over {SEED_BUDGET:g} CPU-s for five (--full runs them)")
    else:
        lines.append(f"  {cost}")
    return lines

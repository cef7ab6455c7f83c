"""The outcome collector: the pytest plugin that serves the student to a hidden suite and records
each case's outcome.

It uses pytest's public plugin API only; what it needs of pytest's internals (an item's captured
sections) it asks ``grading.session`` for. A failure is classified where it is recorded:

- a check that fails or an error of the student's code: the checks plugin's short summary;
- a failure of trusted code (a ``GraderError`` such as a reference that raises, or any error while
  setting up or tearing down a test's fixtures): a *grader fault*, with the traceback kept for the
  instructor, so the engine reports the whole submission as not graded;
- anything else in a test's body (a plain ``assert`` on the student's value, a trusted helper
  that cannot use it): the student's, told without test source or values.
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from rnngrade.errors import GraderError
from rnngrade.grading.chained import NOTE_KEY
from rnngrade.grading.keys import LAB_ASSETS
from rnngrade.grading.lab_assets import LabAssets
from rnngrade.grading.memo import EXPECTATION_MEMO, ExpectationMemo
from rnngrade.grading.outcome import OUTCOME_KEY
from rnngrade.grading.plugin import CHECK_KEY
from rnngrade.grading.scoring import CaseOf
from rnngrade.grading.session import report_sections
from rnngrade.harness import markers
from rnngrade.harness.checks.plugin import FAILURE_KEY, STUDENT_PROVIDER, short_failure
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.results.model import BUDGET_MESSAGE, CaseResult, FailureKind, Measurement, Outcome
from rnngrade.results.plots import FIGURE_KEY


@dataclass(eq=False)
class OutcomeCollector:
    """Serves ``student`` to the suite and collects the outcome of every case.

    A long-lived grader reuses one collector: ``begin()`` swaps the student and forgets the
    previous submission's outcomes, keeping the collected items."""

    student: ModuleProxy | None
    device: str
    assets: LabAssets
    memo: ExpectationMemo | None = None
    items: dict[str, CaseOf] = field(default_factory=dict)
    places: dict[str, str] = field(default_factory=dict)  # test name -> "file:line"
    cases: dict[str, CaseResult] = field(default_factory=dict)
    checks: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    figures: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    measurements: dict[str, list[Measurement]] = field(
        default_factory=lambda: defaultdict(list))  # tests graded by outcome, by node id
    faults: list[str] = field(default_factory=list)  # grader faults, for the instructor
    log: io.StringIO = field(default_factory=io.StringIO)
    notes: dict[str, None] = field(default_factory=dict)  # from tests (NOTE_KEY), in order

    def begin(self, student: ModuleProxy) -> None:
        self.student = student
        self.notes = {}
        self.cases = {}
        self.checks = defaultdict(list)
        self.figures = defaultdict(list)
        self.measurements = defaultdict(list)
        self.faults = []
        self.log = io.StringIO()

    def _lab_assets(self, lab_name: str) -> LabAssets:
        if lab_name != self.assets.lab.name:
            raise GraderError(f"the {self.assets.lab.name} grader cannot serve {lab_name}")
        return self.assets

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[STUDENT_PROVIDER] = lambda request: self.student
        config.stash[LAB_ASSETS] = self._lab_assets
        if self.memo is not None:
            config.stash[EXPECTATION_MEMO] = self.memo

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo) -> pytest.TestReport | None:
        """A failed check or student error needs no traceback: the checks plugin replaces the
        report's text by its short message anyway, and rendering one costs ~40 ms."""
        if call.excinfo is None:
            return None
        if isinstance(call.excinfo.value, GraderError):
            item.user_properties.append((_FAULT_KEY, True))  # trusted code failed
        if short_failure(call.excinfo.value) is None or call.when == "collect":
            return None
        sections = [(f"Captured {key} {when}", content)
                    for when, key, content in report_sections(item)]
        return pytest.TestReport(item.nodeid, item.location, {x: 1 for x in item.keywords},
                                 "failed", "", call.when, sections, call.duration, call.start,
                                 call.stop, user_properties=item.user_properties)

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        for item in items:
            name = getattr(item, "originalname", None) or item.name
            case = item.name[len(name):].strip("[]") or "default"
            self.items[item.nodeid] = CaseOf(name, case)
            path, line, _ = item.location
            self.places.setdefault(name, f"{item.config.rootpath / path}:{(line or 0) + 1}")
            if self.device == "cpu" and item.get_closest_marker(markers.CUDA.name):
                item.add_marker(pytest.mark.skip(reason="grading on CPU only (--device cpu)"))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == CHECK_KEY and report.when == "call":
                self.checks[report.nodeid].append(cast("dict[str, Any]", value))
            elif key == FIGURE_KEY and report.when == "call":
                self.figures[report.nodeid].append(cast("dict[str, Any]", value))
            elif key == OUTCOME_KEY and report.when == "call":
                self.measurements[report.nodeid].append(Measurement.from_data(value))
            elif key == NOTE_KEY:
                self.notes[str(value)] = None
        previous = self.cases.get(report.nodeid)
        if report.when == "call" or (report.when in ("setup", "teardown") and not report.passed):
            if previous is not None and previous.outcome in (Outcome.FAILED, Outcome.ERROR):
                return  # keep the first failure (e.g. a call failure over a teardown error)
            self.cases[report.nodeid] = self._case(report)

    def _case(self, report: pytest.TestReport) -> CaseResult:
        item = self.items.get(report.nodeid, CaseOf(report.nodeid, "default"))
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            return CaseResult(item.case, Outcome.SKIPPED, reason.removeprefix("Skipped: "),
                              seconds=report.duration)
        if report.passed:
            return CaseResult(item.case, Outcome.PASSED, seconds=report.duration)
        summary = cast("dict[str, Any] | None", dict(report.user_properties).get(FAILURE_KEY))
        outcome = Outcome.FAILED if report.when == "call" else Outcome.ERROR
        trusted = (summary is None and report.when != "call") or any(
            key == _FAULT_KEY for key, _ in report.user_properties)
        if trusted:
            self.faults.append(f"{report.nodeid} ({report.when}):\n{report.longreprtext}")
            return CaseResult(item.case, Outcome.ERROR, GraderError.STUDENT_MESSAGE,
                              FailureKind.TRUSTED, seconds=report.duration)
        if summary is None:
            return CaseResult(item.case, outcome, _opaque_failure(report), FailureKind.UNUSABLE,
                              seconds=report.duration)
        kind = _kind(summary["kind"])
        if kind == FailureKind.BUDGET:
            return CaseResult(item.case, Outcome.ERROR, BUDGET_MESSAGE, kind,
                              seconds=report.duration)
        return CaseResult(item.case, outcome, summary["message"], kind,
                          summary["diagnosis"], summary["hint"], report.duration)


_FAULT_KEY = "rnngrade_grader_fault"


def _kind(value: Any) -> FailureKind | str:
    try:
        return FailureKind(value)
    except ValueError:
        return str(value)


def _opaque_failure(report: pytest.TestReport) -> str:
    """A failure that is neither a check nor a student error: never show test source or values."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message.splitlines()[0] if crash is not None and crash.message else ""
    if not text or text.startswith(("AssertionError", "assert ")):
        return "a check failed on your result"
    return f"the grader could not use your result ({text[:200]})"

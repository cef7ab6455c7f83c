"""Grading one submission: load it, run the lab's hidden suite against it, build the results."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rnngrade import __version__
from rnngrade.checks.devices import cuda_unavailable_reason
from rnngrade.checks.plugin import FAILURE_KEY, STUDENT_PROVIDER
from rnngrade.grading.plugin import CHECK_KEY
from rnngrade.grading.rubric import Rubric, load_rubric
from rnngrade.labs import Lab, get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import (
    ERROR,
    FAILED,
    PARTIAL,
    PASSED,
    SKIPPED,
    CaseResult,
    GradeResult,
    TestResult,
)
from rnngrade.runner.base import StudentRunner
from rnngrade.runner.inprocess import InProcessRunner
from rnngrade.runner.proxy import ModuleProxy
from rnngrade.submission.load import LoadedSubmission, SubmissionError, load_submission

DEVICES = ("cpu", "cuda", "auto")


class GradingError(RuntimeError):
    """The grader itself cannot run (a broken suite or rubric, an unusable device)."""


def resolve_device(device: str) -> str:
    if device not in DEVICES:
        raise GradingError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    reason = cuda_unavailable_reason()
    if device == "cuda" and reason:
        raise GradingError(f"--device cuda was asked for but {reason}")
    if device == "auto":
        return "cpu" if reason else "cuda"
    return device


@dataclass
class _Item:
    test: str
    case: str


@dataclass(eq=False)
class GradingSession:
    """A pytest plugin object: serves the student proxy and collects the outcome of every case."""

    student: ModuleProxy
    device: str
    items: dict[str, _Item] = field(default_factory=dict)
    cases: dict[str, CaseResult] = field(default_factory=dict)
    checks: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    log: io.StringIO = field(default_factory=io.StringIO)

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[STUDENT_PROVIDER] = lambda request: self.student

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        for item in items:
            name = getattr(item, "originalname", None) or item.name
            case = item.name[len(name):].strip("[]") or "default"
            self.items[item.nodeid] = _Item(name, case)
            if self.device == "cpu" and item.get_closest_marker("cuda"):
                item.add_marker(pytest.mark.skip(reason="grading on CPU only (--device cpu)"))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == CHECK_KEY and report.when == "call":
                self.checks[report.nodeid].append(value)
        previous = self.cases.get(report.nodeid)
        if report.when == "call" or (report.when in ("setup", "teardown") and not report.passed):
            if previous is not None and previous.outcome in (FAILED, ERROR):
                return  # keep the first failure (e.g. a call failure over a teardown error)
            self.cases[report.nodeid] = self._case(report)

    def _case(self, report: pytest.TestReport) -> CaseResult:
        item = self.items.get(report.nodeid, _Item(report.nodeid, "default"))
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            return CaseResult(item.case, SKIPPED, reason.removeprefix("Skipped: "),
                              seconds=report.duration)
        if report.passed:
            return CaseResult(item.case, PASSED, seconds=report.duration)
        summary = dict(report.user_properties).get(FAILURE_KEY)
        outcome = FAILED if report.when == "call" else ERROR
        if summary is None:
            return CaseResult(item.case, outcome, _opaque_failure(report), "grader",
                              seconds=report.duration)
        return CaseResult(item.case, outcome, summary["message"], summary["kind"],
                          summary["diagnosis"], summary["hint"], report.duration)


def _opaque_failure(report: pytest.TestReport) -> str:
    """A failure that is neither a check nor a student error: never show test source or values."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message.splitlines()[0] if crash is not None and crash.message else ""
    if not text or text.startswith(("AssertionError", "assert ")):
        return "a check failed on your result"
    return f"the grader could not use your result ({text[:200]})"


def collect_outcomes(lab: Lab, runner: StudentRunner, device: str) -> GradingSession:
    """Run the lab's hidden suite against ``runner``; return the session with every case."""
    session = GradingSession(ModuleProxy(runner), device)
    root = course_root()
    args = [str(lab.suite_dir(root)), "-p", "no:cacheprovider", "-p", "no:randomly",
            "--import-mode=importlib", "--rootdir", str(root), "-o", "addopts=", "-q",
            "--tb=short", "-W", "ignore"]
    with contextlib.redirect_stdout(session.log):
        code = pytest.main(args, plugins=[session])
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                pytest.ExitCode.INTERRUPTED) or not session.items:
        raise GradingError(f"the {lab.name} hidden suite did not run (pytest exit {int(code)}):\n"
                           + session.log.getvalue()[-3000:])
    return session


def build_results(lab: Lab, rubric: Rubric, session: GradingSession) -> list[TestResult]:
    by_test: dict[str, list[tuple[str, CaseResult]]] = defaultdict(list)
    for nodeid, item in session.items.items():
        case = session.cases.get(nodeid, CaseResult(item.case, ERROR, "did not run"))
        by_test[item.test].append((nodeid, case))
    rubric.check_matches(set(by_test))
    results = []
    for name, entry in rubric.entries.items():
        cases = [c for _, c in by_test[name]]
        checks = [r for nodeid, _ in by_test[name] for r in session.checks.get(nodeid, [])]
        results.append(summarise_test(name, entry.title, entry.points, entry.visibility, cases,
                                      checks))
    return results


def summarise_test(name: str, title: str, points: float, visibility: str,
                   cases: list[CaseResult], checks: list[dict]) -> TestResult:
    """Partial credit: the fraction of the cases that ran and passed."""
    ran = [c for c in cases if c.outcome != SKIPPED]
    passed = [c for c in ran if c.outcome == PASSED]
    failures = [c for c in ran if c.outcome != PASSED]
    if not ran:
        outcome, score = SKIPPED, 0.0
    elif not failures:
        outcome, score = PASSED, points
    else:
        score = round(points * len(passed) / len(ran), 4)
        if passed:
            outcome = PARTIAL
        else:
            outcome = ERROR if all(c.outcome == ERROR for c in failures) else FAILED
    if failures:
        message = _failure_summary(failures)
    else:
        message = "" if ran else (cases[0].message if cases else "no cases")
    diagnosis, hint = rank_diagnoses(failures)
    return TestResult(
        name=name, title=title, score=score, max_score=points if ran else 0.0, outcome=outcome,
        visibility=visibility, message=message, diagnosis=diagnosis, hint=hint,
        cases_passed=len(passed), cases_total=len(cases), cases_skipped=len(cases) - len(ran),
        seconds=round(sum(c.seconds for c in cases), 4), cases=cases, checks=checks)


def rank_diagnoses(failures: list[CaseResult]) -> tuple[list[str], str]:
    """The diagnoses that explain the most failing cases (a mistake can coincide with another on
    a special case, e.g. a zero initial state), and the hint of the best one."""
    counts: dict[str, int] = defaultdict(int)
    hints: dict[str, str] = {}
    for case in failures:
        for position, diagnosis in enumerate(case.diagnosis):
            counts[diagnosis] += 1
            if position == 0 and case.hint:
                hints.setdefault(diagnosis, case.hint)
    if not counts:
        return [], next((c.hint for c in failures if c.hint), "")
    best = max(counts.values())
    top = [d for d, n in counts.items() if n == best]
    return top, next((hints[d] for d in top if d in hints), "")


def _failure_summary(failures: list[CaseResult], limit: int = 3) -> str:
    """The distinct messages of the failing cases, each with the first case that showed it."""
    seen: dict[str, list[str]] = {}
    for case in failures:
        seen.setdefault(case.message, []).append(case.case)
    parts = []
    for message, names in list(seen.items())[:limit]:
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        parts.append(f"case {names[0]}{more}: {message}")
    if len(seen) > limit:
        parts.append(f"... and {len(seen) - limit} other failure message(s)")
    return "\n".join(parts)


def make_runner(loaded: LoadedSubmission, device: str, inprocess: bool) -> StudentRunner:
    if inprocess:
        return InProcessRunner.from_source(loaded.source, loaded.filename)
    from rnngrade.sandbox import SandboxRunner

    return SandboxRunner(loaded.source, loaded.filename, device=device)


def grade(submission: Path, lab_name: str, *, device: str = "auto",
          inprocess: bool = False) -> GradeResult:
    """Grade ``submission`` for ``lab_name``. Raises UnknownLabError / GradingError for problems
    of the grader or its arguments; problems of the submission end up in the result."""
    lab = get_lab(lab_name)
    device = resolve_device(device)
    rubric = load_rubric(lab.suite_dir() / "rubric.yaml")
    started = time.perf_counter()
    base = dict(lab=lab.name, lab_title=lab.title, submission=submission.name,
                device=device, grader_version=__version__,
                graded_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    try:
        loaded = load_submission(submission, lab)
    except SubmissionError as exc:
        tests = [TestResult(e.test, e.title, 0.0, e.points, ERROR, e.visibility,
                            message="not graded: the submission could not be loaded")
                 for e in rubric.entries.values()]
        return GradeResult(score=0.0, max_score=rubric.max_points,
                           execution_time=round(time.perf_counter() - started, 3), tests=tests,
                           status="load_error", error=str(exc), **base)
    runner = make_runner(loaded, device, inprocess)
    try:
        session = collect_outcomes(lab, runner, device)
        notes = loaded.notes + runner.load_notes()
        protections = runner.protections()
        missing = [f for f in lab.functions if not _has(runner, f)]
    finally:
        runner.close()
    tests = build_results(lab, rubric, session)
    if missing:
        notes.append("missing function(s): " + ", ".join(missing) + " — their tests score 0")
    return GradeResult(
        score=round(sum(t.score for t in tests), 4),
        max_score=sum(t.max_score for t in tests),
        execution_time=round(time.perf_counter() - started, 3), tests=tests, notes=notes,
        protections=protections, **base)


def _has(runner: StudentRunner, function: str) -> bool:
    try:
        return runner.has_function(function)
    except Exception:  # noqa: BLE001 - a closed or broken runner: report nothing
        return True

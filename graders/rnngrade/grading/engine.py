"""Grading one submission: load it, run the lab's hidden suite against it, build the results.

Two ways to run the suite, with identical results:

- ``grade_isolated``: one whole ``pytest.main`` session per submission (collection, configure,
  unconfigure every time; about a second of overhead).
- ``Grader``: a long-lived session for one lab. It collects the hidden suite once and, for each
  submission, swaps the student proxy and runs every collected item through pytest's own
  ``pytest_runtest_protocol`` hook (same fixtures, seeding, capture and reports), tearing the
  fixtures down after the last item so nothing leaks from one submission into the next. The
  reference's and the mutants' values are memoised across submissions (``grading/memo.py``).

``grade()`` uses a ``Grader`` cached per lab, device, isolation and suite version.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rnngrade import __version__
from rnngrade.checks.devices import cuda_unavailable_reason
from rnngrade.checks.plugin import FAILURE_KEY, STUDENT_PROVIDER, short_failure
from rnngrade.grading.chained import NOTE_KEY
from rnngrade.grading.memo import EXPECTATION_MEMO, ExpectationMemo
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
from rnngrade.submission.source_notes import source_notes

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
    """A pytest plugin object: serves the student proxy and collects the outcome of every case.

    A long-lived ``Grader`` reuses one session object: ``begin()`` swaps the student and forgets
    the previous submission's outcomes, keeping the collected items."""

    student: ModuleProxy | None
    device: str
    memo: ExpectationMemo | None = None
    items: dict[str, _Item] = field(default_factory=dict)
    cases: dict[str, CaseResult] = field(default_factory=dict)
    checks: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    log: io.StringIO = field(default_factory=io.StringIO)
    notes: dict[str, None] = field(default_factory=dict)  # from tests (NOTE_KEY), in order

    def begin(self, student: ModuleProxy) -> None:
        self.student = student
        self.notes = {}
        self.cases = {}
        self.checks = defaultdict(list)
        self.log = io.StringIO()

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[STUDENT_PROVIDER] = lambda request: self.student
        if self.memo is not None:
            config.stash[EXPECTATION_MEMO] = self.memo

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo) -> pytest.TestReport | None:
        """A failed check or student error needs no traceback: the checks plugin replaces the
        report's text by its short message anyway, and rendering one costs ~40 ms."""
        if call.excinfo is None or short_failure(call.excinfo.value) is None:
            return None
        sections = [(f"Captured {key} {when}", content)
                    for when, key, content in item._report_sections]
        return pytest.TestReport(item.nodeid, item.location, {x: 1 for x in item.keywords},
                                 "failed", "", call.when, sections, call.duration, call.start,
                                 call.stop, user_properties=item.user_properties)

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
            elif key == NOTE_KEY:
                self.notes[str(value)] = None
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


# Plugins a hidden suite has no use for; each would otherwise wrap every phase of every test.
# (Capture stays, at the level of sys.stdout: the student's output never reaches the grader's
# descriptors, it is captured per call by the runner.)
_IDLE_PLUGINS = ("cacheprovider", "randomly", "logging", "timeout", "benchmark",
                 "hypothesispytest", "junitxml", "doctest", "pastebin", "stepwise",
                 "faulthandler", "subtests")


def suite_args(lab: Lab) -> list[str]:
    """The pytest command line that runs ``lab``'s hidden suite."""
    root = course_root()
    blocked = [arg for name in _IDLE_PLUGINS for arg in ("-p", f"no:{name}")]
    return [str(lab.suite_dir(root)), *blocked, "--capture=sys", "--import-mode=importlib",
            "--rootdir", str(root), "-o", "addopts=", "-q", "--tb=short", "-W", "ignore"]


def collect_outcomes(lab: Lab, runner: StudentRunner, device: str) -> GradingSession:
    """Run the lab's hidden suite against ``runner`` in a fresh pytest session; return the
    session with every case."""
    session = GradingSession(ModuleProxy(runner), device)
    args = suite_args(lab)
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
    from rnngrade.sandbox import SandboxRunner, SandboxUnavailable

    try:
        return SandboxRunner(loaded.source, loaded.filename, device=device)
    except SandboxUnavailable as exc:  # the machine's problem, not the submission's
        raise GradingError(f"{exc}\nOn a machine without the sandbox, grade only code you "
                           "trust, with --inprocess.") from None


def grade(submission: Path, lab_name: str, *, device: str = "auto",
          inprocess: bool = False) -> GradeResult:
    """Grade ``submission`` for ``lab_name``. Raises UnknownLabError / GradingError for problems
    of the grader or its arguments; problems of the submission end up in the result."""
    return shared_grader(lab_name, device=device, inprocess=inprocess).grade(submission)


def grade_isolated(submission: Path, lab_name: str, *, device: str = "auto",
                   inprocess: bool = False) -> GradeResult:
    """Like ``grade()``, in a fresh pytest session of its own (slow; the reference path)."""
    lab = get_lab(lab_name)
    device = resolve_device(device)
    rubric = load_rubric(lab.suite_dir() / "rubric.yaml")
    return _grade_one(submission, lab, rubric, device, inprocess,
                      lambda runner: collect_outcomes(lab, runner, device))


def _grade_one(submission: Path, lab: Lab, rubric: Rubric, device: str, inprocess: bool,
               collect: Callable[[StudentRunner], GradingSession]) -> GradeResult:
    started = time.perf_counter()
    base = dict(lab=lab.name, lab_title=lab.title, submission=submission.name,
                device=device, grader_version=__version__,
                graded_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    try:
        loaded = load_submission(submission, lab)
    except SubmissionError as exc:
        return not_graded(lab, rubric, submission.name, device, str(exc),
                          round(time.perf_counter() - started, 3), base["graded_at"])
    runner = make_runner(loaded, device, inprocess)
    try:
        session = collect(runner)
        notes = (loaded.notes + runner.load_notes() + source_notes(loaded.source, lab)
                 + list(session.notes))
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


def not_graded(lab: Lab, rubric: Rubric, name: str, device: str, error: str,
               seconds: float = 0.0, graded_at: str = "",
               message: str = "not graded: the submission could not be loaded") -> GradeResult:
    """The result of a submission that could not be graded at all: every test at 0, the reason
    in ``error``."""
    tests = [TestResult(e.test, e.title, 0.0, e.points, ERROR, e.visibility, message=message)
             for e in rubric.entries.values()]
    return GradeResult(
        lab=lab.name, lab_title=lab.title, submission=name, score=0.0,
        max_score=rubric.max_points, execution_time=seconds, tests=tests, device=device,
        status="load_error", error=error, grader_version=__version__,
        graded_at=graded_at or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))


class Grader:
    """A long-lived grader for one lab: collects the hidden suite once, then grades submission
    after submission in the same pytest session (see the module docstring).

    One submission at a time: ``grade`` holds a lock."""

    def __init__(self, lab_name: str, *, device: str = "auto", inprocess: bool = False,
                 memo: ExpectationMemo | None = None) -> None:
        self.lab = get_lab(lab_name)
        self.device = resolve_device(device)
        self.inprocess = inprocess
        self.rubric = load_rubric(self.lab.suite_dir() / "rubric.yaml")
        self.memo = memo if memo is not None else ExpectationMemo()
        self.session = GradingSession(None, self.device, memo=self.memo)
        self.graded = 0
        self.signature: tuple = ()
        self._lock = threading.Lock()
        self._config: pytest.Config | None = None
        self._pytest_session: pytest.Session | None = None
        self._items: list[pytest.Item] = []
        self._open()

    @property
    def closed(self) -> bool:
        return self._config is None

    def _open(self) -> None:
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            try:
                config = _prepareconfig(suite_args(self.lab), plugins=[self.session])
            except Exception as exc:  # noqa: BLE001 - a usage error or a broken conftest
                raise GradingError(f"cannot start the {self.lab.name} hidden suite: {exc}"
                                   ) from exc
            session = Session.from_config(config)
            session.exitstatus = pytest.ExitCode.OK
            self._config, self._pytest_session = config, session
            try:
                config._do_configure()
                config.hook.pytest_sessionstart(session=session)
                config.hook.pytest_collection(session=session)
            except BaseException as exc:
                self.close()
                if isinstance(exc, Exception):
                    raise GradingError(f"the {self.lab.name} hidden suite did not collect: "
                                       f"{exc}\n{log.getvalue()[-3000:]}") from exc
                raise
        if session.testsfailed or not session.items or not self.session.items:
            self.close()
            raise GradingError(f"the {self.lab.name} hidden suite did not collect:\n"
                               + log.getvalue()[-3000:])
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # nobody reads it, and it would keep every report
            config.pluginmanager.unregister(reporter)
        self._items = list(session.items)

    def grade(self, submission: Path) -> GradeResult:
        """Grade one submission (the same result as ``grade_isolated``)."""
        with self._lock:
            if self._config is None:
                raise GradingError("this grader is closed")
            self.graded += 1
            return _grade_one(submission, self.lab, self.rubric, self.device, self.inprocess,
                              self._run)

    def _run(self, runner: StudentRunner) -> GradingSession:
        assert self._config is not None
        state = self.session
        state.begin(ModuleProxy(runner))
        hook = self._config.hook
        items = self._items
        cwd = os.getcwd()
        try:
            with contextlib.redirect_stdout(state.log):
                for i, item in enumerate(items):
                    item.user_properties = []  # per run, as a fresh item would have
                    item._report_sections = []
                    # The last item has no successor, so every fixture (the module-scoped
                    # student proxy included) is torn down before the next submission.
                    nextitem = items[i + 1] if i + 1 < len(items) else None
                    hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        except Exception as exc:  # noqa: BLE001 - the session is unusable now
            self.close()
            raise GradingError(f"the {self.lab.name} hidden suite broke: {exc}") from exc
        finally:
            os.chdir(cwd)
            state.student = None
        return state

    def close(self) -> None:
        """End the pytest session (idempotent)."""
        config, session = self._config, self._pytest_session
        self._config = self._pytest_session = None
        self._items = []
        if config is None:
            return
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                if session is not None:
                    config.hook.pytest_sessionfinish(session=session, exitstatus=0)
            finally:
                config._ensure_unconfigure()

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SHARED: dict[tuple, Grader] = {}
_SHARED_LOCK = threading.Lock()


def suite_signature(lab: Lab) -> tuple:
    """Changes whenever a file of the lab's hidden suite or its reference solution changes."""
    paths = sorted(p for p in lab.suite_dir().rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    paths.append(lab.solution_path())
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths if p.exists())


def shared_grader(lab_name: str, *, device: str = "auto", inprocess: bool = False) -> Grader:
    """This process's ``Grader`` for a lab, device and isolation; rebuilt when the suite changes
    on disk or the previous one broke."""
    lab = get_lab(lab_name)
    resolved = resolve_device(device)
    key = (lab.name, resolved, inprocess, str(course_root()))
    signature = suite_signature(lab)
    with _SHARED_LOCK:
        grader = _SHARED.get(key)
        if grader is not None and (grader.closed or grader.signature != signature):
            grader.close()
            grader = None
        if grader is None:
            grader = Grader(lab.name, device=resolved, inprocess=inprocess)
            grader.signature = signature
            _SHARED[key] = grader
        return grader


def close_shared_graders() -> None:
    """Close every cached grader of this process."""
    with _SHARED_LOCK:
        for grader in _SHARED.values():
            grader.close()
        _SHARED.clear()


def _has(runner: StudentRunner, function: str) -> bool:
    try:
        return runner.has_function(function)
    except Exception:  # noqa: BLE001 - a closed or broken runner: report nothing
        return True

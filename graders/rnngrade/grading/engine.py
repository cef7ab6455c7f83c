"""Grading one submission: load it, run the lab's hidden suite against it, build the results.

The engine composes the parts: ``LabAssets`` (the lab's rubric, reference and mutants, keyed by
one content digest), ``devices`` (which device), ``session`` (driving pytest), ``outcomes`` (the
plugin recording every case), ``scoring`` (the points) and ``budget`` (the submission's time
budget, and the grader's own). Two ways to run the suite, with identical results:

- ``grade_isolated``: one whole ``pytest.main`` session per submission (about a second more).
- ``Grader``: a long-lived session for one lab that collects the hidden suite once and runs it
  again for each submission; the reference's and the mutants' values are memoised across
  submissions (``grading/memo.py``), and kept on disk for the next grading process of the same
  lab version (``grading/reference_cache.py``).

``grade()`` uses a ``Grader`` kept per lab, device, isolation and course, rebuilt when the lab's
content digest changes. A failure of trusted code never scores the student: the result's status
is ``grader_error``, the student reads ``GraderError.STUDENT_MESSAGE`` and the instructor the
details in ``grader_detail``.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rnngrade.errors import GraderError, SandboxError
from rnngrade.grading.budget import WALL_FACTOR, Budget, BudgetedRunner
from rnngrade.grading.collector import OutcomeCollector
from rnngrade.grading.devices import DEVICES, resolve_device
from rnngrade.grading.lab_assets import LabAssets, lab_digest, load_lab_assets
from rnngrade.grading.memo import DiskScope, ExpectationMemo
from rnngrade.grading.rubric import Rubric, load_rubric
from rnngrade.grading.scoring import (
    build_results,
    grader_failed,
    not_graded,
    now,
    summarise_test,
)
from rnngrade.grading.session import ReusableSession, run_fresh
from rnngrade.harness.runner.base import StudentRunner
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.harness.source.module_builder import Salvaged, salvage
from rnngrade.lab_helpers import LabHelpers
from rnngrade.labs import Lab, get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import BUDGET_MESSAGE, GradeResult
from rnngrade.submission.load import LoadedSubmission, SubmissionError, load_submission
from rnngrade.submission.source_notes import source_notes
from rnngrade.submission.worker_notes import split_worker_notes

__all__ = ["DEVICES", "Grader", "close_shared_graders", "grade",
           "grade_isolated", "make_runner", "not_graded", "resolve_device", "shared_grader",
           "summarise_test", "suite_args"]

# Plugins a hidden suite has no use for; each would otherwise wrap every phase of every test.
# (Capture stays, at the level of sys.stdout: the student's output never reaches the grader's
# descriptors, it is captured per call by the runner.)
_IDLE_PLUGINS = ("cacheprovider", "randomly", "logging", "timeout", "benchmark",
                 "hypothesispytest", "junitxml", "doctest", "pastebin", "stepwise",
                 "faulthandler", "subtests")


def suite_args(lab: Lab, outcome: bool = True) -> list[str]:
    """The pytest command line that runs ``lab``'s hidden suite (``outcome``: with the tests
    graded by outcome; without, they are listed as not run)."""
    root = course_root()
    blocked = [arg for name in _IDLE_PLUGINS for arg in ("-p", f"no:{name}")]
    return [str(lab.suite_dir(root)), *blocked, "--capture=sys", "--import-mode=importlib",
            "--rootdir", str(root), "-o", "addopts=", "-q", "--tb=short", "-W", "ignore",
            *([] if outcome else ["--no-outcome"])]


def make_runner(loaded: LoadedSubmission, device: str, inprocess: bool,
                lab: Lab | None = None, helpers: LabHelpers | None = None,
                salvaged: Salvaged | None = None) -> StudentRunner:
    """The runner for one submission: ``helpers`` are the lab's (``LabAssets.helpers``);
    ``salvaged``: its source's ``salvage``, when the caller has it (in-process, not parsed
    again)."""
    helpers = helpers or LabHelpers("", "")
    if inprocess:
        return InProcessRunner.from_source(loaded.source, loaded.filename,
                                           helpers=helpers.registry, salvaged=salvaged)
    from rnngrade.sandbox import SandboxRunner, SandboxUnavailable

    try:
        return SandboxRunner(loaded.source, loaded.filename, device=device,
                             limits=lab.limits if lab is not None else None,
                             helpers=helpers.source)
    except SandboxUnavailable as exc:  # the machine's problem, not the submission's
        raise SandboxError(f"{exc}\nOn a machine without the sandbox, grade only code you "
                           "trust, with --inprocess.") from None


@dataclass
class _Run:
    """What running the suite on one submission produced."""

    collector: OutcomeCollector
    notes: list[str]  # the grader's own
    student_notes: list[str]  # the worker's, written after student code ran
    protections: dict[str, bool]
    missing: list[str]


def _run_submission(loaded: LoadedSubmission, assets: LabAssets, device: str, inprocess: bool,
                    budget: Budget, collect: Callable[[ModuleProxy], OutcomeCollector]) -> _Run:
    lab = assets.lab
    salvaged = _salvaged(loaded.source)
    parse_notes = [] if salvaged is None else list(salvaged.notes)
    runner = make_runner(loaded, device, inprocess, lab, assets.helpers, salvaged)
    limits = getattr(runner, "limits", None) or lab.limits
    try:
        with budget.active():
            collector = collect(ModuleProxy(BudgetedRunner(runner, budget, limits.call_seconds)))
        own_notes = [] if salvaged is None else source_notes(loaded.source, lab, assets.facts,
                                                             salvaged=salvaged)
        # the worker's notes were written after student code ran: the grader keeps the ones
        # it can write anew from their facts, the rest is quoted as the code's own output
        loading, student_notes = split_worker_notes(
            [n for n in runner.load_notes() if n not in parse_notes])
        notes = (list(loaded.notes) + parse_notes + own_notes + loading
                 + list(collector.notes))
        protections = runner.protections()
        missing = [f for f in lab.functions if not _has(runner, f)]
    finally:
        runner.close()
    return _Run(collector, notes, student_notes, protections, missing)


def _salvaged(source: str) -> Salvaged | None:
    """The part of ``source`` that parses, with the grader's own notes on the lines that do not
    (parsing runs no student code); None: the parser gave up."""
    try:
        return salvage(source)
    except Exception:  # noqa: BLE001 - a parser limit: the worker reports the failure itself
        return None


def _grade_one(submission: Path, assets: LabAssets, device: str, inprocess: bool,
               budget_seconds: float | None,
               collect: Callable[[ModuleProxy], OutcomeCollector]) -> GradeResult:
    """Grade one submission; a grader fault becomes a ``grader_error`` result, never a score.
    The assets' warnings for the instructor go with it (``grader_notes``)."""
    result = _graded(submission, assets, device, inprocess, budget_seconds, collect)
    result.grader_notes = [*result.grader_notes, *assets.warnings]
    return result


def _graded(submission: Path, assets: LabAssets, device: str, inprocess: bool,
            budget_seconds: float | None,
            collect: Callable[[ModuleProxy], OutcomeCollector]) -> GradeResult:
    lab, rubric = assets.lab, assets.rubric
    started = time.perf_counter()
    budget = Budget(budget_seconds if budget_seconds is not None else lab.budget_seconds)
    graded_at = now()

    def seconds() -> float:
        return round(time.perf_counter() - started, 3)

    try:
        loaded = load_submission(submission, lab)
    except SubmissionError as exc:
        return not_graded(lab, rubric, submission.name, device, str(exc), seconds(), graded_at,
                          grader_version=assets.version)
    except Exception as exc:  # noqa: BLE001 - whatever a submission makes the loader do is its own
        return not_graded(lab, rubric, submission.name, device,
                          f"the submission could not be read ({type(exc).__name__})", seconds(),
                          graded_at, grader_version=assets.version, detail=describe_fault(exc))
    try:
        run = _run_submission(loaded, assets, device, inprocess, budget, collect)
        collector = run.collector
        if collector.faults:
            raise GraderError("trusted code failed while grading:\n" + "\n".join(
                collector.faults)[-8000:])
        tests = build_results(rubric, collector.items, collector.cases, collector.checks,
                              collector.figures, collector.measurements, lab.structure)
    except Exception as exc:  # noqa: BLE001 - loading worked: whatever fails now is the grader's
        return grader_failed(lab, rubric, submission.name, device, describe_fault(exc),
                             seconds(), assets.version)
    notes = run.notes
    if run.missing:
        notes.append("missing function(s): " + ", ".join(run.missing) + " — their tests score 0")
    if budget.spent:
        notes.append(f"{BUDGET_MESSAGE} ({budget.seconds:g} s of CPU time, or "
                     f"{WALL_FACTOR * budget.seconds:g} s waiting while it slept or blocked): "
                     "the tests after that were not run and score 0")
    return GradeResult(
        lab=lab.name, lab_title=lab.title, submission=submission.name,
        score=round(sum(t.score for t in tests), 4), max_score=sum(t.max_score for t in tests),
        execution_time=seconds(), tests=tests, device=device, notes=notes,
        student_notes=run.student_notes, protections=run.protections,
        grader_version=assets.version, graded_at=graded_at, timings=budget.timings())


def describe_fault(exc: BaseException) -> str:
    """What an instructor reads about a grader fault: the message, with the traceback for an
    unexpected one (a GraderError's own message says what to fix)."""
    if isinstance(exc, GraderError):
        return str(exc)
    return "".join(traceback.format_exception(exc))[-8000:]


def grade(submission: Path | str, lab_name: str, *, device: str = "auto",
          inprocess: bool = False, budget: float | None = None,
          outcome: bool = True) -> GradeResult:
    """Grade ``submission`` for ``lab_name`` within ``budget`` seconds (default: the lab's).

    Raises UsageError for bad arguments (UnknownLabError, an unknown device). Every other
    problem ends up in the result: the submission's (status ``load_error``) or the grader's
    (status ``grader_error``, details in ``grader_detail``)."""
    submission = Path(submission)
    lab = get_lab(lab_name)
    try:
        grader = shared_grader(lab.name, device=device, inprocess=inprocess, outcome=outcome)
    except GraderError as exc:
        return grader_failed(lab, _rubric_or_none(lab), submission.name, device,
                             describe_fault(exc))
    return grader.grade(submission, budget=budget)


def _rubric_or_none(lab: Lab) -> Rubric | None:
    """The lab's rubric when it loads (to list the tests of a result that was not graded)."""
    try:
        return load_rubric(lab.rubric_path())
    except GraderError:
        return None


def _usable_device(device: str, inprocess: bool, lab: Lab) -> str:
    """``resolve_device``, and for sandboxed CUDA grading the check that a jailed worker under
    the lab's limits can use the GPU libraries (``sandbox/cuda_check.py``)."""
    device = resolve_device(device)
    if device == "cuda" and not inprocess:
        from rnngrade.sandbox.cuda_check import check_cuda_workers

        check_cuda_workers(lab.limits)
    return device


def grade_isolated(submission: Path | str, lab_name: str, *, device: str = "auto",
                   inprocess: bool = False, budget: float | None = None,
                   outcome: bool = True) -> GradeResult:
    """Like ``grade()``, in a fresh pytest session of its own (slow; the reference path).
    Raises a GraderError when the lab's assets do not load."""
    submission = Path(submission)
    assets = load_lab_assets(lab_name)
    device = _usable_device(device, inprocess, assets.lab)
    what = f"the {assets.lab.name} hidden suite"

    def collect(student: ModuleProxy) -> OutcomeCollector:
        collector = OutcomeCollector(student, device, assets)
        run_fresh(suite_args(assets.lab, outcome), [collector], collector.log, what)
        if not collector.items:
            raise GraderError(f"{what} collected nothing:\n" + collector.log.getvalue()[-3000:])
        return collector

    return _grade_one(submission, assets, device, inprocess, budget, collect)


class Grader:
    """A long-lived grader for one lab: collects the hidden suite once, then grades submission
    after submission in the same pytest session (see the module docstring).

    Raises a GraderError when the lab's assets do not load or its suite does not collect or
    does not match the rubric. One submission at a time: ``grade`` holds a lock."""

    def __init__(self, lab_name: str, *, device: str = "auto", inprocess: bool = False,
                 memo: ExpectationMemo | None = None, outcome: bool = True) -> None:
        self.assets = load_lab_assets(lab_name)
        self.lab = self.assets.lab
        self.rubric = self.assets.rubric
        self.device = _usable_device(device, inprocess, self.lab)
        self.inprocess = inprocess
        self.memo = memo if memo is not None else ExpectationMemo(
            disk=DiskScope(self.lab.name, self.assets.digest, self.device))
        self.collector = OutcomeCollector(None, self.device, self.assets, memo=self.memo)
        self.graded = 0
        self._lock = threading.Lock()
        self._session = ReusableSession(suite_args(self.lab, outcome), [self.collector],
                                        f"the {self.lab.name} hidden suite")
        if not self.collector.items:
            self.close()
            raise GraderError(f"the {self.lab.name} hidden suite collected nothing")
        try:
            self.rubric.check_matches(self.collector.places)
        except GraderError:
            self.close()
            raise

    @property
    def digest(self) -> str:
        return self.assets.digest

    @property
    def closed(self) -> bool:
        return self._session.closed

    def grade(self, submission: Path, *, budget: float | None = None) -> GradeResult:
        """Grade one submission (the same result as ``grade_isolated``)."""
        with self._lock:
            if self.closed:
                raise GraderError(f"this {self.lab.name} grader is closed")
            self.graded += 1
            return _grade_one(submission, self.assets, self.device, self.inprocess, budget,
                              self._run)

    def _run(self, student: ModuleProxy) -> OutcomeCollector:
        collector = self.collector
        collector.begin(student)
        try:
            self._session.run(collector.log)
        finally:
            collector.student = None
        return collector

    def close(self) -> None:
        """End the pytest session (idempotent)."""
        self._session.close()

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SHARED: dict[tuple, Grader] = {}  # graders, not course data: each holds its own LabAssets
_SHARED_LOCK = threading.Lock()


def shared_grader(lab_name: str, *, device: str = "auto", inprocess: bool = False,
                  outcome: bool = True) -> Grader:
    """This process's ``Grader`` for a lab, device and isolation; rebuilt when the lab's content
    digest changes (an edited suite, rubric, mutant or reference) or the previous one broke."""
    lab = get_lab(lab_name)
    resolved = resolve_device(device)
    key = (lab.name, resolved, inprocess, str(course_root()), outcome)
    digest = lab_digest(lab.name)
    with _SHARED_LOCK:
        grader = _SHARED.get(key)
        if grader is not None and (grader.closed or grader.digest != digest):
            grader.close()
            del _SHARED[key]
            grader = None
        if grader is None:
            if not inprocess:  # the sandbox's zygote starts while the suite is collected
                start_sandbox_soon(lab.worker_imports)
            grader = Grader(lab.name, device=resolved, inprocess=inprocess, outcome=outcome)
            _SHARED[key] = grader
        return grader


def close_shared_graders() -> None:
    """Close every cached grader of this process."""
    with _SHARED_LOCK:
        for grader in _SHARED.values():
            grader.close()
        _SHARED.clear()


def start_sandbox_soon(imports: tuple[str, ...] = ()) -> None:
    """Start the sandbox's fork server in the background, with ``imports`` (a lab's
    ``worker_imports``) for its workers (nothing where there is no sandbox: the first runner
    then says why)."""
    try:
        from rnngrade.sandbox.zygote.client import start_soon
    except ImportError:  # pragma: no cover - a platform without the sandbox's modules
        return
    start_soon(imports)


def _has(runner: StudentRunner, function: str) -> bool:
    try:
        return runner.has_function(function)
    except Exception:  # noqa: BLE001 - a closed or broken runner: report nothing
        return True

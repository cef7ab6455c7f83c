"""``rnngrade batch``: grade every student's entry into a gradebook, resumably.

The coordinator (this process) discovers the entries, hashes them, skips those whose current
result has the same content hash, grader version and settings, and hands the rest to an executor
(local processes or Dask). As each outcome arrives it writes the student's reports
(``OUT/labN/students/<id>/``, each file atomically) and then commits the result in one
transaction; at the end it exports the lab's ``grades.csv`` and ``summary.html`` into ``OUT/labN/``
and rebuilds the course-wide ``OUT/grades.csv`` (see ``export``: one gradebook and one folder per
lab, so batching another lab into the same ``OUT`` replaces nothing of the first). A run killed
at any point resumes where it stopped: committed results are skipped, and reports missing for
them are rewritten from the gradebook.

What a worker returns is untrusted: it is cleaned once, as it arrives (``_recorded``), and both
the gradebook row and the reports are made from that cleaned result. A result read back from the
gradebook is cleaned again on its way to a report: the file may come from another grader version.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import GraderError, UsageError
from rnngrade.gradebook.entries import Entry, EntryError, Payload, discover, read_entry
from rnngrade.gradebook.executors import (
    DaskExecutor,
    GraderBroken,
    GradingSpec,
    LocalPool,
    Task,
    default_workers,
    grader_version,
    start_early,
)
from rnngrade.gradebook.export import lab_folder, write_exports
from rnngrade.gradebook.messages import Graded, GraderFault, NotGraded, Outcome
from rnngrade.gradebook.roster import (
    MissingPolicy,
    Roster,
    match_key,
    save_roster,
    saved_roster,
    unknown_ids,
    zero_for_missing,
)
from rnngrade.gradebook.store import (
    FILENAME,
    GRADED,
    GRADER_ERROR,
    RETRIED,
    Current,
    Gradebook,
    Recorded,
)
from rnngrade.grading.devices import resolve_device
from rnngrade.grading.rubric import Rubric, load_rubric
from rnngrade.grading.scoring import grader_failed, not_graded
from rnngrade.labs import Lab, get_lab
from rnngrade.results.model import EntryStatus, GradeResult, Status
from rnngrade.results.render import write_reports
from rnngrade.results.sanitize import Cleaned, clean, clean_name, clean_text

DEFAULT_TIMEOUT = 900.0  # seconds for one whole submission (the sandbox limits every call)
REPORTS = ("results.json", "feedback.html", "feedback.md")
NO_OUTCOME = ", outcome tests off"  # added to a result's isolation when graded with --no-outcome


class BatchError(UsageError):
    """The batch cannot run (bad arguments, a locked gradebook)."""


class GraderFailure(GraderError):
    """The grader itself cannot grade (a broken suite or rubric, an unusable device)."""


@dataclass
class BatchOptions:
    lab: str
    out: Path
    jobs: int | None = None  # local worker processes (default: one per CPU)
    executor: str = "local"  # local | dask
    scheduler: str | None = None  # Dask scheduler address
    regrade: bool = False
    device: str = "auto"
    inprocess: bool = False
    timeout: float | None = DEFAULT_TIMEOUT
    budget: float | None = None  # seconds of student code per submission (None: the lab's)
    only: list[str] | None = None  # regrade just these students (the others are left alone)
    drop_overrides: bool = False  # regraded students lose the staff's overrides
    roster: Roster | None = None  # None: the roster an earlier batch kept in ``out``, if any
    missing: MissingPolicy = zero_for_missing  # how a roster student without an entry counts
    outcome: bool = True  # False: tests graded by outcome are listed as not run (--no-outcome)


@dataclass
class Row:
    """One student's line in the final table."""

    student: str
    status: str
    score: float
    max_score: float
    seconds: float
    note: str
    skipped: bool = False


@dataclass
class BatchReport:
    lab: str
    out: Path  # the lab's folder: OUT/labN
    gradebook: Path
    files: dict[str, Path] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    graded: int = 0
    skipped: int = 0
    errors: int = 0
    grader_errors: int = 0  # students not graded because trusted code failed on them
    dropped_overrides: int = 0
    seconds: float = 0.0
    workers: int = 0
    executor: str = "local"
    status: str = "running"
    first_result: float = 0.0  # perf_counter() of the first and last outcome
    last_result: float = 0.0
    roster: int = 0  # students on the roster (0: none)
    missing: list[str] = field(default_factory=list)  # roster students without an entry
    not_in_roster: list[str] = field(default_factory=list)  # entries the roster does not list

    @property
    def rate(self) -> float:
        """Submissions per second, start-up included."""
        return self.graded / self.seconds if self.seconds > 0 else 0.0

    @property
    def steady_rate(self) -> float:
        """Submissions per second once the workers were up (first result to last)."""
        span = self.last_result - self.first_result
        return (self.graded - 1) / span if self.graded > 2 and span > 0 else 0.0


class ProgressHook:
    """What the batch tells a progress display (the default shows nothing)."""

    def start(self, total: int, skipped: int) -> None: ...

    def advance(self, student: str, status: str) -> None: ...

    def stop(self) -> None: ...


class BatchLock:
    """An exclusive lock on a batch's output folder, held by whatever writes its gradebook or
    exports (a batch, an override, a similarity link); the kernel releases it if we are
    killed."""

    def __init__(self, out: Path) -> None:
        self.fd = os.open(out / ".rnngrade-batch.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise BatchError(f"another `rnngrade batch` is writing {out}") from None

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def unchanged(current: Current | None, sha256: str, version: str, device: str,
              isolation: str) -> bool:
    """Whether a student's current result still stands for this content and grader (results
    the grader could not finish are retried)."""
    return (current is not None and current.sha256 == sha256
            and current.grader_version == version and current.device == device
            and current.isolation == isolation and current.status not in RETRIED)


def note(result: GradeResult) -> str:
    """A short line about a result for the final table: why it was not graded, or the known
    mistakes diagnosed in it, or how many tests lost points."""
    if result.status == Status.GRADER_ERROR:
        return "not graded: grader error (see its results.json); graded again next run"
    if result.error:
        return result.error.splitlines()[0][:160]
    known = [d.name for t in result.tests for d in t.diagnosis if d.is_known_mistake]
    if known:
        return "diagnosed: " + ", ".join(dict.fromkeys(known))
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    return f"{len(failing)} test(s) lost points" if failing else ""


def _check(sources: list[Path], options: BatchOptions) -> tuple[Lab, Rubric, str]:
    lab = get_lab(options.lab)
    for source in sources:
        if not source.is_dir():
            raise BatchError(f"{source} is not a folder of submissions")
    rubric_path = lab.rubric_path()
    if not rubric_path.exists():
        raise BatchError(f"{lab.name} has no hidden suite yet ({rubric_path} is missing)")
    try:
        rubric = load_rubric(rubric_path)
        device = resolve_device(options.device)
    except GraderError as exc:
        raise GraderFailure(str(exc)) from exc
    if options.executor not in ("local", "dask"):
        raise BatchError(f"unknown executor {options.executor!r}; choose local or dask")
    if options.executor == "dask" and not options.scheduler:
        raise BatchError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    if not options.inprocess and importlib.util.find_spec("rnngrade.sandbox") is None:
        raise BatchError("the sandbox (rnngrade.sandbox) is not available in this checkout; "
                         "--inprocess grades without it (no protection from student code)")
    return lab, rubric, device


def _isolation(options: BatchOptions) -> str:
    """How results are graded, as recorded with each one: a later batch with other settings
    grades the submission again (so does switching outcome tests back on)."""
    isolation = "inprocess" if options.inprocess else "sandbox"
    return isolation + ("" if options.outcome else NO_OUTCOME)


@dataclass
class BatchPlan:
    """What a batch will do, checked before anything is locked or graded."""

    sources: list[Path]
    options: BatchOptions
    lab: Lab
    rubric: Rubric
    device: str
    entries: list[Entry]
    isolation: str
    version: str
    spec: GradingSpec


@dataclass
class BatchRun:
    """A batch under way: the locked output folder, its gradebook and the report so far.
    ``warnings`` (about the submission times) go into the summary the run ends with."""

    plan: BatchPlan
    book: Gradebook
    report: BatchReport
    progress: ProgressHook
    roster: Roster | None
    started: float
    run_id: int = 0
    regraded: list[str] = field(default_factory=list)  # the students this run sent to grading
    warnings: list[str] = field(default_factory=list)

    @property
    def folder_of(self) -> Callable[[str], Path]:
        """Where a student's reports go."""
        return lambda student: self.report.out / "students" / student


def run_batch(sources: list[Path], options: BatchOptions,
              progress: ProgressHook | None = None) -> BatchReport:
    """Grade every entry of the folders ``sources`` into ``options.out`` (see the module doc):
    ``plan_batch``, then ``grade_batch`` inside ``open_batch``, which finishes the run (the
    exports) however grading ends. Raises UnknownLabError or BatchError; problems of single
    submissions end up in the gradebook."""
    plan = plan_batch(sources, options)
    with open_batch(plan, progress) as run:
        grade_batch(run)
    return run.report


def plan_batch(sources: list[Path], options: BatchOptions) -> BatchPlan:
    """Check the arguments and find the entries (BatchError when something is wrong)."""
    lab, rubric, device = _check(sources, options)
    options.out.mkdir(parents=True, exist_ok=True)
    entries = _entries(sources, options.out, options.only)
    spec = GradingSpec(lab.name, device, options.inprocess, options.budget, options.outcome)
    return BatchPlan(sources, options, lab, rubric, device, entries, _isolation(options),
                     grader_version(lab.name), spec)


@contextmanager
def open_batch(plan: BatchPlan, progress: ProgressHook | None = None) -> Iterator[BatchRun]:
    """Lock the output folder and open its gradebook for ``plan``; on the way out, however the
    body ends, record the run, write the exports and let go of the folder."""
    options = plan.options
    if options.executor == "local":
        start_early(plan.spec)  # the workers' fork server and zygote, while the entries are read
    roster = options.roster if options.roster is not None else saved_roster(options.out)
    lock = BatchLock(options.out)
    book = Gradebook(options.out / FILENAME)
    run = BatchRun(plan, book, BatchReport(plan.lab.name, lab_folder(options.out, plan.lab.name),
                                           book.path, executor=options.executor),
                   progress or ProgressHook(), roster, time.perf_counter())
    try:
        if options.roster is not None:
            save_roster(options.roster, options.out)
        yield run
        run.report.status = "finished"
    except GraderBroken as exc:
        run.report.status = "failed"
        raise GraderFailure(str(exc)) from exc
    finally:
        try:
            _finish(run)
        finally:
            book.close()
            lock.release()
    run.report.rows.sort(key=lambda r: r.student)


def grade_batch(run: BatchRun) -> None:
    """Grade what changed since the last run, record each result as it arrives and drop the
    overrides of the regraded students when asked."""
    plan, book, report = run.plan, run.book, run.report
    options, lab = plan.options, plan.lab
    current = book.current(lab.name)
    todo: list[tuple[Entry, str]] = []  # entry, read error ("" if readable)
    for entry in plan.entries:
        try:
            sha, error = read_entry(entry).sha256, ""
        except EntryError as exc:
            sha, error = "", str(exc)
        known = current.get(entry.student)
        if options.regrade or options.only or not sha or not unchanged(
                known, sha, plan.version, plan.device, plan.isolation):
            todo.append((entry, error))
            continue
        assert known is not None
        result = book.load_result(known.result_id)
        reports = run.folder_of(entry.student)
        failed = ""
        if not all((reports / name).exists() for name in REPORTS):
            # killed between commit and reports; what the file gives back is cleaned again
            failed = _write_reports(result, reports)
        report.skipped += 1
        report.rows.append(Row(entry.student, known.status, result.score, result.max_score,
                               result.execution_time, failed or note(result), skipped=True))
    readable = sum(1 for _, error in todo if not error)
    report.workers = max(1, min(options.jobs or default_workers(), readable or 1))
    executor: LocalPool | DaskExecutor
    if options.executor == "dask":
        executor = DaskExecutor(plan.spec, options.scheduler or "", expected_version=plan.version)
    else:
        executor = LocalPool(plan.spec, report.workers, timeout=options.timeout)
    run.run_id = book.start_run(lab.name, plan.version, plan.device, plan.isolation,
                                options.executor, report.workers,
                                ", ".join(str(s) for s in plan.sources))
    run.progress.start(len(todo), report.skipped)
    report.status = "interrupted"
    outcomes = _grade_all(todo, executor)
    try:
        for entry, payload, outcome in outcomes:
            _record(run, entry, payload, outcome)
    finally:
        outcomes.close()  # stops the workers now, even on an exception
    if isinstance(executor, DaskExecutor):
        report.workers = executor.workers
    run.regraded = [entry.student for entry, _ in todo]
    report.dropped_overrides = book.drop_overrides(
        lab.name, run.regraded if options.drop_overrides else [])


def _record(run: BatchRun, entry: Entry, payload: Payload | None, outcome: Outcome) -> None:
    """Write one student's reports and commit the result; a fault while writing the reports is
    the grader's: recorded as not graded (the next run retries it), and the batch goes on."""
    plan, report = run.plan, run.report
    item, cleaned = _recorded(entry, payload, outcome, plan.lab, plan.rubric, plan.device)
    failed = _write_reports(cleaned, run.folder_of(entry.student))
    if failed:
        item, cleaned = _recorded(entry, payload, GraderFault(failed, item.worker),
                                  plan.lab, plan.rubric, plan.device)
        _write_reports(cleaned, run.folder_of(entry.student))
    run.book.record(run.run_id, item, plan.version, plan.isolation)
    report.graded += 1
    report.errors += item.status != GRADED
    report.grader_errors += item.status == GRADER_ERROR
    report.rows.append(Row(entry.student, item.status, item.result.score, item.result.max_score,
                           item.result.execution_time, note(item.result)))
    report.last_result = time.perf_counter()
    report.first_result = report.first_result or report.last_result
    run.progress.advance(entry.student, item.status)


def _finish(run: BatchRun) -> None:
    """Record how the run ended, then write the lab's exports and compare with the roster."""
    report, plan = run.report, run.plan
    report.seconds = time.perf_counter() - run.started
    run.progress.stop()
    if run.run_id:
        run.book.finish_run(run.run_id, report.status, report.graded, report.skipped,
                            report.errors, report.seconds, report.workers)
    report.files = write_exports(run.book, plan.lab.name, plan.options.out, run.roster,
                                 plan.options.missing, run.warnings)
    if run.roster is not None:
        _roster_report(report, run.roster, list(run.book.current(plan.lab.name)))


def _entries(sources: list[Path], out: Path, only: list[str] | None) -> list[Entry]:
    """The entries of ``sources``; with ``only``, those of the students it names (every name
    must be found)."""
    try:
        entries = discover(sources, exclude=out)
    except EntryError as exc:
        raise BatchError(str(exc)) from exc
    if only is None:
        return entries
    by_id = {entry.student: entry for entry in entries}
    unknown = [name for name in only if name not in by_id]
    if unknown:
        raise BatchError(f"--only: no submission for {', '.join(map(clean_name, unknown))} "
                         "in the submissions folder(s)")
    return [by_id[name] for name in dict.fromkeys(only)]


def _roster_report(report: BatchReport, roster: Roster, graded: list[str]) -> None:
    """Who the roster expects and did not get, and who it does not list."""
    present = {match_key(student) for student in graded}
    report.roster = len(roster)
    report.missing = sorted(s.id for s in roster.students if match_key(s.id) not in present)
    report.not_in_roster = unknown_ids(graded, roster)


def _grade_all(todo: list[tuple[Entry, str]], executor: LocalPool | DaskExecutor
               ) -> Generator[tuple[Entry, Payload | None, Outcome], None, None]:
    """Outcomes for every entry: unreadable ones at once, the others from the executor."""
    sent: dict[str, tuple[Entry, Payload]] = {}
    unreadable: list[tuple[Entry, str]] = [(e, error) for e, error in todo if error]
    readable = [e for e, error in todo if not error]

    def tasks() -> Iterator[Task]:
        for entry in readable:  # read again just before sending: the hash is of what is graded
            try:
                payload = read_entry(entry)
            except EntryError as exc:  # changed or vanished since the first pass
                unreadable.append((entry, str(exc)))
                continue
            sent[entry.student] = (entry, payload)
            yield entry.student, payload.to_wire()

    def flush() -> Iterator[tuple[Entry, Payload | None, Outcome]]:
        while unreadable:
            entry, error = unreadable.pop(0)
            yield entry, None, NotGraded(EntryStatus.LOAD_ERROR, error)

    yield from flush()
    if readable:
        outcomes = executor.run(tasks())
        try:
            for key, outcome in outcomes:
                entry, payload = sent.pop(key)
                yield entry, payload, outcome
                yield from flush()
        finally:
            outcomes.close()
    yield from flush()


def _write_reports(result: GradeResult | Cleaned, folder: Path) -> str:
    """Write one student's reports; "" when done, else why they could not be written (a fault
    of the grader or of the disk: it must not stop the other students' grading). A result that
    is not ``Cleaned`` (one loaded back from the gradebook) is cleaned on the way."""
    try:
        write_reports(result, folder)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded for this student alone
        return clean_text(f"the reports could not be written: {type(exc).__name__}: {exc}", 500)
    return ""


def _recorded(entry: Entry, payload: Payload | None, outcome: Outcome, lab: Lab,
              rubric: Rubric, device: str) -> tuple[Recorded, Cleaned]:
    """The gradebook record of one outcome (a GradeResult even when nothing could be graded),
    and its result marked as cleaned, for the reports."""
    sha = payload.sha256 if payload is not None else ""
    size = payload.size if payload is not None else 0
    status: EntryStatus
    if isinstance(outcome, Graded):
        result = GradeResult.from_dict(outcome.result)
        status = EntryStatus(result.status.value)
    elif isinstance(outcome, NotGraded):
        status = outcome.status
        message = ("not graded: the submission could not be loaded"
                   if status == EntryStatus.LOAD_ERROR
                   else "not graded: the grader could not finish this submission")
        result = not_graded(lab, rubric, entry.path.name, device, outcome.error, message=message)
    else:  # a grader fault (a Fatal outcome stops the batch before it is recorded)
        status = EntryStatus.GRADER_ERROR
        detail = outcome.detail if isinstance(outcome, GraderFault) else outcome.message
        result = grader_failed(lab, rubric, entry.path.name, device, detail)
    # the storage boundary: everything the submission controls is cleaned and bounded here, once
    cleaned = clean(result)
    return Recorded(entry.student, clean_name(entry.path.name), entry.kind, sha, size, status,
                    cleaned.result, outcome.worker), cleaned

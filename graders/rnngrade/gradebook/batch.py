"""``rnngrade batch``: grade every student's entry into a gradebook, resumably.

The coordinator (this process) discovers the entries, hashes them, skips those whose current
result has the same content hash, grader version and settings, and hands the rest to an executor
(local processes or Dask). As each outcome arrives it writes the student's reports
(``students/<id>/``) and then commits the result in one transaction; at the end it exports
``grades.csv`` and ``summary.html``. A run killed at any point resumes where it stopped: committed
results are skipped, reports missing for them are rewritten from the gradebook.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.gradebook.entries import Entry, EntryError, Payload, discover, read_entry
from rnngrade.gradebook.executors import (
    DaskExecutor,
    GraderBroken,
    GradingSpec,
    LocalPool,
    Task,
    default_workers,
    grader_version,
)
from rnngrade.gradebook.export import write_exports
from rnngrade.gradebook.store import (
    ERROR,
    FILENAME,
    GRADED,
    LOAD_ERROR,
    TIMEOUT,
    Current,
    Gradebook,
    Recorded,
)
from rnngrade.grading.engine import GradingError, not_graded, resolve_device
from rnngrade.grading.rubric import Rubric, RubricError, load_rubric
from rnngrade.labs import get_lab
from rnngrade.results.model import GradeResult
from rnngrade.results.render import write_reports

DEFAULT_TIMEOUT = 900.0  # seconds for one whole submission (the sandbox limits each call)


class BatchError(RuntimeError):
    """The batch cannot run (bad arguments, a locked gradebook, a broken grader)."""


@dataclass
class BatchOptions:
    lab: str
    out: Path
    jobs: int | None = None
    executor: str = "local"  # local | dask
    scheduler: str | None = None
    regrade: bool = False
    device: str = "auto"
    inprocess: bool = False
    timeout: float | None = DEFAULT_TIMEOUT


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
    out: Path
    gradebook: Path
    files: dict[str, Path]
    rows: list[Row] = field(default_factory=list)
    graded: int = 0
    skipped: int = 0
    errors: int = 0
    seconds: float = 0.0
    workers: int = 0
    executor: str = "local"

    @property
    def rate(self) -> float:
        return self.graded / self.seconds if self.seconds > 0 else 0.0


class _Lock:
    """An exclusive lock on the output folder (released by the kernel if we are killed)."""

    def __init__(self, out: Path) -> None:
        self.path = out / ".rnngrade-batch.lock"
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
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
    """Whether a student's current result still stands for this content and grader."""
    return (current is not None and current.sha256 == sha256
            and current.grader_version == version and current.device == device
            and current.isolation == isolation and current.status != ERROR)


def _note(result: GradeResult) -> str:
    if result.error:
        return result.error.splitlines()[0][:120]
    diagnoses = [d.split(":", 1)[0] for t in result.tests for d in t.diagnosis]
    if diagnoses:
        return "diagnosed: " + ", ".join(dict.fromkeys(diagnoses))
    failing = [t.name for t in result.tests if t.outcome not in ("passed", "skipped")]
    return f"{len(failing)} test(s) lost points" if failing else ""


def run_batch(sources: list[Path], options: BatchOptions,
              progress: ProgressHook | None = None) -> BatchReport:
    """Grade every entry of ``sources`` (folders) into ``options.out``; see the module doc."""
    lab = get_lab(options.lab)
    for source in sources:
        if not source.is_dir():
            raise BatchError(f"{source} is not a folder of submissions")
    rubric_path = lab.suite_dir() / "rubric.yaml"
    if not rubric_path.exists():
        raise BatchError(f"{lab.name} has no hidden suite yet ({rubric_path} is missing)")
    try:
        rubric = load_rubric(rubric_path)
        device = resolve_device(options.device)
    except (RubricError, GradingError) as exc:
        raise BatchError(str(exc)) from exc
    if options.executor not in ("local", "dask"):
        raise BatchError(f"unknown executor {options.executor!r}; choose local or dask")
    if options.executor == "dask" and not options.scheduler:
        raise BatchError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    out_resolved = out.resolve()
    try:
        entries = [e for e in discover(sources) if e.path.resolve() != out_resolved]
    except EntryError as exc:
        raise BatchError(str(exc)) from exc
    isolation = "inprocess" if options.inprocess else "sandbox"
    version = grader_version(lab.name)
    spec = GradingSpec(lab.name, device, options.inprocess)

    lock = _Lock(out)
    book = Gradebook(out / FILENAME)
    started = time.perf_counter()
    report = BatchReport(lab.name, out, book.path, {}, executor=options.executor)
    run_id = 0
    status = "failed"
    try:
        current = book.current(lab.name)
        todo: list[tuple[Entry, str | None, str]] = []  # entry, sha256 or None, read error
        for entry in entries:
            try:
                sha = read_entry(entry).sha256
                error = ""
            except EntryError as exc:
                sha, error = None, str(exc)
            known = current.get(entry.student)
            if not options.regrade and sha is not None and unchanged(known, sha, version,
                                                                     device, isolation):
                report.skipped += 1
                _ensure_reports(book, known, out, entry.student)
                result = book.load_result(known.result_id)
                report.rows.append(Row(entry.student, known.status, result.score,
                                       result.max_score, result.execution_time, _note(result),
                                       skipped=True))
            else:
                todo.append((entry, sha, error))
        jobs = options.jobs or default_workers()
        jobs = max(1, min(jobs, len(todo))) if todo else 0
        executor: LocalPool | DaskExecutor
        if options.executor == "dask":
            executor = DaskExecutor(spec, options.scheduler or "", expected_version=version)
        else:
            executor = LocalPool(spec, jobs, timeout=options.timeout)
        report.workers = jobs
        run_id = book.start_run(lab.name, version, device, isolation, options.executor, jobs,
                                ", ".join(str(s) for s in sources))
        if progress is not None:
            progress.start(len(todo), report.skipped)
        status = "interrupted"
        for entry, payload, outcome in _grade_all(todo, executor):
            item = _record(entry, payload, outcome, lab.name, rubric, device)
            write_reports(item.result, out / "students" / entry.student)
            book.record(run_id, item, version, isolation)
            report.graded += 1
            report.errors += item.status != GRADED
            report.rows.append(Row(entry.student, item.status, item.result.score,
                                   item.result.max_score, item.result.execution_time,
                                   _note(item.result)))
            if progress is not None:
                progress.advance(entry.student, item.status)
        if options.executor == "dask":
            report.workers = executor.workers
        status = "finished"
    except GraderBroken as exc:
        raise BatchError(f"the grader is broken: {exc}") from exc
    finally:
        report.seconds = time.perf_counter() - started
        if progress is not None:
            progress.stop()
        try:
            if run_id:
                book.finish_run(run_id, status, report.graded, report.skipped, report.errors,
                                report.seconds)
            report.files = write_exports(book, lab.name, out)
        finally:
            book.close()
            lock.release()
    report.rows.sort(key=lambda r: r.student)
    return report


def _grade_all(todo: list[tuple[Entry, str | None, str]], executor: LocalPool | DaskExecutor
               ) -> Iterator[tuple[Entry, Payload | None, dict]]:
    """Outcomes for every entry: unreadable ones at once, the others from the executor."""
    by_key: dict[str, tuple[Entry, Payload]] = {}
    readable = []
    for entry, sha, error in todo:
        if sha is None:
            yield entry, None, {"status": LOAD_ERROR, "error": error}
        else:
            readable.append(entry)

    def tasks() -> Iterator[Task]:
        for entry in readable:  # read again just before sending: the graded bytes are hashed
            try:
                payload = read_entry(entry)
            except EntryError as exc:
                by_key[entry.student] = (entry, Payload(entry.path.name, False))
                failures.append((entry, str(exc)))
                continue
            by_key[entry.student] = (entry, payload)
            yield entry.student, payload.to_wire()

    failures: list[tuple[Entry, str]] = []
    if readable:
        for key, outcome in executor.run(tasks()):
            entry, payload = by_key.pop(key)
            yield entry, payload, outcome
            while failures:
                failed, error = failures.pop()
                by_key.pop(failed.student, None)
                yield failed, None, {"status": LOAD_ERROR, "error": error}
    for failed, error in failures:
        yield failed, None, {"status": LOAD_ERROR, "error": error}


def _record(entry: Entry, payload: Payload | None, outcome: dict, lab: str, rubric: Rubric,
            device: str) -> Recorded:
    """The gradebook record of one outcome (a GradeResult even for grader failures)."""
    sha = payload.sha256 if payload is not None else ""
    size = payload.size if payload is not None else 0
    if "result" in outcome:
        result = GradeResult.from_dict(outcome["result"])
        status = GRADED if result.status == "graded" else LOAD_ERROR
    else:
        status = outcome.get("status", ERROR)
        result = not_graded(get_lab(lab), rubric, entry.path.name, device, outcome["error"])
    return Recorded(entry.student, entry.path.name, entry.kind, sha, size, status, result,
                    outcome.get("worker", ""))


def _ensure_reports(book: Gradebook, current: Current, out: Path, student: str) -> None:
    """A committed result whose reports are missing (killed between the two): write them."""
    folder = out / "students" / student
    if not all((folder / name).exists() for name in ("results.json", "feedback.html",
                                                      "feedback.md")):
        write_reports(book.load_result(current.result_id), folder)


class ProgressHook:
    """What the batch tells a progress display."""

    def start(self, total: int, skipped: int) -> None: ...

    def advance(self, student: str, status: str) -> None: ...

    def stop(self) -> None: ...


__all__ = ["BatchError", "BatchOptions", "BatchReport", "ProgressHook", "Row", "run_batch",
           "DEFAULT_TIMEOUT", "TIMEOUT"]

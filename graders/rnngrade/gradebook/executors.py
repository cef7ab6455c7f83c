"""Where submissions are graded: a local pool of grading processes, or a Dask cluster.

Both run the same function, ``grade_payload``, in long-lived processes that keep one ``Grader``
per lab (the hidden suite collected once, expected values memoised), and both only *return*
results: the coordinator alone writes the gradebook and the reports.

What a grading process returns for a submission is an outcome (``messages``: graded, not
graded, a grader fault, or fatal when the grader itself is broken: a bad suite or rubric, a
different grader version on a Dask worker; the batch then stops).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Generator, Hashable, Iterable, Iterator
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from rnngrade.errors import RnngradeError
from rnngrade.gradebook.messages import (
    Done,
    Fatal,
    Graded,
    GraderBroken,
    GraderFault,
    NotGraded,
    Outcome,
    Ready,
    decode,
    decode_outcome,
)
from rnngrade.results.model import EntryStatus
from rnngrade.sandbox.isolation import THREAD_VARIABLES

Task = tuple[str, dict]  # (key, Payload.to_wire())


@dataclass(frozen=True)
class GradingSpec:
    """What every worker needs to know to grade: lab, device, isolation."""

    lab: str
    device: str  # resolved: cpu | cuda
    inprocess: bool
    budget: float | None = None  # seconds for one whole submission (None: the lab's)
    outcome: bool = True  # False: the tests graded by outcome are listed as not run

    def to_wire(self) -> dict:
        return asdict(self)


def grader_version(lab_name: str) -> str:
    """The version a gradebook records: the package version and the digest of the lab's course
    files (``LabAssets``), read afresh. A result graded under another version is regraded."""
    from rnngrade.grading.lab_assets import grader_version_of, lab_digest

    return grader_version_of(lab_digest(lab_name))


# ---------------------------------------------------------------------- the worker side

_LOCK = threading.Lock()


def single_threaded() -> None:
    """One compute thread per grading process: the workers already use every core. (torch,
    when imported later, reads the thread count from the environment; importing it here would
    cost a lab without torch checks a second.)"""
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)


def grade_payload(spec: dict, payload: dict) -> Outcome:
    """Grade one shipped entry with this process's long-lived grader (runs on a worker)."""
    from rnngrade.gradebook.entries import EntryError, Payload, Workspace
    from rnngrade.grading.engine import shared_grader

    started, cpu = time.perf_counter(), time.process_time()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    with _LOCK:  # a Grader grades one submission at a time (Dask may run several threads)
        try:
            grader = shared_grader(spec["lab"], device=spec["device"],
                                   inprocess=spec["inprocess"],
                                   outcome=spec.get("outcome", True))
        except RnngradeError as exc:  # a broken grader or a spec this worker cannot serve
            return Fatal(f"{type(exc).__name__}: {exc}", worker)
        try:
            entry = Payload.from_wire(payload)
            with Workspace(entry) as path:
                result = grader.grade(path, budget=spec.get("budget"))
            result.notes[:0] = entry.notes  # what reading the entry left out
        except EntryError as exc:
            return NotGraded(EntryStatus.ERROR, str(exc), worker)
        except Exception as exc:  # noqa: BLE001 - one broken submission never stops a batch
            return GraderFault("".join(traceback.format_exception(exc))[-8000:], worker)
    return Graded(result.to_dict(), worker, result.grader_version,
                  round(time.perf_counter() - started, 4), round(time.process_time() - cpu, 4))


def _worker_main(conn: Connection, spec: dict,
                 zygote: tuple[socket.socket, int] | None = None) -> None:
    """A local grading process: build the grader, then grade what the coordinator sends.
    ``zygote``: the clone of the coordinator's zygote this process's sandbox uses (None: it
    starts one of its own)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business
    single_threaded()
    if zygote is not None:
        from rnngrade.sandbox.zygote.client import adopt

        adopt(*zygote)
    from rnngrade.grading.engine import shared_grader

    try:
        shared_grader(spec["lab"], device=spec["device"], inprocess=spec["inprocess"],
                      outcome=spec.get("outcome", True))
    except RnngradeError as exc:
        conn.send(Fatal(f"{type(exc).__name__}: {exc}"))
        return
    gc.freeze()  # torch, pytest and the collected suite live as long as the process
    conn.send(Ready(os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        key, payload = message
        conn.send(Done(key, grade_payload(spec, payload)))


# ---------------------------------------------------------------------- the local pool


@contextlib.contextmanager
def _child_environment() -> Iterator[None]:
    """Environment variables the spawned workers inherit (thread counts), restored after."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _context(uses_torch: bool = False) -> Any:
    """Workers fork from a server that has imported the engine once, and torch for a lab with
    torch checks (a fresh worker then starts in a fraction of a second); spawn where there is
    no fork server. The server is the same for every pool of this process: its first start
    decides what it imports."""
    try:
        ctx = multiprocessing.get_context("forkserver")
    except ValueError:
        return multiprocessing.get_context("spawn")
    ctx.set_forkserver_preload(["rnngrade.grading.engine", "rnngrade.gradebook.executors",
                                *(["torch"] if uses_torch else [])])
    return ctx


def start_early(spec: GradingSpec) -> None:
    """Start now what a local pool for ``spec`` will need (the fork server of its workers, and
    for a sandboxed batch this process's zygote, which each worker's zygote is forked from), so
    that they import torch and the grader while the batch reads its entries. Starting nothing
    is harmless: the pool starts them itself when it needs them. (Nothing for a lab that does
    not exist: the batch will refuse it.)"""
    from rnngrade.labs import get_lab

    try:
        lab = get_lab(spec.lab)
    except RnngradeError:
        return
    uses_torch = lab.uses_torch
    with contextlib.suppress(Exception):
        ctx = _context(uses_torch)
        if ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            with _child_environment():  # the server's environment is every worker's
                forkserver.ensure_running()
    _coordinator_zygote(spec.to_wire(), start=True, imports=lab.worker_imports)


class _Slot:
    """One worker process and the task it is grading."""

    def __init__(self, ctx: Any, spec: dict, zygote: Any = None) -> None:
        parent, child = ctx.Pipe()
        clone = _clone(zygote)
        try:
            with _child_environment():
                self.process = ctx.Process(target=_worker_main, args=(child, spec, clone),
                                           name="rnngrade-grader", daemon=True)
                self.process.start()
        finally:
            child.close()
            if clone is not None:
                clone[0].close()  # the worker's now
        self.conn: Connection = parent
        self.ready = False
        self.task: Task | None = None
        self.since = time.monotonic()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(None)
        self.process.join(10)
        if self.process.is_alive():
            self.kill()
        self.conn.close()


def _clone(zygote: Any) -> tuple[socket.socket, int] | None:
    """A clone of the coordinator's zygote for a new worker (None: the worker starts its own,
    and reports why it cannot if that fails too)."""
    if zygote is None:
        return None
    try:
        return zygote.clone()
    except Exception:  # noqa: BLE001 - only an optimisation; the worker's own start says why
        return None


def _coordinator_zygote(spec: dict, start: bool = False, imports: tuple[str, ...] = ()) -> Any:
    """This process's zygote, whose clones the workers of a sandboxed batch use (None when
    there is none to be had: each worker then starts its own). With ``start``, only start it
    in the background (``start_soon``, with the lab's ``worker_imports``) and return None."""
    if spec["inprocess"]:
        return None
    try:
        from rnngrade.sandbox.zygote.client import shared_client, start_soon

        if start:
            start_soon(imports)
            return None
        return shared_client()
    except Exception:  # noqa: BLE001 - only an optimisation (see _clone)
        return None


class LocalPool:
    """``workers`` grading processes on this machine (one compute thread each).

    A worker that dies fails only its current submission and is replaced; a submission that
    runs past ``timeout`` seconds has its worker killed and is recorded as a timeout."""

    name = "local"

    def __init__(self, spec: GradingSpec, workers: int, timeout: float | None = None,
                 start_timeout: float = 300.0) -> None:
        self.spec = spec.to_wire()
        self.workers = max(1, workers)
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._ctx = _context(_uses_torch(spec.lab))
        self._slots: list[_Slot] = []
        self._failed_starts = 0
        self._zygote: Any = _coordinator_zygote(self.spec, start=True)  # None until run()

    def run(self, tasks: Iterable[Task]) -> Generator[tuple[str, Outcome], None, None]:
        """Grade ``tasks`` (pulled lazily); yield ``(key, outcome)`` as they finish."""
        pending = iter(tasks)
        exhausted = False
        try:
            self._zygote = _coordinator_zygote(self.spec)
            self._slots = [_Slot(self._ctx, self.spec, self._zygote)
                           for _ in range(self.workers)]
            while True:
                for slot in self._slots:
                    if slot.ready and slot.task is None and not exhausted:
                        task = next(pending, None)
                        if task is None:
                            exhausted = True
                        else:
                            slot.task, slot.since = task, time.monotonic()
                            slot.conn.send(task)
                if exhausted and all(s.task is None for s in self._slots):
                    return
                yield from self._wait()
        finally:
            self.close()

    def _wait(self) -> Generator[tuple[str, Outcome], None, None]:
        waitables: list[Any] = []
        for slot in self._slots:
            waitables += [slot.conn, slot.process.sentinel]
        ready = wait(waitables, timeout=1.0)
        for i, slot in enumerate(list(self._slots)):
            message = None
            if slot.conn in ready:
                try:
                    message = slot.conn.recv()
                except (EOFError, OSError):
                    message = None
            if message is not None:
                received = decode(message)
                if isinstance(received, Ready):
                    slot.ready, slot.since, self._failed_starts = True, time.monotonic(), 0
                elif isinstance(received, Fatal):
                    raise GraderBroken(received.message)
                else:
                    slot.task = None
                    if isinstance(received.outcome, Fatal):
                        raise GraderBroken(received.outcome.message)
                    yield received.key, received.outcome
                continue
            elapsed = time.monotonic() - slot.since
            dead = slot.process.sentinel in ready or not slot.process.is_alive()
            late = (slot.task is not None and self.timeout is not None and self.timeout != 0
                    and elapsed > self.timeout)
            slow_start = not slot.ready and elapsed > self.start_timeout
            if not (dead or late or slow_start):
                continue
            task = slot.task
            slot.kill()
            if not slot.ready:
                self._failed_starts += 1
                if self._failed_starts >= 3:
                    raise GraderBroken("grading workers keep failing to start ("
                                       f"{_describe_exit(slot.process.exitcode)})")
            self._slots[i] = _Slot(self._ctx, self.spec, self._zygote)
            if task is None:
                continue
            if late:
                yield task[0], NotGraded(EntryStatus.TIMEOUT, (
                    f"grading this submission took longer than {self.timeout:g} s; it was "
                    "stopped"))
            else:
                yield task[0], NotGraded(EntryStatus.ERROR, (
                    "the grading process died while grading this submission "
                    f"({_describe_exit(slot.process.exitcode)})"))

    def close(self) -> None:
        """Stop every worker: idle ones are asked to exit, busy ones (an interrupted batch)
        are killed."""
        for slot in self._slots:
            if slot.task is None:
                slot.stop()
            else:
                slot.kill()
        self._slots = []


def _uses_torch(lab_name: str) -> bool:
    from rnngrade.labs import get_lab

    try:
        return get_lab(lab_name).uses_torch
    except RnngradeError:  # the workers report it
        return False


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


# ---------------------------------------------------------------------- Dask


class DaskExecutor:
    """The same grading function on a Dask distributed cluster at ``address``.

    Workers keep their grader between tasks like local ones; start them with ``--nthreads 1``
    (a worker grades one submission at a time). At most ``window`` submissions are in flight,
    so payloads do not pile up in the scheduler's memory. Workers must run the same rnngrade
    and suite as the coordinator (checked on every result)."""

    name = "dask"

    def __init__(self, spec: GradingSpec, address: str, window: int | None = None,
                 expected_version: str | None = None) -> None:
        self.spec = spec.to_wire()
        self.address = address
        self.window = window
        self.expected_version = expected_version
        self.workers = 0

    def run(self, tasks: Iterable[Task]) -> Generator[tuple[str, Outcome], None, None]:
        try:
            from distributed import Client, as_completed
        except ImportError as exc:
            raise GraderBroken("the dask executor needs `pip install 'dask[distributed]'` "
                               f"({exc})") from None
        try:
            client = Client(self.address, timeout="30s")
        except OSError as exc:
            raise GraderBroken(f"cannot reach the Dask scheduler at {self.address}: {exc}"
                               ) from None
        try:
            nthreads = client.nthreads()
            self.workers = len(nthreads)
            window = self.window or max(4, 2 * sum(nthreads.values()))
            pending = iter(tasks)
            keys: dict[Hashable, str] = {}  # a dask key: str, number or tuple
            running = as_completed()

            def submit() -> bool:
                task = next(pending, None)
                if task is None:
                    return False
                future = client.submit(grade_payload, self.spec, task[1], pure=False,
                                       key=f"rnngrade-{self.spec['lab']}-{os.urandom(8).hex()}")
                keys[future.key] = task[0]
                running.add(future)
                return True

            for _ in range(window):
                if not submit():
                    break
            for future in running:
                key = keys.pop(future.key)
                outcome: Outcome
                try:
                    outcome = decode_outcome(future.result())
                except GraderBroken:
                    raise
                except Exception as exc:  # noqa: BLE001 - a lost worker, a serialisation error
                    outcome = NotGraded(EntryStatus.ERROR,
                                        f"the Dask task failed: {type(exc).__name__}: {exc}")
                future.release()
                if isinstance(outcome, Fatal):
                    raise GraderBroken(f"{outcome.message} (on {outcome.worker or '?'})")
                version = outcome.grader_version if isinstance(outcome, Graded) else ""
                if self.expected_version and version and version != self.expected_version:
                    raise GraderBroken(f"Dask worker {outcome.worker} runs grader "
                                       f"{version}, this coordinator {self.expected_version}")
                yield key, outcome
                submit()
        finally:
            client.close()


def default_workers() -> int:
    """The CPUs this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)

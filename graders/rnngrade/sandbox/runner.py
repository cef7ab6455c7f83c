"""``SandboxRunner``: the grader's side of a jailed worker (see ``StudentRunner``).

Every call is one request and one reply (the types of ``protocol``) over the worker's socketpair,
under the call's limits (``cpuclock.CallClock``: CPU time, and a wall-clock fallback that does not
count the time the worker waited for a busy CPU); stdout and stderr arrive on pipes, drained while
waiting and cut at ``Limits.output_bytes``. Everything the worker sends is capped here, as it is
read: a reply by its kind (a result at most the memory limit, an error report 64 KiB), each text
field by ``protocol.decode_reply``. A worker that hangs is killed; one that dies is reaped and the
cause named (a signal, an exit status, the CPU limit); the next call gets a fresh worker that loads
the submission again. A submission whose loading fails that way is a load error for good.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import socket
import threading
import time
import weakref
from typing import NoReturn

from rnngrade.harness.runner.base import (
    CRASH,
    EXIT,
    LOAD_ERROR,
    MEMORY,
    OUTPUT_LIMIT,
    PROTOCOL,
    TIMEOUT,
    CallResult,
    StudentError,
    Usage,
)
from rnngrade.limits import Limits, describe_bytes, describe_seconds
from rnngrade.sandbox import affinity
from rnngrade.sandbox.channel import (
    MAX_FRAME,
    ChannelClosed,
    ChannelTimeout,
    FrameReader,
    FrameRefused,
    send_frame,
)
from rnngrade.sandbox.codec import ProtocolError
from rnngrade.sandbox.cpuclock import CallClock, Probe, waited_wall
from rnngrade.sandbox.protocol import (
    Call,
    Failed,
    Found,
    Has,
    Hello,
    Kind,
    Load,
    Loaded,
    Reply,
    Request,
    Value,
    decode_reply,
    encode_message,
    expecting,
    reply_caps,
)
from rnngrade.sandbox.zygote.client import SandboxUnavailable, ZygoteClient, shared_client

REQUIRED = ("private filesystem", "unprivileged uid")
HELLO_SECONDS = 60.0
SPIN_SECONDS = 150e-6  # unpinned: a reply polled for this long first costs no wake-up
BACK_TO_BACK = 300e-6  # a call this soon after the last reply finds the worker still polling
TRUNCATED = "\n[... truncated]"
ABORTED = "Fatal Python error: Aborted"  # what faulthandler writes on SIGABRT
SIGNALS: dict[int, str] = {
    signal.SIGSEGV: "segmentation fault (SIGSEGV)",
    signal.SIGBUS: "bus error (SIGBUS)",
    signal.SIGABRT: "aborted (SIGABRT)",
    signal.SIGFPE: "floating-point exception (SIGFPE)",
    signal.SIGILL: "illegal instruction (SIGILL)",
}


class _Capture:
    """The first ``limit`` bytes of a stream; the rest is counted and dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def take(self) -> str:
        text = self.data.decode("utf-8", "replace") + (TRUNCATED if self.dropped else "")
        self.data = bytearray()
        self.dropped = 0
        return text


class _Died(Exception):
    """The worker's channel closed: it ended."""


class _OverLimit(ChannelTimeout):
    """A call went over its limits; the message says which (``CallClock.verdict``)."""


class _Worker:
    """One worker process, seen from the grader."""

    def __init__(self, pid: int, sock: socket.socket, out_fd: int, err_fd: int,
                 output_bytes: int, caps: dict[int, int]) -> None:
        self.pid = pid
        self.pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.pidfd = os.pidfd_open(pid)
        self.sock = sock
        sock.setblocking(False)
        self.caps = caps  # the largest payload of each kind of reply
        self.reader = FrameReader(sock, expecting(caps, Kind.HELLO))
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        self.streams: dict[int, _Capture] = {}
        for fd in (out_fd, err_fd):
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            self.poller.register(fd, select.POLLIN)
            self.streams[fd] = _Capture(output_bytes)
        self.out, self.err = self.streams[out_fd], self.streams[err_fd]
        self.fds = [out_fd, err_fd]
        self.killed = False
        self.cpu: int | None = None  # the one CPU it is pinned to, if it is
        self.holding = False  # whether the calling thread is held on that CPU too
        self.replied = 0.0  # time.monotonic() of the last reply
        self.probe = Probe(pid)  # its CPU time, and its waiting for a CPU

    def follow(self, cpus: set[int]) -> bool:
        """Pin the worker, and the calling thread until ``let_go``, to the calling thread's
        CPU (see ``affinity``): the reply then wakes the caller where the worker ran, with no
        migration. Whether it is pinned."""
        cpu = affinity.current_cpu()
        if cpu is None or cpu not in cpus:
            return False
        if cpu != self.cpu:
            if not affinity.set_cpus(self.pid, {cpu}):
                self.cpu = None
                return False
            self.cpu = cpu
        self.holding = affinity.set_cpus(0, {cpu})
        return True

    def let_go(self, cpus: set[int]) -> None:
        """The calling thread may run anywhere again."""
        if self.holding:
            affinity.set_cpus(0, cpus)
            self.holding = False

    def widen(self, cpus: set[int]) -> None:
        """A long call: the worker and its caller may run on any CPU."""
        self.let_go(cpus)
        if self.cpu is not None:
            affinity.set_all_threads(self.pid, cpus)
            self.cpu = None

    def send(self, frame: tuple[Kind, list], deadline: float) -> None:
        """Send an encoded request (``_encode_request``)."""
        kind, parts = frame
        try:
            send_frame(self.sock, kind, parts, deadline)
        except (ChannelClosed, OSError) as exc:
            if isinstance(exc, ChannelTimeout):
                raise
            raise _Died() from None

    def expect(self, *kinds: Kind) -> None:
        """The kinds of reply the next frame may be (any other is refused from its header)."""
        self.reader.caps = expecting(self.caps, *kinds)

    def clock(self, cpu_limit: float, wall_limit: float) -> CallClock:
        """The clocks of a call starting now."""
        return CallClock(self.probe, cpu_limit, wall_limit)

    def receive(self, until: float | CallClock, seq: int | None = None, spin: float = 0.0,
                widen: tuple[float, set[int]] | None = None) -> Reply:
        """The next reply, of a kind ``expect``ed and answering request ``seq``; raises
        ChannelTimeout (_OverLimit when a call's clock ran out), _Died or ProtocolError.
        ``until``: a time.monotonic() deadline, or the limits of a call. ``spin``: seconds to
        poll without sleeping first (a quick reply then costs no wake-up of this CPU).
        ``widen``: (time.monotonic() at which, CPUs): a pinned worker still busy then may run
        on any of those CPUs."""
        clock: CallClock | None = None
        if isinstance(until, CallClock):
            clock = until
            # its clocks run no faster than the wall clock: none is read before then
            deadline = clock.started + min(clock.cpu_limit, clock.wall_limit)
        else:
            deadline = until
        if spin:
            spun = time.perf_counter() + spin
            while True:
                frame = self._read_reply()
                if frame is not None:
                    return decode_reply(*frame, seq)
                if time.perf_counter() > spun:
                    break
        while True:
            # read first: a reply that came while this process was busy or off the CPU is on
            # time (the worker, done, sleeps, and its waiting clock runs on)
            frame = self._read_reply()
            if frame is not None:
                return decode_reply(*frame, seq)
            now = time.monotonic()
            if clock is not None and now >= deadline:
                verdict = clock.verdict(now)
                if verdict is not None:
                    raise _OverLimit(verdict)
                deadline = clock.next_check(now)
            remaining = deadline - now
            if remaining <= 0:
                raise ChannelTimeout("no reply before the deadline")
            if widen is not None:
                if now >= widen[0] or self.cpu is None:
                    self.widen(widen[1])
                    widen = None
                else:
                    remaining = min(remaining, widen[0] - now)
            for fd, _ in self.poller.poll(max(1, int(remaining * 1000) + 1)):
                if fd in self.streams:
                    self._read_stream(fd)

    def _read_reply(self) -> tuple[int, bytearray] | None:
        """(kind, payload) of a whole frame if one has arrived (the output written before it
        drained too), else None; raises _Died when the channel closed."""
        try:
            frame = self.reader.read_some()
        except ChannelClosed:
            self.drain()
            raise _Died() from None
        if frame is not None:
            self.drain()
        return frame

    def _read_stream(self, fd: int) -> bool:
        try:
            chunk = os.read(fd, 1 << 16)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            chunk = b""
        if not chunk:
            with contextlib.suppress(KeyError, OSError):
                self.poller.unregister(fd)
            return False
        self.streams[fd].add(chunk)
        return True

    def drain(self) -> None:
        for fd in self.fds:
            while self._read_stream(fd):
                pass

    def kill(self) -> None:
        self.killed = True
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, OSError):
            pass

    def close(self) -> None:
        self.probe.close()
        with contextlib.suppress(OSError):
            self.sock.close()
        for fd in self.fds + ([self.pidfd] if self.pidfd is not None else []):
            with contextlib.suppress(OSError):
                os.close(fd)


def _shutdown(holder: list, client: ZygoteClient, owner: int) -> None:
    """Kill and forget the runner's worker (not from a forked copy of the grader)."""
    worker = holder[0]
    holder[0] = None
    if worker is not None and os.getpid() == owner:
        worker.kill()
        with contextlib.suppress(Exception):
            client.release(worker.pid)
        worker.close()


class SandboxRunner:
    """Runs a submission in a jailed worker process (see the module docstring).

    The constructor starts the worker and checks its protections (raising SandboxUnavailable
    unless the private filesystem and the unprivileged uid are in force, or
    ``allow_unprotected``); the submission then loads while the grader gets on with its own
    work, and the first request waits for it.

    standby: take the worker the last runner left on standby (``ZygoteClient.prepare``) and,
    when closed, leave one for the next runner; False starts a fresh worker and leaves none."""

    _isolate = True  # tests subclass with False to check the refusal; never for hostile code

    def __init__(self, source: str, filename: str, *, device: str = "cpu",
                 limits: Limits | None = None, allow_unprotected: bool = False,
                 standby: bool = True, helpers: str = "") -> None:
        self.source = source
        self.helpers = helpers  # a lab's helpers file, run in the worker beside the generic ones
        self.filename = filename
        self.device = device
        self.limits = limits or Limits()
        self._caps = reply_caps(result_cap(self.limits))
        self.allow_unprotected = allow_unprotected
        self.standby = standby
        self._lock = threading.RLock()
        self._client = shared_client()
        self._holder: list[_Worker | None] = [None]
        self._owner = os.getpid()
        self._finalizer = weakref.finalize(self, _shutdown, self._holder, self._client,
                                           self._owner)
        self._generation = 0
        self._seq = 0
        self._notes: list[str] | None = None
        self._defined: frozenset[str] = frozenset()  # callables of the module as loaded
        self._fatal: str | None = None
        self._loading: CallClock | None = None  # the limits of the load in flight
        self._protections: dict[str, bool] = {}
        self._details: dict[str, str] = {}
        self._closed = False
        self._usage: Usage | None = None  # what the last call cost
        self._cpus = affinity.allowed_cpus()
        self._follow = affinity.available()  # keep the worker on the caller's CPU
        self.restarts = 0  # workers replaced after a failure
        self.startup: dict[str, float] = {}  # seconds of the last start: spawn, hello, load
        with self._lock:
            self._start_worker()

    # ---------------------------------------------------------------- StudentRunner
    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, head: int | None = None) -> CallResult:
        return self._call(function, args, kwargs or {}, timeout, helper=False, head=head)

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        return self._call(helper, args, kwargs or {}, timeout, helper=True)

    def use_limits(self, limits: Limits) -> None:
        """Limits for the calls that follow; a worker started under other kernel limits (CPU,
        memory, ...) is replaced by one that loads the submission again under these."""
        with self._lock:
            worker = self._holder[0]
            if worker is not None and limits.as_wire() != self.limits.as_wire():
                self._abandon(worker)
            self.limits = limits

    def restart(self) -> None:
        """The calls that follow run in a fresh worker that loads the submission again (a
        test graded by outcome starts from nothing another test left behind)."""
        with self._lock:
            worker = self._holder[0]
            if worker is not None:
                self._abandon(worker)

    def has_function(self, function: str) -> bool:
        with self._lock:
            self._ready()
            if self._holder[0] is None and self._fatal is not None:
                return False
            if function in self._defined:  # a function the loaded module defined
                return True
            try:
                reply = self._exchange(Has(self._next_seq(), function), function, None)
            except StudentError:
                return False
            return type(reply) is Found and reply.found

    def load_notes(self) -> list[str]:
        with self._lock:
            self._ready()
            return list(self._notes or [])

    def protections(self) -> dict[str, bool]:
        return dict(self._protections)

    def protection_details(self) -> dict[str, str]:
        """Why a measure is missing, as the worker reported it."""
        return dict(self._details)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._loading = None
            self._finalizer()
            if self.standby and self._client.alive and os.getpid() == self._owner:
                with contextlib.suppress(SandboxUnavailable):
                    self._client.prepare(self.device, self.limits.as_wire(), self._isolate)

    def __enter__(self) -> SandboxRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def worker_pid(self) -> int | None:
        worker = self._holder[0]
        return worker.pid if worker is not None else None

    # ---------------------------------------------------------------- internals
    def _call(self, name: str, args: tuple, kwargs: dict, timeout: float | None,
              helper: bool, head: int | None = None) -> CallResult:
        with self._lock:
            self._ready()
            if self._fatal is not None:
                raise StudentError(LOAD_ERROR, self._fatal, function=name)
            started = time.perf_counter()
            request = Call(self._next_seq(), name, tuple(args), dict(kwargs), helper, head)
            self._usage = None
            try:
                reply = self._exchange(request, name, timeout)
            except StudentError as exc:
                exc.usage = self._usage
                raise
            worker = self._holder[0]
            out = worker.out.take() if worker else ""
            err = worker.err.take() if worker else ""
            if type(reply) is Failed:
                if reply.recycle:
                    self._discard()
                error = StudentError(reply.kind, reply.message, function=name, stdout=out,
                                     stderr=err)
                error.usage = self._usage
                raise error
            assert type(reply) is Value
            if reply.args is None:  # the worker vouches the call changed none of them
                return CallResult(reply.value, args, kwargs, out, err,
                                  time.perf_counter() - started, self._usage)
            return CallResult(reply.value, reply.args, reply.kwargs or {}, out, err,
                              time.perf_counter() - started, self._usage)

    def _ready(self) -> None:
        """A worker with the submission loaded (or a fatal load error), if it can be had."""
        if self._closed:
            raise RuntimeError("this SandboxRunner is closed")
        if self._holder[0] is None and self._fatal is None:
            self._start_worker()
        if self._loading is not None:
            self._finish_load()

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _exchange(self, request: Call | Has, name: str, timeout: float | None) -> Reply:
        """Send a request to the loaded worker and return its checked reply (a Value or Found,
        or Failed); failures of the worker, and replies that fail the checks, become
        StudentError."""
        worker = self._holder[0]
        if worker is None:
            raise StudentError(LOAD_ERROR, self._fatal or "no worker", function=name)
        limit = timeout if timeout is not None else self.limits.call_seconds
        wall = self.limits.wall_limit(limit)
        worker.drain()
        worker.out.take()
        worker.err.take()
        frame = _encode_request(request)
        worker.expect(Kind.VALUE if type(request) is Call else Kind.FOUND, Kind.FAILED)
        clock = worker.clock(limit, wall)
        deadline = clock.started + wall
        try:
            # Calls in quick succession: the unpinned worker is still polling on another CPU,
            # so the request costs no wake-up; after a pause it sleeps, and sits on this CPU.
            pinned = False
            if self._follow:
                if time.monotonic() - worker.replied < BACK_TO_BACK:
                    worker.widen(self._cpus)
                else:
                    pinned = worker.follow(self._cpus)
            worker.send(frame, deadline)
            if pinned:
                reply = worker.receive(clock, request.seq, 0.0,
                                       (time.monotonic() + affinity.WIDEN_AFTER, self._cpus))
            else:
                reply = worker.receive(clock, request.seq, SPIN_SECONDS)
            worker.replied = time.monotonic()
            self._usage = Usage(*clock.used(worker.replied))
        except _OverLimit as exc:
            self._usage = Usage(*clock.used())
            worker.kill()
            self._failed(worker, name, timed_out=str(exc))
        except ChannelTimeout:  # the request could not be sent in time
            self._usage = Usage(*clock.used())
            worker.kill()
            self._failed(worker, name, timed_out=clock.verdict(time.monotonic())
                         or waited_wall(wall))
        except _Died:
            self._usage = Usage(*clock.used())
            self._failed(worker, name)
        except ProtocolError as exc:
            self._usage = Usage(*clock.used())
            worker.kill()
            self._failed(worker, name, protocol=_refusal(exc, name))
        except BaseException:  # interrupted (Ctrl-C in the grader): the worker is mid-call
            self._abandon(worker)
            raise
        finally:
            worker.let_go(self._cpus)
        return reply

    def _abandon(self, worker: _Worker) -> None:
        """Kill a worker without waiting for its end (the zygote reaps it)."""
        worker.kill()
        if self._holder[0] is worker:
            self._holder[0] = None
        with contextlib.suppress(Exception):
            self._client.release(worker.pid)
        worker.close()

    def _failed(self, worker: _Worker, name: str, timed_out: str | None = None,
                protocol: str | None = None) -> NoReturn:
        """The worker is gone (or must go): reap it, name the cause, raise StudentError."""
        out, err = worker.out.take(), worker.err.take()
        kind, message = self._cause(worker, name, timed_out, protocol, err)
        if kind == CRASH:
            err = _tidy_fault_report(err, self.filename)
        raise StudentError(kind, message, function=name, stdout=out, stderr=err)

    def _cause(self, worker: _Worker, name: str, timed_out: str | None = None,
               protocol: str | None = None, stderr: str = "") -> tuple[str, str]:
        was_killed = worker.killed
        status, cpu = self._reap(worker)
        if timed_out is not None:
            return TIMEOUT, f"{name} timed out: {timed_out}"
        if protocol is not None:
            return PROTOCOL, protocol
        if worker.killed and not was_killed:  # its channel closed, yet it did not end
            return PROTOCOL, (f"{name}: the worker closed its channel to the grader and stopped "
                              "answering")
        if status is None:
            return CRASH, f"{name}: the worker process ended (cause unknown)"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig in (signal.SIGKILL, signal.SIGXCPU):
                if sig == signal.SIGXCPU or cpu >= self.limits.cpu_seconds - 0.5:
                    return TIMEOUT, (f"{name} timed out: CPU time limit "
                                     f"{describe_seconds(self.limits.cpu_seconds)} per worker")
                return MEMORY, f"{name} killed: out of memory"
            if sig == signal.SIGXFSZ:
                return OUTPUT_LIMIT, (f"{name} hit the file size limit "
                                      f"({describe_bytes(self.limits.file_bytes)} per file)")
            if sig == signal.SIGSEGV and ABORTED in stderr:
                # The worker is PID 1 of its namespace, which ignores the SIGABRT it sends
                # itself, so abort() ends in a fault; the fault handler told the truth first.
                sig = signal.SIGABRT
            try:
                label = SIGNALS.get(sig) or f"killed by {signal.Signals(sig).name}"
            except ValueError:
                label = f"killed by signal {sig}"
            return CRASH, f"{name} crashed: {label}"
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return EXIT, f"{name} ended the worker process (exit status {code}, e.g. os._exit)"

    def _reap(self, worker: _Worker) -> tuple[int | None, float]:
        """Wait for the worker to end (killing it when it does not), then forget it."""
        if self._holder[0] is worker:
            self._holder[0] = None
            self.restarts += 1
        status, cpu = None, 0.0
        with contextlib.suppress(SandboxUnavailable):
            status, cpu = self._client.reap(worker.pid, 0.0 if worker.killed else 1.0)
            if status is None:
                worker.kill()
                status, cpu = self._client.reap(worker.pid, 5.0)
        worker.close()
        return status, cpu

    def _discard(self) -> None:
        worker = self._holder[0]
        if worker is not None:
            worker.kill()
            self._reap(worker)

    def _start_worker(self, fresh: bool = False) -> None:
        """Spawn a worker, check its protections, send it the submission to load (``fresh``:
        not the one on standby)."""
        if not self._client.alive:
            self._client = shared_client()
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _shutdown, self._holder, self._client,
                                               self._owner)
        self._generation += 1
        started = time.perf_counter()
        pid, sock, out_fd, err_fd = self._client.spawn(self.device, self.limits.as_wire(),
                                                       self._isolate,
                                                       fresh=fresh or not self.standby)
        spawned = time.perf_counter()
        worker = _Worker(pid, sock, out_fd, err_fd, self.limits.output_bytes, self._caps)
        self._holder[0] = worker
        try:
            hello = worker.receive(time.monotonic() + HELLO_SECONDS)
        except (ChannelTimeout, _Died, ProtocolError) as exc:  # no student code ran yet
            worker.kill()
            errors = worker.err.take().strip()[-2000:]
            self._holder[0] = None  # not a failure of the submission's: no restart counted
            _, cause = self._cause(worker, "it")
            if not fresh and self.standby and isinstance(exc, _Died):
                self._start_worker(fresh=True)  # the worker on standby ended while it waited
                return
            raise SandboxUnavailable(f"a worker process did not start ({str(exc) or cause})"
                                     + (f":\n{errors}" if errors else "")) from None
        except BaseException:
            self._abandon(worker)
            raise
        assert type(hello) is Hello  # the only kind expected
        self.startup = {"spawn": spawned - started, "hello": time.perf_counter() - started}
        self._protections = dict(hello.protections)
        self._details = dict(hello.details)
        missing = [m for m in REQUIRED if not self._protections.get(m)]
        if missing and not self.allow_unprotected:
            worker.kill()
            self._reap(worker)
            why = "; ".join(f"{k}: {v}" for k, v in self._details.items()) or "not available"
            raise SandboxUnavailable(
                f"refusing to run student code: the sandbox cannot establish "
                f"{' and '.join(missing)} here ({why}). It needs Linux with mount and PID "
                "namespaces, as root or with unprivileged user namespaces.")
        # Only now, protections checked, does the submission's source leave the grader.
        clock = worker.clock(self.limits.call_seconds, self.limits.wall_limit())
        deadline = clock.started + clock.wall_limit
        worker.expect(Kind.LOADED)
        try:
            worker.send(_encode_request(Load(self.source, self.filename,
                                             self._generation << 32, self.helpers)), deadline)
        except (ChannelTimeout, _Died):
            pass  # the reply (or its absence) tells
        except BaseException:
            self._abandon(worker)
            raise
        self._loading = clock
        self._load_started = time.perf_counter()

    def _finish_load(self) -> None:
        """Wait for the load in flight; a failure is a load error for good."""
        worker, clock = self._holder[0], self._loading
        self._loading = None
        if worker is None or clock is None:
            return
        try:
            reply = worker.receive(clock)
        except ChannelTimeout as exc:
            worker.kill()
            self._reap(worker)
            verdict = str(exc) if isinstance(exc, _OverLimit) else waited_wall(clock.wall_limit)
            self._fatal = ("the submission could not be loaded: its top-level code timed out: "
                           + verdict)
            return
        except (_Died, ProtocolError) as exc:
            worker.kill()
            protocol = None
            if isinstance(exc, ProtocolError):
                protocol = _refusal(exc, "its top-level code")
            _, cause = self._cause(worker, "its top-level code", protocol=protocol)
            self._fatal = f"the submission could not be loaded: {cause}"
            return
        except BaseException:
            self._abandon(worker)
            raise
        finally:
            worker.out.take()  # top-level output is not reported (as in-process)
            worker.err.take()
        self.startup["load"] = time.perf_counter() - self._load_started
        assert type(reply) is Loaded  # the only kind expected
        if self._notes is None:
            self._notes = list(reply.notes)
        self._defined = frozenset(reply.functions)
        if reply.fatal is not None:
            self._fatal = reply.fatal


def result_cap(limits: Limits) -> int:
    """The largest result a worker may send: the protocol's limit, or the worker's memory limit
    when that is lower (a result larger than the worker could hold cannot be honest). A larger
    one is refused from its frame's header, unread."""
    return min(MAX_FRAME, limits.memory_bytes)


def _tidy_fault_report(err: str, filename: str) -> str:
    """The fault handler's report without the worker's own frames and module list: the
    signal's name and the lines of the student's file that led to it."""
    start = err.find("Fatal Python error: ")
    if start < 0:
        return err
    first, *rest = err[start:].splitlines()
    mine = []
    for line in rest:
        if line.startswith("Fatal Python error: "):  # abort() ends in a second fault
            break
        if line.startswith(f'  File "{filename}", line '):
            mine.append(line)
    return err[:start] + "\n".join([first, *mine]) + "\n"


def _encode_request(request: Request) -> tuple[Kind, list]:
    try:
        return encode_message(request)
    except ProtocolError as exc:  # the grader's own arguments: a bug of the suite
        raise TypeError(f"an argument cannot be sent to the sandbox: {exc}") from None


_KINDS = frozenset(int(kind) for kind in Kind)


def _refusal(exc: ProtocolError, name: str) -> str:
    """What a student reads when the worker's reply to a call of ``name`` fails the checks."""
    if isinstance(exc, FrameRefused) and exc.cap is not None:
        size, cap = describe_bytes(exc.size), describe_bytes(exc.cap)
        if exc.kind == Kind.VALUE:
            return (f"{name} returned a value that cannot be graded: {size} of data, more than "
                    f"the {cap} a result may take")
        what = f"{Kind(exc.kind).label} of {size}, over the {cap} limit"
    elif isinstance(exc, FrameRefused):
        what = (f"{Kind(exc.kind).label} out of turn" if exc.kind in _KINDS
                else f"a message of unknown kind {exc.kind}")
    else:
        what = str(exc)
    return f"{name}: the worker sent data that cannot be graded ({what})"

"""The zygote process: a fork server that has already imported NumPy, torch (without
initialising CUDA) and the worker side of rnngrade, so a worker costs a fork instead of a
2-second interpreter start (the package's docstring tells the whole story; ``client`` starts this
process and talks to it, in the messages of ``protocol``).

It keeps a *spare* ready: a process already in its own namespaces and private root and warmed up
(the slow part, a few tens of milliseconds, done at a lower CPU priority so it yields to the
grading at hand), still privileged, waiting. ``Spawn`` hands the spare the worker's descriptors
(a socketpair to the grader, two pipes for stdout and stderr); the spare applies its limits,
drops to an unprivileged uid of its own and says hello — about a millisecond — and the zygote
prepares the next spare.

Process tree: zygote (child subreaper) → intermediate (enters the namespaces, forks, exits) →
spare/worker (PID 1 of its PID namespace; reparented to the zygote). The zygote reaps a worker
only when the grader asks (``Reap``/``Release``), so a worker's pid is never recycled while the
grader may still signal it. A ``Clone`` forks the zygote itself, for another grader.

A request that does not decode is dropped (its descriptors closed): the grader's side sends only
what ``protocol`` encodes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

from rnngrade.sandbox import isolation
from rnngrade.sandbox.channel import ChannelClosed, ChannelTimeout
from rnngrade.sandbox.codec import ProtocolError
from rnngrade.sandbox.zygote.protocol import (
    REQUESTS,
    SPARE_TIMEOUT,
    Assign,
    Broken,
    Clone,
    Cloned,
    Failure,
    Forked,
    Prepared,
    Ready,
    Reap,
    Reaped,
    Release,
    Request,
    Spawn,
    Spawned,
    decode_boot,
    recv_message,
    send_message,
)

UID_BASE = 1 << 28
SPARE_NICE = 10


@dataclass
class _Spare:
    pid: int
    sock: socket.socket
    key: tuple  # (device, isolate, disk_bytes)
    uid: int
    ready: bool = False
    problems: list[str] = field(default_factory=list)


def _prepare(imports: list[str]) -> None:
    """Imports and small warm-ups, inherited by every worker (single-threaded: no BLAS/OpenMP
    thread pool is started, so forking stays safe); ``imports``: what the labs being graded
    name in ``worker_imports`` (one that fails to import is left to the worker)."""
    import importlib

    import numpy as np
    import torch

    import rnngrade.sandbox.worker  # noqa: F401 - the worker side, with everything it imports
    from rnngrade.harness.source.module_builder import build_module

    a = np.linspace(0.0, 1.0, 16).reshape(4, 4)
    np.tanh(a @ a.T + 1.0).sum()
    np.exp(a - a.max(axis=0, keepdims=True))
    t = torch.linspace(0.0, 1.0, 16, dtype=torch.float64).reshape(4, 4)
    torch.stack([torch.tanh(t @ t.T + 1.0), t], dim=1).sum()
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        # Only with a CPU-only torch: with a GPU build, autograd's first backward asks the
        # driver how many devices there are (initialising CUDA) and starts a thread per device,
        # after which neither CUDA nor autograd works in a forked worker.
        x = t.clone().requires_grad_(True)
        (x * x).sum().backward()
    # the grader's numerics (``harness.checks.seeding``): flags only, nothing initialised
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    build_module("import numpy as np\n\ndef f(x):\n    return np.asarray(x)\n", "warmup.py")
    for name in imports:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    sys.modules.pop("submission", None)
    gc.collect()
    gc.freeze()  # a worker's garbage collections never walk (and so copy) the zygote's objects


class _Zygote:
    def __init__(self, ctl: socket.socket, ctx: isolation.Context) -> None:
        self.ctl = ctl
        self.ctx = ctx
        self.spares: list[_Spare] = []
        self.workers: set[int] = set()  # assigned, not yet reaped for the grader
        self.released: set[int] = set()  # reaped in the background
        self.counter = 0
        self.want: tuple | None = None  # the key of the spare to keep ready
        self.nice = os.getpriority(os.PRIO_PROCESS, 0)  # the grader's; spares start nicer
        self.clones: set[int] = set()  # zygotes forked for other graders, reaped when they end

    # ---------------------------------------------------------------- main loop
    def run(self) -> None:
        while True:
            socks = [self.ctl] + [s.sock for s in self.spares]
            try:
                readable, _, _ = select.select(socks, [], [], 0.5)
            except InterruptedError:
                continue
            for sock in readable:
                if sock is self.ctl:
                    try:
                        message, fds = recv_message(self.ctl, REQUESTS)
                    except (ChannelClosed, OSError):
                        return
                    except ProtocolError:
                        continue  # not a request (its descriptors are closed): dropped
                    try:
                        self._handle(message, fds)
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the grader has gone (an answer found no one to read it)
                else:
                    spare = next((s for s in self.spares if s.sock is sock), None)
                    if spare is not None:
                        self._spare_message(spare)
            self._reap_background()
            self._reap_clones()
            if self.want is not None and not any(s.key == self.want for s in self.spares):
                self._start_spare(self.want)

    def shutdown(self) -> None:
        for pid in [s.pid for s in self.spares] + list(self.workers | self.released):
            _kill(pid)
        for pid in [s.pid for s in self.spares] + list(self.workers | self.released):
            _wait(pid, 2.0)
        try:
            os.rmdir(self.ctx.staging)  # empty: the jails were built in private namespaces
        except OSError:
            pass
        if self.ctx.scratch:
            shutil.rmtree(self.ctx.scratch, ignore_errors=True)  # the zygote's own directory

    def _handle(self, message: Request, fds: list[int]) -> None:
        """Serve one request; its descriptors are closed afterwards (a worker or a clone has
        its own copies)."""
        try:
            match message:
                case Spawn():
                    self._spawn(message, fds)
                case Reap():
                    self._reap(message)
                case Clone():
                    self._clone(message.seq, fds[0])
                case Release(pid=pid) if pid in self.workers:
                    self.workers.discard(pid)
                    self.released.add(pid)
                    _kill(pid)
        finally:
            for fd in fds:
                _close(fd)

    # ---------------------------------------------------------------- clones
    def _clone(self, seq: int, fd: int) -> None:
        """Fork a zygote for another grader, on the channel ``fd`` (see the module docstring).
        It ends when that grader closes the channel; a clone never outlives its grader's
        channel, whatever becomes of this zygote."""
        try:
            channel = socket.socket(fileno=os.dup(fd))
        except OSError as exc:
            send_message(self.ctl, Failure(seq, f"no channel for the clone: {exc}"))
            return
        try:
            pid = os.fork()
        except OSError as exc:
            channel.close()
            send_message(self.ctl, Failure(seq, f"could not fork a clone: {exc}"))
            return
        if pid == 0:
            try:
                self._clone_main(channel)
            except BaseException:  # noqa: BLE001 - report (unbuffered) and go
                with contextlib.suppress(OSError):
                    os.write(2, traceback.format_exc().encode(errors="replace"))
            finally:
                os._exit(1)
        channel.close()
        self.clones.add(pid)
        send_message(self.ctl, Cloned(seq, pid))

    def _clone_main(self, channel: socket.socket) -> None:
        """In the clone: forget this zygote's channel and spares, take jail directories of its
        own, say ready on ``channel`` and serve it like a freshly started zygote."""
        for sock in [self.ctl] + [s.sock for s in self.spares]:
            sock.detach()  # closed below; the spares stay this zygote's
        _close_all_but({0, 1, 2, channel.fileno()})
        isolation.set_child_subreaper()  # not inherited across fork
        try:
            staging = tempfile.mkdtemp(prefix="rnngrade-jail-")
            scratch = tempfile.mkdtemp(prefix="rnngrade-scratch-")
        except OSError as exc:
            send_message(channel, Broken(f"{type(exc).__name__}: {exc}"))
            return
        ctx = dataclasses.replace(self.ctx, staging=staging, scratch=scratch)
        _serve(channel, ctx)

    def _reap_clones(self) -> None:
        _reap_ended(self.clones)

    # ---------------------------------------------------------------- spares
    def _next_uid(self) -> int:
        self.counter += 1
        return UID_BASE + ((os.getpid() & 0x3FFF) << 16) + (self.counter & 0xFFFF)

    def _start_spare(self, key: tuple) -> _Spare | None:
        device, isolate, disk_bytes = key
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # As root each worker gets a uid of its own; otherwise the one uid a user namespace
        # maps, the grader's (with no capabilities left in the worker).
        uid = self._next_uid() if self.ctx.privileged else os.geteuid()
        background = self.ctx.privileged  # only root may raise the priority back
        if background:
            _renice(SPARE_NICE)  # the fork's own cost, too, yields to grading
        pid = -1
        try:
            pid = os.fork()
        finally:
            if pid != 0 and background:
                _renice(self.nice)
        if pid == 0:  # the intermediate process
            try:
                parent_end.detach()
                self._intermediate(child_end, device, isolate, disk_bytes, uid)
            finally:
                os._exit(0)
        child_end.close()
        early: list[Prepared] = []  # the spare may speak before the intermediate has
        forked: Forked | None = None
        deadline = time.monotonic() + 10.0
        try:
            while forked is None:
                message, _ = recv_message(parent_end, (Forked, Prepared),
                                          deadline - time.monotonic())
                if isinstance(message, Forked):
                    forked = message
                elif isinstance(message, Prepared):
                    early.append(message)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError):
            parent_end.close()
            return None
        finally:
            if not _wait(pid, 5.0):
                self.released.add(pid)  # reaped in the background
        spare = _Spare(forked.pid, parent_end, key, uid, problems=list(forked.problems))
        for message in early:
            self._spare_said(spare, message)
        self.spares.append(spare)
        return spare

    def _intermediate(self, child_end: socket.socket, device: str, isolate: bool,
                      disk_bytes: int, uid: int) -> None:
        keep = child_end.fileno()
        for sock in [self.ctl] + [s.sock for s in self.spares]:
            sock.detach()
        _close_all_but({0, 1, 2, keep})
        problems = isolation.enter_namespaces(isolate)
        pid = os.fork()
        if pid == 0:
            try:
                _spare_main(child_end, self.ctx, device, isolate, disk_bytes, uid, problems,
                            self.nice)
            except BaseException:  # noqa: BLE001 - report (unbuffered) and go
                with contextlib.suppress(OSError):
                    os.write(2, traceback.format_exc().encode(errors="replace"))
            finally:
                os._exit(1)
        send_message(child_end, Forked(pid, tuple(problems)))

    def _spare_message(self, spare: _Spare) -> None:
        try:
            message, _ = recv_message(spare.sock, (Prepared,), 0.0)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError):
            self._drop_spare(spare)
            return
        self._spare_said(spare, message)

    def _spare_said(self, spare: _Spare, message: Prepared) -> None:
        spare.ready = True
        spare.problems += message.problems

    def _drop_spare(self, spare: _Spare) -> None:
        if spare in self.spares:
            self.spares.remove(spare)
        spare.sock.close()
        _kill(spare.pid)
        self.released.add(spare.pid)

    def _take_spare(self, key: tuple) -> _Spare | None:
        for _ in range(3):
            spare = next((s for s in self.spares if s.key == key), None) or self._start_spare(key)
            if spare is None:
                continue
            deadline = time.monotonic() + SPARE_TIMEOUT
            if not spare.ready and self.ctx.privileged:  # wanted now: not in the background
                _renice(self.nice, spare.pid)
            while not spare.ready and spare in self.spares:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._drop_spare(spare)
                    break
                ready, _, _ = select.select([spare.sock], [], [], remaining)
                if ready:
                    self._spare_message(spare)
            if spare.ready and spare in self.spares:
                self.spares.remove(spare)
                return spare
        return None

    # ---------------------------------------------------------------- requests
    def _spawn(self, request: Spawn, fds: list[int]) -> None:
        seq, limits = request.seq, request.limits
        key = (request.device, request.isolate, int(limits.get("disk_bytes", 128 << 20)))
        self.want = key
        spare = self._take_spare(key)
        if spare is None:
            send_message(self.ctl, Failure(seq, "could not start a worker process"))
            return
        try:
            send_message(spare.sock, Assign(limits), fds)
        except OSError as exc:
            self._drop_spare(spare)
            send_message(self.ctl, Failure(seq, f"the worker process was lost: {exc}"))
            return
        spare.sock.close()
        self.workers.add(spare.pid)
        send_message(self.ctl, Spawned(seq, spare.pid))

    def _reap(self, request: Reap) -> None:
        seq, pid = request.seq, request.pid
        if pid not in self.workers:
            send_message(self.ctl, Reaped(seq, None, 0.0))
            return
        deadline = time.monotonic() + request.timeout
        while True:
            try:
                done, status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                self.workers.discard(pid)
                send_message(self.ctl, Reaped(seq, None, 0.0))
                return
            if done:
                self.workers.discard(pid)
                cpu = usage.ru_utime + usage.ru_stime
                send_message(self.ctl, Reaped(seq, status, float(cpu)))
                return
            if time.monotonic() >= deadline:
                send_message(self.ctl, Reaped(seq, None, 0.0))
                return
            time.sleep(0.002)

    def _reap_background(self) -> None:
        _reap_ended(self.released)


def _reap_ended(pids: set[int]) -> None:
    """Reap the children in ``pids`` that have ended (without waiting), and forget them."""
    for pid in list(pids):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            pids.discard(pid)


def _spare_main(sock: socket.socket, ctx: isolation.Context, device: str, isolate: bool,
                disk_bytes: int, uid: int, problems: list[str], nice: int) -> None:
    """The spare: build the jail, report ready, wait to be assigned a submission's channel.
    It runs niced until then, so preparing the next worker yields to the grading at hand."""
    from rnngrade.sandbox.worker import become_worker, warm_up

    os.umask(0o022)
    problems = list(problems)
    if isolate and not problems:
        try:
            gid = uid if ctx.privileged else os.getegid()
            problems += isolation.build_root(ctx, device, uid, gid, disk_bytes)
        except OSError as exc:
            problems.append(str(exc))
    try:
        warm_up()
    except Exception:  # noqa: BLE001 - a warm-up is an optimisation, never a reason to fail
        traceback.print_exc()
    send_message(sock, Prepared(tuple(problems)))
    try:
        message, fds = recv_message(sock, (Assign,))
    except (ChannelClosed, OSError, ProtocolError):
        os._exit(0)
    sock.close()
    _renice(nice)  # prepared in the background; a submission's worker runs at full priority
    become_worker(fds[0], fds[1], fds[2], ctx, message.limits, device, uid, isolate, problems)
    os._exit(0)


def _renice(value: int, pid: int = 0) -> None:
    """Set a process's nice value; lowering it back needs root, so without root it stays."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, value)
    except OSError:
        pass


def _close_all_but(keep: set[int]) -> None:
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd not in keep:
            _close(fd)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(pid: int, timeout: float) -> bool:
    """Reap a child within ``timeout``; whether it is gone."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def main(control_fd: int, boot: bytes) -> None:
    """Entry point of the zygote process (see ``client.ZygoteClient._start``): ``boot``, its
    configuration as it arrived (``protocol.Boot``)."""
    ctl = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.umask(0o022)
    isolation.set_child_subreaper()
    try:
        config = decode_boot(boot)
        _prepare(list(config.imports))
        staging = tempfile.mkdtemp(prefix="rnngrade-jail-")
        scratch = tempfile.mkdtemp(prefix="rnngrade-scratch-")
        ctx = isolation.make_context(staging, scratch, list(config.hidden))
    except BaseException as exc:  # tell the grader why, then fail
        send_message(ctl, Broken(f"{type(exc).__name__}: {exc}"))
        raise
    _serve(ctl, ctx)


def _serve(ctl: socket.socket, ctx: isolation.Context) -> None:
    """Say ready on ``ctl``, serve it until the grader closes it, clean up and exit."""
    send_message(ctl, Ready(os.getpid(), ctx.privileged, tuple(ctx.binds),
                            (ctx.staging, ctx.scratch)))
    zygote = _Zygote(ctl, ctx)
    try:
        zygote.run()
    finally:
        zygote.shutdown()
    # Everything is cleaned up: skip the interpreter's own teardown (torch's takes a while), which
    # the grader would wait for on its way out.
    os._exit(0)



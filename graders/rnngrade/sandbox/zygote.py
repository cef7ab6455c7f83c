"""The zygote: a fork server that has already imported NumPy, torch (without initialising CUDA)
and the worker side of rnngrade, so a worker costs a fork instead of a 2-second interpreter start.

One zygote per grader process, started lazily by ``shared_client()`` as a fresh interpreter (it
never holds anything of the grader's: no reference, no hidden suite, no submission source) with a
scrubbed environment. It keeps a *spare* ready: a process already in its own namespaces and
private root and warmed up (the slow part, a few tens of milliseconds, done at a lower CPU
priority so it yields to the grading at hand), still privileged, waiting. ``spawn`` hands the
spare the worker's descriptors (a socketpair to the grader, two pipes for stdout and stderr);
the spare applies its limits, drops to an unprivileged uid of its own and says hello — about a
millisecond — and the zygote prepares the next spare.

Process tree: zygote (child subreaper) → intermediate (enters the namespaces, forks, exits) →
spare/worker (PID 1 of its PID namespace; reparented to the zygote). The zygote reaps a worker
only when the grader asks (``reap``/``release``), so a worker's pid is never recycled while the
grader may still signal it.

A batch's grading processes each need a zygote too: the batch's coordinator starts one while it
prepares, and each grading process gets a *clone* of it (``ZygoteClient.clone``, ``adopt``): a
fork of that zygote, with its own control channel, jail directories and workers, so the batch
imports torch for its workers once. A clone is a fork of a process that only ever imported
modules, never of a grader.

Control messages are single SOCK_SEQPACKET packets encoded with ``codec`` (descriptors travel as
SCM_RIGHTS):

    grader -> zygote                                  zygote -> grader
    ("spawn", seq, device, limits, isolate) + 3 fds   ("spawned", seq, pid) | ("failed", seq, why)
    ("reap", seq, pid, timeout)                       ("reaped", seq, status | None, cpu seconds)
    ("release", pid)                                  (no answer)
    ("clone", seq) + 1 fd (the clone's channel)       ("cloned", seq, pid) | ("failed", seq, why)
                                                      and, on that channel, the clone's "ready"
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import gc
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rnngrade.errors import SandboxError
from rnngrade.sandbox import isolation
from rnngrade.sandbox.channel import ChannelClosed, ChannelTimeout, recv_packet, send_packet
from rnngrade.sandbox.codec import ProtocolError

UID_BASE = 1 << 28
START_TIMEOUT = 180.0
SPARE_TIMEOUT = 60.0
SPARE_NICE = 10
ZYGOTE_ENV = isolation.KEPT_ENV | {"PATH"}
# The zygote's configuration arrives over the socket, not on its command line (which its
# workers, forked from it, can read in /proc/1/cmdline).
_BOOT = ("import json, socket, sys; s = socket.socket(fileno=int(sys.argv[1])); "
         "c = json.loads(s.recv(1 << 20)); fd = s.detach(); sys.path[:] = c['path']; "
         "from rnngrade.sandbox.zygote import main; main(fd, c['hidden'], c['imports'])")


class SandboxUnavailable(SandboxError, RuntimeError):
    """The sandbox cannot run here, or cannot protect the grader here (a grader error: never the
    submission's)."""


# ================================================================ the zygote process itself

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
                        message, fds = recv_packet(self.ctl)
                    except (ChannelClosed, OSError):
                        return
                    except ProtocolError:
                        continue
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

    def _handle(self, message: object, fds: list[int]) -> None:
        try:
            if type(message) is tuple and message:
                self._dispatch(message, fds)
        finally:
            for fd in fds:
                _close(fd)

    def _dispatch(self, message: tuple[Any, ...], fds: list[int]) -> None:
        op = message[0]
        if op == "spawn" and len(fds) == 3:
            _, seq, device, limits, isolate = message
            self._spawn(seq, str(device), dict(limits), bool(isolate), fds)
        elif op == "reap":
            _, seq, pid, timeout = message
            self._reap(seq, int(pid), float(timeout))
        elif op == "clone" and len(fds) == 1:
            self._clone(int(message[1]), fds[0])
        elif op == "release":
            pid = int(message[1])
            if pid in self.workers:
                self.workers.discard(pid)
                self.released.add(pid)
                _kill(pid)

    # ---------------------------------------------------------------- clones
    def _clone(self, seq: int, fd: int) -> None:
        """Fork a zygote for another grader, on the channel ``fd`` (see the module docstring).
        It ends when that grader closes the channel; a clone never outlives its grader's
        channel, whatever becomes of this zygote."""
        try:
            channel = socket.socket(fileno=os.dup(fd))
        except OSError as exc:
            send_packet(self.ctl, ("failed", seq, f"no channel for the clone: {exc}"))
            return
        try:
            pid = os.fork()
        except OSError as exc:
            channel.close()
            send_packet(self.ctl, ("failed", seq, f"could not fork a clone: {exc}"))
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
        send_packet(self.ctl, ("cloned", seq, pid))

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
            send_packet(channel, ("broken", f"{type(exc).__name__}: {exc}"))
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
        early: list[object] = []
        spare_pid = None
        problems: list[str] = []
        deadline = time.monotonic() + 10.0
        try:
            while spare_pid is None:
                message, fds = recv_packet(parent_end, deadline - time.monotonic())
                for fd in fds:
                    _close(fd)
                if type(message) is tuple and message and message[0] == "forked":
                    spare_pid, problems = int(message[1]), list(message[2])
                else:
                    early.append(message)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError, ValueError):
            parent_end.close()
            return None
        finally:
            if not _wait(pid, 5.0):
                self.released.add(pid)  # reaped in the background
        spare = _Spare(spare_pid, parent_end, key, uid, problems=problems)
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
        send_packet(child_end, ("forked", pid, problems))

    def _spare_message(self, spare: _Spare) -> None:
        try:
            message, fds = recv_packet(spare.sock, 0.0)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError):
            self._drop_spare(spare)
            return
        for fd in fds:
            _close(fd)
        self._spare_said(spare, message)

    def _spare_said(self, spare: _Spare, message: object) -> None:
        if type(message) is tuple and message and message[0] == "ready":
            spare.ready = True
            spare.problems += [str(p) for p in message[1]]

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
    def _spawn(self, seq: int, device: str, limits: dict, isolate: bool, fds: list[int]) -> None:
        key = (device, isolate, int(limits.get("disk_bytes", 128 << 20)))
        self.want = key
        spare = self._take_spare(key)
        if spare is None:
            send_packet(self.ctl, ("failed", seq, "could not start a worker process"))
            return
        try:
            send_packet(spare.sock, ("assign", limits), fds)
        except OSError as exc:
            self._drop_spare(spare)
            send_packet(self.ctl, ("failed", seq, f"the worker process was lost: {exc}"))
            return
        spare.sock.close()
        self.workers.add(spare.pid)
        send_packet(self.ctl, ("spawned", seq, spare.pid))

    def _reap(self, seq: int, pid: int, timeout: float) -> None:
        if pid not in self.workers:
            send_packet(self.ctl, ("reaped", seq, None, 0.0))
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                done, status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                self.workers.discard(pid)
                send_packet(self.ctl, ("reaped", seq, None, 0.0))
                return
            if done:
                self.workers.discard(pid)
                cpu = usage.ru_utime + usage.ru_stime
                send_packet(self.ctl, ("reaped", seq, status, float(cpu)))
                return
            if time.monotonic() >= deadline:
                send_packet(self.ctl, ("reaped", seq, None, 0.0))
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
    send_packet(sock, ("ready", problems))
    try:
        message, fds = recv_packet(sock)
    except (ChannelClosed, OSError, ProtocolError):
        os._exit(0)
    if not (type(message) is tuple and message and message[0] == "assign" and len(fds) == 3):
        os._exit(0)
    sock.close()
    _renice(nice)  # prepared in the background; a submission's worker runs at full priority
    become_worker(fds[0], fds[1], fds[2], ctx, dict(message[1]), device, uid, isolate, problems)
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


def main(control_fd: int, hidden: list[str], imports: list[str]) -> None:
    """Entry point of the zygote process (see ``ZygoteClient._start``)."""
    ctl = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.umask(0o022)
    isolation.set_child_subreaper()
    try:
        _prepare(imports)
        staging = tempfile.mkdtemp(prefix="rnngrade-jail-")
        scratch = tempfile.mkdtemp(prefix="rnngrade-scratch-")
        ctx = isolation.make_context(staging, scratch, hidden)
    except BaseException as exc:  # tell the grader why, then fail
        send_packet(ctl, ("broken", f"{type(exc).__name__}: {exc}"))
        raise
    _serve(ctl, ctx)


def _serve(ctl: socket.socket, ctx: isolation.Context) -> None:
    """Say ready on ``ctl``, serve it until the grader closes it, clean up and exit."""
    send_packet(ctl, ("ready", {"pid": os.getpid(), "privileged": ctx.privileged,
                                "binds": ctx.binds, "dirs": [ctx.staging, ctx.scratch]}))
    zygote = _Zygote(ctl, ctx)
    try:
        zygote.run()
    finally:
        zygote.shutdown()
    # Everything is cleaned up: skip the interpreter's own teardown (torch's takes a while), which
    # the grader would wait for on its way out.
    os._exit(0)


# ================================================================ the grader's side

def _hidden_paths() -> list[str]:
    """Grader paths a worker must not see: the course repository, the grader's directory, the
    cache of the reference's figures."""
    paths = []
    try:
        from rnngrade.paths import course_root

        paths.append(str(course_root()))
    except Exception:  # noqa: BLE001 - no course checkout: nothing to hide there
        pass
    from rnngrade.paths import cache_dir

    cache = cache_dir()
    if cache is not None:
        paths.append(str(cache))
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    jail_dirs = ("/", "/tmp", "/proc", "/dev", "/etc", "/sys", isolation.WORKDIR) + tuple(
        "/" + d for d in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"))
    if not any(cwd == d or cwd.startswith(d.rstrip("/") + "/") for d in jail_dirs[2:]) \
            and cwd not in jail_dirs and cwd not in paths:
        paths.append(cwd)
    return paths


class _Elsewhere:
    """The part of ``Popen`` a client uses, for a zygote that is not this process's child (a
    clone: its parent is the zygote it was forked from, which reaps it)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd = -1
        with contextlib.suppress(OSError, AttributeError):
            self._fd = os.pidfd_open(pid)

    def _ended(self, timeout: float) -> bool:
        if self._fd >= 0:
            return bool(select.select([self._fd], [], [], timeout)[0])
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def poll(self) -> int | None:
        return 0 if self._ended(0.0) else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended(3600.0 if timeout is None else timeout):
            raise subprocess.TimeoutExpired("zygote", timeout or 0.0)
        _close(self._fd)
        self._fd = -1
        return 0

    def kill(self) -> None:
        if self._fd >= 0 and hasattr(signal, "pidfd_send_signal"):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._fd, signal.SIGKILL)
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)


@dataclass
class _PendingSpawn:
    """A spawn request sent ahead of need: its sequence number and the grader's ends."""

    seq: int
    key: tuple
    sock: socket.socket
    out_r: int
    err_r: int

    def close(self) -> None:
        self.sock.close()
        _close(self.out_r)
        _close(self.err_r)


def _spawn_key(device: str, limits: dict, isolate: bool) -> tuple:
    return (device, repr(sorted(limits.items())), isolate)


class ZygoteClient:
    """The grader's connection to its zygote. Thread-safe; one request at a time.

    It can keep one worker on standby (``prepare``): asked for when a worker is done with, it
    starts and says hello while the grader gets on with other work, and the next ``spawn`` with
    the same settings hands it out at once."""

    def __init__(self, adopted: tuple[socket.socket, int] | None = None) -> None:
        """Start a zygote, or with ``adopted`` (a channel and a pid, from ``clone`` in
        another process) use that clone."""
        self._lock = threading.Lock()
        self._seq = 0
        self._replies: dict[int, tuple] = {}  # answers that arrived while awaiting another
        self._standby: _PendingSpawn | None = None
        self.owner = os.getpid()
        self.info: dict = {}
        self.process: subprocess.Popen | _Elsewhere
        if adopted is None:
            self._start()
        else:
            self.sock, pid = adopted
            self.process = _Elsewhere(pid)
            self._ready()

    def clone(self) -> tuple[socket.socket, int]:
        """A zygote for another grader process, forked from this one: its channel and pid, to
        hand to that process (which calls ``adopt``). This process must not use the channel."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            reply = self._request(("clone",), [theirs.fileno()], timeout=SPARE_TIMEOUT)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        if reply[0] != "cloned":
            ours.close()
            raise SandboxUnavailable(f"could not clone the zygote: {reply[2:]}")
        return ours, int(reply[2])

    def _start(self) -> None:
        if sys.platform != "linux":
            raise SandboxUnavailable("the sandbox needs Linux (namespaces, setrlimit, pidfd)")
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV}
        env.update(isolation.ONE_THREAD_ENV)
        # torch.cuda.is_available() through NVML: an import that asks (torch._dynamo's, say)
        # leaves CUDA uninitialised in the zygote, so its forked workers can still use it
        env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        env.setdefault("MALLOC_ARENA_MAX", "2")  # fewer 64 MiB arenas under RLIMIT_AS
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-E", "-s", "-c", _BOOT, str(child.fileno())],
                pass_fds=(child.fileno(),), env=env, cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True)
        finally:
            child.close()
        self.sock = parent
        try:
            parent.send(json.dumps({"path": paths, "hidden": _hidden_paths(),
                                    "imports": sorted(_IMPORTS)}).encode())
        except OSError as exc:
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start ({exc})"
                                     ) from None
        self._ready()

    def _ready(self) -> None:
        """Wait for the zygote's "ready" (its facts into ``info``)."""
        try:
            message, _ = recv_packet(self.sock, START_TIMEOUT)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError) as exc:
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start ({exc})"
                                     ) from None
        if not (type(message) is tuple and message and message[0] == "ready"):
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start: {message!r}")
        self.info = dict(message[1])

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and self.sock.fileno() >= 0

    @property
    def on_standby(self) -> tuple | None:
        """The settings (device, limits, isolation) of the worker on standby, if one is."""
        standby = self._standby
        return standby.key if standby is not None else None

    def _request(self, message: tuple, fds: Sequence[int] = (), timeout: float = SPARE_TIMEOUT * 3
                 ) -> tuple:
        with self._lock:
            return self._await(self._send(message, fds), timeout)

    def _send(self, message: tuple, fds: Sequence[int] = ()) -> int:
        """Send a request (the lock held); its sequence number."""
        self._seq += 1
        try:
            send_packet(self.sock, (message[0], self._seq, *message[1:]), fds)
        except OSError as exc:
            raise SandboxUnavailable(f"lost the sandbox's zygote process ({exc})") from None
        return self._seq

    def _await(self, seq: int, timeout: float) -> tuple:
        """The answer to request ``seq`` (the lock held); answers to others are kept."""
        deadline = time.monotonic() + timeout
        try:
            while seq not in self._replies:
                reply, extra = recv_packet(self.sock, deadline - time.monotonic())
                for fd in extra:
                    _close(fd)
                if type(reply) is tuple and len(reply) >= 2 and type(reply[1]) is int \
                        and reply[1] <= self._seq:
                    self._replies[reply[1]] = reply
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError) as exc:
            raise SandboxUnavailable(f"lost the sandbox's zygote process ({exc})") from None
        return self._replies.pop(seq)

    def spawn(self, device: str, limits: dict, isolate: bool = True, *, fresh: bool = False
              ) -> tuple[int, socket.socket, int, int]:
        """A new worker: (pid, channel, stdout read end, stderr read end); the one on standby
        when its settings match, unless ``fresh``."""
        key = _spawn_key(device, limits, isolate)
        with self._lock:
            pending = None if fresh else self._take_standby(key)
            if pending is not None:
                try:
                    return self._finish(pending)
                except SandboxUnavailable:
                    if not self.alive:
                        raise  # otherwise that one failed to start: ask for a fresh one
            return self._finish(self._ask(device, limits, isolate, key))

    def prepare(self, device: str, limits: dict, isolate: bool = True) -> None:
        """Ask now for the worker that the next ``spawn`` with these settings will want, so it
        starts while the grader does other work (call it when a worker is done with, so the
        zygote's spare, prepared meanwhile, is ready to go)."""
        key = _spawn_key(device, limits, isolate)
        with self._lock:
            if self.on_standby == key:
                return
            self._take_standby(key)  # one with other settings is dropped
            with contextlib.suppress(SandboxUnavailable):
                self._standby = self._ask(device, limits, isolate, key)

    def _take_standby(self, key: tuple) -> _PendingSpawn | None:
        """The worker on standby if it has these settings (the lock held); one with other
        settings is dropped. Either way none is on standby afterwards."""
        pending, self._standby = self._standby, None
        if pending is not None and pending.key != key:
            self._drop(pending)
            return None
        return pending

    def _drop(self, pending: _PendingSpawn) -> None:
        """Forget a worker asked for but no longer wanted (the lock held)."""
        try:
            pid = self._finish(pending)[0]
        except SandboxUnavailable:
            return  # its descriptors are closed; the zygote ends what it may have started
        pending.close()
        with contextlib.suppress(OSError):
            send_packet(self.sock, ("release", pid))

    def _ask(self, device: str, limits: dict, isolate: bool, key: tuple) -> _PendingSpawn:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            seq = self._send(("spawn", device, limits, isolate), [theirs.fileno(), out_w, err_w])
        except BaseException:
            for fd in (out_r, err_r):
                _close(fd)
            ours.close()
            raise
        finally:
            theirs.close()
            _close(out_w)
            _close(err_w)
        return _PendingSpawn(seq, key, ours, out_r, err_r)

    def _finish(self, pending: _PendingSpawn) -> tuple[int, socket.socket, int, int]:
        try:
            reply = self._await(pending.seq, SPARE_TIMEOUT * 3)
        except BaseException:
            pending.close()
            raise
        if reply[0] != "spawned":
            pending.close()
            raise SandboxUnavailable(f"could not start a worker: {reply[2:]}")
        return int(reply[2]), pending.sock, pending.out_r, pending.err_r

    def reap(self, pid: int, timeout: float) -> tuple[int | None, float]:
        """(wait status, CPU seconds) of a worker that has ended; status None when it has not
        ended within ``timeout`` (or is unknown)."""
        reply = self._request(("reap", pid, timeout), timeout=timeout + 10.0)
        status = reply[2]
        return (int(status) if type(status) is int else None), float(reply[3])

    def release(self, pid: int) -> None:
        """Kill (if needed) and forget a worker; the zygote reaps it in the background."""
        with self._lock:
            try:
                send_packet(self.sock, ("release", pid))
            except OSError:
                pass

    def close(self) -> None:
        if self._standby is not None:
            self._standby.close()
            self._standby = None
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for path in self.info.get("dirs", []):  # left behind when the zygote was killed
            if type(path) is str and os.path.basename(path).startswith("rnngrade-"):
                with contextlib.suppress(OSError):
                    os.rmdir(path)  # only ever an empty directory


_CLIENT: ZygoteClient | None = None
_IMPORTS: set[str] = set()  # what a zygote started from now on imports for its workers
_CLIENT_LOCK = threading.Lock()
_STARTING: threading.Thread | None = None  # start_soon's, until shared_client has waited for it


def start_soon(imports: Iterable[str] = ()) -> None:
    """Start this process's zygote in the background, so that it imports what the workers need
    while the grader loads its own modules, lab and suite; ``shared_client`` waits for it. The
    zygote is the same fresh interpreter as when started on first use. A failed start is left to
    ``shared_client``, which tries again and says why. ``imports``: modules the workers of the
    lab about to be graded should find imported (its ``worker_imports``); every zygote started
    from now on imports them once for all its workers (one already running keeps what it has:
    its workers import the rest themselves)."""
    _IMPORTS.update(imports)
    global _STARTING
    with _CLIENT_LOCK:
        client = _CLIENT
        if _STARTING is not None or (client is not None and client.owner == os.getpid()
                                     and client.alive):
            return
        _STARTING = threading.Thread(target=_start_in_background, name="rnngrade-zygote",
                                     daemon=True)
        _STARTING.start()


def _start_in_background() -> None:
    global _CLIENT
    try:
        client = ZygoteClient()
    except Exception:  # noqa: BLE001 - shared_client starts one again and reports the failure
        return
    with _CLIENT_LOCK:
        kept = _CLIENT is None or _CLIENT.owner != os.getpid() or not _CLIENT.alive
        if kept:
            _CLIENT = client
    if not kept:  # one was started meanwhile
        client.close()


def _await_start() -> None:
    """Wait for the zygote that ``start_soon`` is starting, if it is."""
    global _STARTING
    starting = _STARTING
    if starting is not None:
        starting.join()
        with _CLIENT_LOCK:
            if _STARTING is starting:
                _STARTING = None


def shared_client() -> ZygoteClient:
    """This process's zygote, started on first use and again if it died."""
    global _CLIENT
    _await_start()
    with _CLIENT_LOCK:
        client = _CLIENT
        if client is None or client.owner != os.getpid() or not client.alive:
            if client is not None and client.owner == os.getpid():
                client.close()
            _CLIENT = client = ZygoteClient()
        return client


def adopt(channel: socket.socket, pid: int) -> None:
    """Make the clone on ``channel`` (see ``ZygoteClient.clone``) this process's zygote; when it
    cannot be used, ``shared_client`` starts one as usual."""
    global _CLIENT
    try:
        client = ZygoteClient((channel, pid))
    except SandboxUnavailable:
        return
    with _CLIENT_LOCK:
        previous, _CLIENT = _CLIENT, client
    if previous is not None and previous.owner == os.getpid():
        previous.close()


def close_shared_client() -> None:
    """Stop this process's zygote (and with it every worker it started)."""
    global _CLIENT
    _await_start()
    with _CLIENT_LOCK:
        client, _CLIENT = _CLIENT, None
    if client is not None and client.owner == os.getpid():
        client.close()


def _forget_after_fork() -> None:
    """A forked copy of the grader starts a zygote of its own when it needs one: it must neither
    talk to this process's zygote nor hold its channel open."""
    global _CLIENT, _CLIENT_LOCK, _STARTING
    client, _CLIENT = _CLIENT, None
    _CLIENT_LOCK = threading.Lock()
    _STARTING = None  # the parent's starting thread does not exist here
    if client is not None:
        try:
            os.close(client.sock.detach())
        except OSError:
            pass
        if client._standby is not None:  # the parent's worker: only our copies of its ends
            client._standby.close()
            client._standby = None


atexit.register(close_shared_client)
os.register_at_fork(after_in_child=_forget_after_fork)

"""The grader's side of the zygote: ``ZygoteClient`` starts a zygote process (``server``) or
adopts a clone of one, and asks it for workers in the messages of ``protocol``; ``shared_client``
is this process's one client.

One zygote per grader process, started lazily by ``shared_client()`` as a fresh interpreter (it
never holds anything of the grader's: no reference, no hidden suite, no submission source) with a
scrubbed environment; ``start_soon`` starts it in the background ahead of need.

Every answer goes through ``protocol.decode_message``: one that does not decode, answers a request
never made or is of the wrong kind raises ``SandboxUnavailable`` (a grader error) saying so, as
does a lost channel.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rnngrade.errors import SandboxError
from rnngrade.sandbox import isolation
from rnngrade.sandbox.channel import ChannelClosed, ChannelTimeout
from rnngrade.sandbox.codec import ProtocolError
from rnngrade.sandbox.zygote.protocol import (
    ANSWERS,
    GREETINGS,
    SPARE_TIMEOUT,
    Answer,
    Boot,
    Broken,
    Clone,
    Cloned,
    Failure,
    Ready,
    Reap,
    Reaped,
    Release,
    Spawn,
    Spawned,
    encode_boot,
    recv_message,
    send_message,
)

START_TIMEOUT = 180.0
ZYGOTE_ENV = isolation.KEPT_ENV | {"PATH"}
# The zygote's configuration arrives over the socket, not on its command line (which its
# workers, forked from it, can read in /proc/1/cmdline); its ``path`` is read before rnngrade can
# be imported (``protocol.Boot``).
_BOOT = ("import json, socket, sys; s = socket.socket(fileno=int(sys.argv[1])); "
         "b = s.recv(1 << 20); fd = s.detach(); sys.path[:] = json.loads(b)['path']; "
         "from rnngrade.sandbox.zygote.server import main; main(fd, b)")

A = TypeVar("A", bound=Answer)


class SandboxUnavailable(SandboxError, RuntimeError):
    """The sandbox cannot run here, or cannot protect the grader here (a grader error: never the
    submission's)."""


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
        self._replies: dict[int, Answer] = {}  # answers that arrived while awaiting another
        self._standby: _PendingSpawn | None = None
        self.owner = os.getpid()
        self.info: Ready | None = None  # the zygote's facts, once it has said ready
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
            reply = self._request(Clone, [theirs.fileno()], timeout=SPARE_TIMEOUT)
            return ours, _expect(reply, Cloned, "could not clone the zygote").pid
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()

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
            parent.send(encode_boot(Boot(tuple(paths), tuple(_hidden_paths()),
                                         tuple(sorted(_IMPORTS)))))
        except OSError as exc:
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start ({exc})"
                                     ) from None
        self._ready()

    def _ready(self) -> None:
        """Wait for the zygote's ``Ready`` (its facts into ``info``)."""
        try:
            message, _ = recv_message(self.sock, GREETINGS, START_TIMEOUT)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError) as exc:
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start ({exc})"
                                     ) from None
        if isinstance(message, Broken):
            self.close()
            raise SandboxUnavailable(f"the sandbox's zygote process did not start: {message.why}")
        self.info = message

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and self.sock.fileno() >= 0

    @property
    def on_standby(self) -> tuple | None:
        """The settings (device, limits, isolation) of the worker on standby, if one is."""
        standby = self._standby
        return standby.key if standby is not None else None

    def _request(self, request: Callable[[int], Spawn | Reap | Clone], fds: Sequence[int] = (),
                 timeout: float = SPARE_TIMEOUT * 3) -> Answer:
        with self._lock:
            return self._await(self._send(request, fds), timeout)

    def _send(self, request: Callable[[int], Spawn | Reap | Clone], fds: Sequence[int] = ()
              ) -> int:
        """Send ``request`` (given its sequence number: the lock held); that number."""
        self._seq += 1
        try:
            send_message(self.sock, request(self._seq), fds)
        except OSError as exc:
            raise SandboxUnavailable(f"lost the sandbox's zygote process ({exc})") from None
        return self._seq

    def _await(self, seq: int, timeout: float) -> Answer:
        """The answer to request ``seq`` (the lock held); answers to others are kept."""
        deadline = time.monotonic() + timeout
        try:
            while seq not in self._replies:
                reply, _ = recv_message(self.sock, ANSWERS, deadline - time.monotonic())
                if not 0 < reply.seq <= self._seq:
                    raise ProtocolError(f"an answer to request {reply.seq}, never made")
                self._replies[reply.seq] = reply
        except ProtocolError as exc:
            raise SandboxUnavailable(f"the sandbox's zygote process sent a malformed message "
                                     f"({exc})") from None
        except (ChannelClosed, ChannelTimeout, OSError) as exc:
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
            send_message(self.sock, Release(pid))

    def _ask(self, device: str, limits: dict, isolate: bool, key: tuple) -> _PendingSpawn:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            seq = self._send(lambda seq: Spawn(seq, device, limits, isolate),
                             [theirs.fileno(), out_w, err_w])
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
            pid = _expect(reply, Spawned, "could not start a worker").pid
        except BaseException:
            pending.close()
            raise
        return pid, pending.sock, pending.out_r, pending.err_r

    def reap(self, pid: int, timeout: float) -> tuple[int | None, float]:
        """(wait status, CPU seconds) of a worker that has ended; status None when it has not
        ended within ``timeout`` (or is unknown)."""
        reply = self._request(lambda seq: Reap(seq, pid, timeout), timeout=timeout + 10.0)
        reaped = _expect(reply, Reaped, "could not reap a worker")
        return reaped.status, reaped.cpu

    def release(self, pid: int) -> None:
        """Kill (if needed) and forget a worker; the zygote reaps it in the background."""
        with self._lock:
            try:
                send_message(self.sock, Release(pid))
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
        for path in self.info.dirs if self.info is not None else ():  # when it was killed
            if os.path.basename(path).startswith("rnngrade-"):
                with contextlib.suppress(OSError):
                    os.rmdir(path)  # only ever an empty directory


def _expect(reply: Answer, kind: type[A], failing: str) -> A:
    """``reply`` as the ``kind`` of answer its request wants; a ``Failure`` raises
    SandboxUnavailable with ``failing`` and the zygote's reason, another kind says it is
    malformed."""
    if isinstance(reply, kind):
        return reply
    if isinstance(reply, Failure):
        raise SandboxUnavailable(f"{failing}: {reply.why}")
    raise SandboxUnavailable(f"the sandbox's zygote process sent a malformed message "
                             f"(a {reply.TAG!r} answer where a {kind.TAG!r} was due)")


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


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

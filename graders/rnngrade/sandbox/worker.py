"""The worker: the jailed process that loads one submission and answers calls into it.

Everything here runs on the untrusted side. It decodes requests, calls the student (or a grader
helper beside the student), and encodes the answer; the grader trusts none of what comes back and
checks every byte (``protocol.decode_reply``). Its messages are the types of ``protocol``.
"""

from __future__ import annotations

import errno
import faulthandler
import io
import os
import re
import socket
import sys
import tempfile
import time
import types
from collections.abc import Callable
from typing import Any

import rnngrade.suite.worker  # noqa: F401 - what labs' helpers import, run after the jail
from rnngrade.harness.runner.base import (
    EXCEPTION,
    EXIT,
    LOAD_ERROR,
    MEMORY,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    OUTPUT_LIMIT,
    PROTOCOL,
)
from rnngrade.harness.runner.inprocess import (
    describe_exception,
    missing_message,
    not_implemented_message,
    resolve_function_refs,
    student_failure,
)
from rnngrade.harness.source.module_builder import build_module
from rnngrade.harness.worker_helpers import GENERIC, Registry, with_lab_helpers
from rnngrade.limits import describe_bytes
from rnngrade.sandbox import isolation, seccomp
from rnngrade.sandbox.channel import ChannelClosed, recv_frame, send_frame
from rnngrade.sandbox.codec import HandleTable, ProtocolError, decode, encode
from rnngrade.sandbox.protocol import (
    MAX_FUNCTIONS,
    MESSAGE_CHARS,
    NAME_CHARS,
    Call,
    Exit,
    Failed,
    Found,
    Has,
    Hello,
    Load,
    Loaded,
    Message,
    Value,
    cap_notes,
    cap_text,
    decode_request,
    encode_message,
)
from rnngrade.sandbox.unchanged import ArgumentGuard

SHARED_MEMORY = "shared memory bounded"
SPIN_SECONDS = 100e-6  # unpinned: how long to poll for the next request before sleeping
_FILENAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.py$")


class _State:
    def __init__(self, sock: socket.socket, limits: dict) -> None:
        self.sock = sock
        self.limits = limits
        self.module: types.ModuleType | None = None
        self.fatal: str | None = None
        self.handles = HandleTable()
        self.pid = os.getpid()
        self.helpers: Registry = GENERIC


def become_worker(chan_fd: int, out_fd: int, err_fd: int, ctx: isolation.Context, limits: dict,
                  device: str, uid: int, isolate: bool, problems: list[str]) -> None:
    """Turn this (assigned spare) process into the worker and serve until the grader leaves."""
    problems = list(problems)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    keep = {0, 1, 2, chan_fd}
    for fd in _open_fds():
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    sys.stdin = open(0, closefd=False)  # the process's own descriptor
    # The original streams are replaced too: the student's code may write to them.
    sys.stdout = sys.__stdout__ = _text_stream(1)  # type: ignore[misc]  # Final in typeshed only
    sys.stderr = sys.__stderr__ = _text_stream(2)  # type: ignore[misc]  # Final in typeshed only
    # A fatal signal leaves its name and the student's line on stderr (the grader reads it
    # to tell an abort from a segmentation fault).
    faulthandler.enable(file=2, all_threads=False)
    if isolate and os.path.isfile(isolation.JAIL_MARKER):
        workdir = isolation.WORKDIR
    else:  # no jail (it will refuse, or it runs trusted code): in the zygote's scratch dir
        workdir = tempfile.mkdtemp(prefix="work-", dir=ctx.scratch or None)
        if isolate and ctx.privileged:
            os.chown(workdir, uid, uid)
    isolation.apply_limits(limits, device, own_uid=isolate and ctx.privileged)
    if isolate:
        try:
            problems += isolation.drop_privileges(uid, uid, ctx.privileged)
        except OSError as exc:
            problems.append(f"dropping privileges: {exc}")
    isolation.scrub_environment()
    if workdir != isolation.WORKDIR:
        os.environ["HOME"] = workdir
    os.chdir(workdir)
    sys.path[:] = [p for p in sys.path if p and os.path.isdir(p)]
    unfiltered: str | None = "isolation disabled"
    cuda = device.startswith("cuda")
    if isolate:
        isolation.hide_initial_environment()
        # last: it may refuse what the steps above need
        unfiltered = seccomp.install(uncounted_memory=cuda)
    protections, details = isolation.verify(ctx, limits, device)
    protections["system call filter"] = seccomp.in_force()
    if unfiltered and not protections["system call filter"]:
        details["system call filter"] = unfiltered
    shared = SHARED_MEMORY
    protections[shared] = seccomp.uncounted_memory_closed() and isolation.one_disk()
    if cuda and not protections[shared]:
        details[shared] = ("memfd_create and shmget stay open for the CUDA driver, which needs "
                           "them; their memory is not counted by the worker's memory limit")
    if problems:
        details["problems"] = "; ".join(problems)
    sock = socket.socket(fileno=chan_fd)
    sock.setblocking(True)
    state = _State(sock, limits)
    _send(state, Hello(protections, details))
    serve(state)


_WARM_UP_SOURCE = """
import numpy as np
import torch


def cell(x, h, p):
    a = np.tanh(p["W"] @ h + p["U"] @ x + p["b"])
    z = a - np.max(a, axis=0, keepdims=True)
    e = np.exp(z)
    return a, e / np.sum(e, axis=0, keepdims=True), (a, h, x, p)


def batch(X, W):
    return torch.stack([torch.tanh(X @ W.T), torch.sigmoid(X @ W.T)], dim=1)
"""


def warm_up() -> None:
    """The paths every worker takes, run with made-up data in the spare before it is assigned:
    their copy-on-write page faults (and first-call caches) are paid before a submission waits.
    Trusted code only; small sizes, so no BLAS or OpenMP thread pool starts."""
    import numpy as np
    import torch

    built = build_module(_WARM_UP_SOURCE, "warmup.py", module_name="warmup")
    sys.modules.pop("warmup", None)
    handles = HandleTable()
    for dtype in (np.float64, np.float32):
        p = {k: np.linspace(-1.0, 1.0, n * m, dtype=dtype).reshape(n, m)
             for k, n, m in (("W", 4, 4), ("U", 4, 3), ("b", 4, 1))}
        args = (np.ones((3, 2), dtype), np.zeros((4, 2), dtype), p)
        kind, parts = encode_message(Call(1, "cell", args, {}))
        request = decode_request(kind, _joined(parts), handles)
        assert isinstance(request, Call)
        value = built.module.cell(*request.args)
        decode(_joined(encode_message(Value(1, value, request.args, {}), handles)[1]))
    for torch_dtype in (torch.float64, torch.float32):
        x, w = decode(_joined(encode((torch.ones(2, 3, 4, dtype=torch_dtype),
                                      torch.ones(5, 4, dtype=torch_dtype)))))
        out = built.module.batch(x, w)
        decode(_joined(encode(out, handles=handles)))


def _joined(parts: list) -> bytearray:
    return bytearray(b"".join(bytes(part) for part in parts))


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _text_stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8",
                            errors="backslashreplace")


def _send(state: _State, message: Message) -> None:
    try:
        send_frame(state.sock, *encode_message(message, state.handles))
    except (ChannelClosed, OSError):
        os._exit(0)


def serve(state: _State) -> None:
    """Answer requests until the grader closes the channel or asks us to exit."""
    while True:
        if not _pinned():
            _await_request(state.sock)
        try:
            kind, payload = recv_frame(state.sock)
        except (ChannelClosed, OSError, ProtocolError):
            os._exit(0)
        decoded: dict = {}
        try:
            message = decode_request(kind, payload, state.handles, decoded)
        except ProtocolError as exc:
            _send(state, Failed(-1, PROTOCOL, f"bad request: {exc}", False))
            continue
        if type(message) is Call:
            args, kwargs = message.args, message.kwargs
            guard = ArgumentGuard((args, kwargs), payload, decoded.get("in_place", False))
            _call(state, message.seq, message.name, args, kwargs, message.helper, guard,
                  message.head)
            del message, payload, args, kwargs, guard
            continue
        del payload
        if type(message) is Has:
            try:
                found = callable(getattr(state.module, message.name, None))
            except BaseException:  # noqa: BLE001 - a module __getattr__ of the student's
                found = False
            _send(state, Found(message.seq, bool(found)))
        elif type(message) is Load:
            _load(state, message.source, message.filename, message.handle_base,
                  message.helpers)
        else:
            assert type(message) is Exit
            _flush()
            os._exit(0)


def _pinned() -> bool:
    """Whether this worker is held on one CPU (the grader's: see ``affinity``)."""
    try:
        return len(os.sched_getaffinity(0)) == 1
    except (AttributeError, OSError):
        return False


def _await_request(sock: socket.socket) -> None:
    """Poll briefly before sleeping: a request that follows at once (the grader's next call)
    then costs no wake-up of an idle CPU, which is slow on virtual machines. Not on a single
    CPU, where polling would only keep the grader waiting."""
    until = time.perf_counter() + SPIN_SECONDS
    while time.perf_counter() < until:
        try:
            if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                return
        except BlockingIOError:
            continue
        except OSError:
            return
        return  # end of stream: the blocking read says so


def _load(state: _State, source: str, filename: str, handle_base: int, helpers: str) -> None:
    state.handles = HandleTable(handle_base)
    if helpers:  # the lab's own helpers, checked by the grader already; run before the student's
        try:
            state.helpers = with_lab_helpers(helpers, "<lab helpers>")
        except BaseException as exc:  # noqa: BLE001 - reported, never blamed on the student
            state.helpers = GENERIC
            print(f"the lab's helpers failed in the worker: {type(exc).__name__}",
                  file=sys.stderr)
    if not _FILENAME.match(filename):
        filename = "submission.py"
    try:
        with open(filename, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(source)
    except OSError:
        pass  # the module is built from the text either way
    try:
        built = build_module(source, filename, lab_modules=state.helpers.modules)
    except KeyboardInterrupt:
        state.fatal = "the submission's top-level code raised KeyboardInterrupt"
        state.module = types.ModuleType("submission")
        notes: list[str] = []
    else:
        state.module, state.fatal, notes = built.module, built.fatal, built.notes
        if state.fatal is not None:
            state.fatal = cap_text(str(state.fatal), MESSAGE_CHARS)
    _flush()
    _send(state, Loaded(cap_notes([str(n) for n in notes]), state.fatal,
                        _functions(state.module)))


def _functions(module: types.ModuleType) -> tuple[str, ...]:
    """The public names the loaded module binds to plain functions (the grader needs no round
    trip to learn that they exist; anything else it still asks about)."""
    try:
        return tuple([name for name, value in dict(vars(module)).items()
                      if type(name) is str and not name.startswith("_")
                      and len(name) <= NAME_CHARS
                      and type(value) is types.FunctionType][:MAX_FUNCTIONS])
    except BaseException:  # noqa: BLE001 - a module namespace the student tampered with
        return ()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: BLE001 - a stream the student replaced
            pass


def _call(state: _State, seq: int, name: str, args: tuple, kwargs: dict,
          is_helper: bool, guard: ArgumentGuard, head: Any = None) -> None:
    module = state.module
    if state.fatal or module is None:
        _send(state, Failed(seq, LOAD_ERROR, state.fatal or "not loaded", False))
        return
    recycle = False
    try:
        target = _target(state, module, name, is_helper)
        if target is None:
            _send(state, Failed(seq, MISSING_FUNCTION,
                                _short(missing_message(module, name)), False))
            return
        functions = state.helpers.functions
        call_args = tuple(resolve_function_refs(a, args, functions) for a in args)
        call_kwargs = {k: resolve_function_refs(v, args, functions) for k, v in kwargs.items()}
        value = target(*call_args, **call_kwargs)
    except NotImplementedError as exc:
        kind, message = NOT_IMPLEMENTED, _not_implemented(exc, module, name)
    except MemoryError:
        kind, recycle = MEMORY, True
        message = f"{name} killed: memory limit {describe_bytes(state.limits['memory_bytes'])}"
    except SystemExit as exc:
        kind = EXIT
        message = (f"{name} tried to end the worker process (SystemExit"
                   f"{'(' + _short(repr(exc.code)) + ')' if exc.code is not None else ''}, "
                   "e.g. sys.exit or exit)")
    except OSError as exc:
        kind, message = _os_failure(state, exc, module, name)
    except BaseException as exc:  # noqa: BLE001 - whatever the student raised
        kind, message = _classify(exc, module, name)
    else:
        if os.getpid() != state.pid:
            os._exit(0)  # a child the student forked returned here: it never answers
        _flush()
        unchanged = guard.unchanged()  # the grader's own copy is the state after the call
        if type(head) is int and type(value) in (tuple, list) and len(value) >= head >= 0:
            value = value[:head]  # the rest (caches, say) is not wanted by this check
        if unchanged:
            _reply_value(state, seq, name, value, None, None)
        else:
            _reply_value(state, seq, name, value, args, kwargs)
        return
    if os.getpid() != state.pid:
        os._exit(0)
    _flush()
    _send(state, Failed(seq, kind, message, recycle))


def _target(state: _State, module: types.ModuleType, name: str,
            is_helper: bool) -> Callable[..., Any] | None:
    """What a call runs: a lab helper bound to the student's module, or the student's own
    function `name` (None where the module has no callable of that name)."""
    if is_helper:
        helper = state.helpers.helpers[name]

        def bound(*a: Any, **k: Any) -> Any:
            return helper(module, *a, **k)
        return bound
    function = getattr(module, name, None)
    return function if callable(function) else None


def _os_failure(state: _State, exc: OSError, module: types.ModuleType,
                name: str) -> tuple[str, str]:
    """(kind, message) for an OSError out of a student's call: a sandbox limit, or the
    student's own error."""
    if exc.errno == errno.EFBIG:
        return OUTPUT_LIMIT, (f"{name} hit the file size limit "
                              f"({describe_bytes(state.limits['file_bytes'])} per file)")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OUTPUT_LIMIT, (f"{name} filled the sandbox's disk "
                              f"({describe_bytes(state.limits['disk_bytes'])})")
    return _classify(exc, module, name)


def _reply_value(state: _State, seq: int, name: str, value: Any, args: tuple | None,
                 kwargs: dict | None) -> None:
    handles = state.handles
    try:
        kind, parts = encode_message(Value(seq, value, args, kwargs), handles)
    except BaseException:  # noqa: BLE001 - say whether the value or an argument is to blame
        pass
    else:
        try:
            send_frame(state.sock, kind, parts)
        except (ChannelClosed, OSError):
            os._exit(0)
        return
    try:
        encode(value, handles=handles)
    except ProtocolError as exc:
        _send(state, Failed(seq, PROTOCOL,
                            _short(f"{name} returned a value that cannot be graded: {exc}"),
                            False))
        return
    except MemoryError:
        _send(state, Failed(seq, MEMORY, f"{name} killed: memory limit "
                            f"{describe_bytes(state.limits['memory_bytes'])}", True))
        return
    except BaseException as exc:  # noqa: BLE001 - e.g. a patched torch.Tensor method
        _send(state, Failed(seq, PROTOCOL, _short(f"{name} returned a value that cannot be "
                                                  f"sent: {type(exc).__name__}"), False))
        return
    try:
        kind, parts = encode_message(Value(seq, value, args, kwargs), handles)
    except ProtocolError as exc:
        _send(state, Failed(seq, PROTOCOL,
                            _short(f"{name} left an argument that cannot be sent back: {exc}"),
                            False))
        return
    except BaseException as exc:  # noqa: BLE001
        _send(state, Failed(seq, PROTOCOL, _short(f"{name} left an argument that cannot be sent "
                                                  f"back: {type(exc).__name__}"), True))
        return
    try:
        send_frame(state.sock, kind, parts)
    except (ChannelClosed, OSError):
        os._exit(0)


def _classify(exc: BaseException, module: types.ModuleType, name: str) -> tuple[str, str]:
    """(kind, message) as the in-process runner gives them: missing, unfinished, or raised."""
    try:
        kind, message = student_failure(exc, module, name)
        return kind, _short(message)
    except BaseException:  # noqa: BLE001 - a student exception whose str() fails
        return EXCEPTION, _describe(exc, module)


def _describe(exc: BaseException, module: types.ModuleType) -> str:
    try:
        return _short(describe_exception(exc, module))
    except BaseException:  # noqa: BLE001 - a student exception whose str() fails
        return f"{type(exc).__name__} (its message could not be shown)"


def _not_implemented(exc: NotImplementedError, module: types.ModuleType, name: str) -> str:
    try:
        return _short(not_implemented_message(exc, module, name))
    except BaseException:  # noqa: BLE001 - a student exception whose str() fails
        return f"{name}: not implemented yet"


def _text(exc: BaseException) -> str:
    try:
        return _short(str(exc))
    except BaseException:  # noqa: BLE001
        return ""


def _short(text: str) -> str:
    return cap_text(text, MESSAGE_CHARS)


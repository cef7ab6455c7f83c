"""Keeping a worker on the CPU of the grader that is waiting for it.

A call into a worker is synchronous: the grader sends, sleeps, and wakes on the reply. When the
worker sleeps on another CPU, each call wakes an idle CPU twice, which costs 100–300 µs on a
virtual machine; on the grader's own CPU the same hand-over is a context switch of a few
microseconds. So before each call the worker's main thread is pinned to the grader's current
CPU, and widened back to every CPU the grader may use once a call runs long (then the wake-up no
longer matters, and a busy CPU must not hold the worker while another one idles); widening
reaches every thread of the worker, so a thread pool born during a pinned call is freed too.

Pinning is an optimisation: where it is not possible (one CPU, no ``sched_getcpu``, not
permitted) nothing is pinned and the caller falls back to polling briefly for quick replies.
"""

from __future__ import annotations

import ctypes
import os

WIDEN_AFTER = 0.02  # seconds into a call after which the worker may run on any CPU

_getcpu = None
try:
    _libc = ctypes.CDLL(None, use_errno=True)  # the C library is already loaded
    _getcpu = _libc.sched_getcpu
    _getcpu.restype = ctypes.c_int
    _getcpu.argtypes = []
except (OSError, AttributeError):
    _getcpu = None


def allowed_cpus() -> set[int]:
    """The CPUs this process may run on (every CPU where affinity is not supported)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def available() -> bool:
    """Whether following the grader's CPU can help here: several CPUs and a way to pin."""
    return _getcpu is not None and hasattr(os, "sched_setaffinity") and len(allowed_cpus()) > 1


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now, or None."""
    if _getcpu is None:
        return None
    cpu = _getcpu()
    return cpu if cpu >= 0 else None


def set_all_threads(pid: int, cpus: set[int]) -> None:
    """Let every thread of process ``pid`` run on ``cpus``: thread pools (OpenMP, CUDA) that
    started while the process was pinned inherited its single CPU."""
    try:
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        threads = [pid]
    for tid in threads:
        set_cpus(tid, cpus)


def set_cpus(pid: int, cpus: set[int]) -> bool:
    """Restrict thread ``pid`` to ``cpus``; whether that worked (a worker that has just ended,
    or a kernel that refuses, is not an error)."""
    try:
        os.sched_setaffinity(pid, cpus)
    except (OSError, ValueError):
        return False
    return True

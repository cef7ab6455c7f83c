"""A seccomp filter that closes the kernel interfaces a worker has no use for.

Inside its jail a worker could still create user and mount namespaces of its own (and be root
there), mount, trace, load BPF programs, use the kernel keyring or performance counters, reach
the hypervisor through a socket family no namespace covers, or hold memory its limit does not
count: kernel attack surface that grading never needs. The filter makes these system calls fail
(the calling code sees an ordinary error; nothing is killed):

- ``unshare``, ``setns``, and ``clone`` with any namespace flag: EPERM;
- for a CPU worker, a new process: ``fork``, ``vfork`` and a ``clone`` that makes a process
  rather than a thread (no ``CLONE_THREAD``) fail with EPERM; threads (BLAS, torch) still start.
  Every limit of the worker (``RLIMIT_AS`` above all) is counted per process: each child would
  bring a whole new allowance. A CUDA worker keeps them (its driver's needs are not known to
  exclude a helper process);
- ``clone3`` fails with ENOSYS instead: its flags live in memory a filter cannot read, and ENOSYS
  makes the C library fall back to ``clone``, which the filter can check;
- ``mount``, ``umount2``, ``pivot_root`` and the new mount interface (``fsopen`` ...): EPERM;
- ``keyctl``, ``add_key``, ``request_key``, ``bpf``, ``ptrace``, ``perf_event_open``,
  ``userfaultfd``: EPERM;
- ``socket`` and ``socketpair`` of any family but ``AF_UNIX``, ``AF_INET``, ``AF_INET6`` (which
  the network namespace confines) and ``AF_NETLINK`` with ``NETLINK_ROUTE`` (the C library
  lists interfaces and addresses with it): EAFNOSUPPORT. ``AF_VSOCK`` (a path to the
  hypervisor), packet, Bluetooth, crypto (``AF_ALG``) sockets and the other netlink protocols
  are closed;
- for a CPU worker, the memory that its address-space limit (``RLIMIT_AS``) does not count:
  ``memfd_create``, ``memfd_secret`` and ``shmget`` fail with ENOSYS (code that has a fallback
  for a kernel without them takes it). A CUDA worker keeps them: the CUDA driver creates memfds
  when it starts, and its memory limit (``RLIMIT_DATA``) counts neither kind. The worker's
  tmpfs (working directory, ``/tmp``, ``/dev/shm``) share one size, ``Limits.disk_bytes``.

A system call of another architecture (32-bit or x32 calls on x86-64) fails with EPERM as a whole.
Installed (``install``) after the jail is built and the privileges dropped, before any student
code runs, on every thread of the worker; ``in_force`` measures it from inside.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import socket
import struct
from dataclasses import dataclass

from rnngrade.sandbox.isolation import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
)

CLONE_THREAD = 0x00010000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWTIME = 0x00000080
NAMESPACE_FLAGS = (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
                   | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

# BPF instructions and seccomp return values (linux/filter.h, linux/seccomp.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0_LOW, _ARG2_LOW = 0, 4, 16, 32  # offsets in struct seccomp_data (little endian)
_X32_BIT = 0x40000000

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK = 1, 2, 10, 16, 17, 40
NETLINK_ROUTE = 0


@dataclass(frozen=True)
class Arch:
    """System call numbers of one architecture."""

    audit: int  # AUDIT_ARCH_* of struct seccomp_data
    seccomp: int  # the seccomp(2) system call
    clone: int
    clone3: int
    unshare: int
    socket: int
    socketpair: int
    blocked: dict[str, int]  # name -> number, failing with EPERM
    uncounted: dict[str, int]  # name -> number: memory RLIMIT_AS does not count (ENOSYS)
    processes: dict[str, int]  # name -> number: calls that only make a new process (EPERM)


_COMMON = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
           "fspick": 433, "mount_setattr": 442}
ARCHES = {
    "x86_64": Arch(0xC000003E, 317, 56, 435, 272, 41, 53, {
        "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "keyctl": 250,
        "add_key": 248, "request_key": 249, "bpf": 321, "ptrace": 101, "perf_event_open": 298,
        "userfaultfd": 323, **_COMMON},
        {"memfd_create": 319, "memfd_secret": 447, "shmget": 29}, {"fork": 57, "vfork": 58}),
    "aarch64": Arch(0xC00000B7, 277, 220, 435, 97, 198, 199, {
        "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "keyctl": 219,
        "add_key": 217, "request_key": 218, "bpf": 280, "ptrace": 117, "perf_event_open": 241,
        "userfaultfd": 282, **_COMMON},
        {"memfd_create": 279, "memfd_secret": 447, "shmget": 194}, {}),  # no fork: clone
}

_libc = ctypes.CDLL(None, use_errno=True)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(arch: Arch, *, uncounted_memory: bool = False) -> bytes:
    """The filter as BPF instructions (struct sock_filter, 8 bytes each); ``uncounted_memory``:
    leave the calls of ``arch.uncounted`` and new processes open (a CUDA worker's)."""
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    code = [
        _insn(_LD_W_ABS, 0, 0, _ARCH),
        _insn(_JEQ_K, 1, 0, arch.audit),
        _insn(_RET_K, 0, 0, eperm),  # another architecture's calls: refused as a whole
        _insn(_LD_W_ABS, 0, 0, _NR),
    ]
    if arch.audit == ARCHES["x86_64"].audit:
        code += [_insn(_JGE_K, 0, 1, _X32_BIT), _insn(_RET_K, 0, 0, eperm)]  # the x32 ABI
    for number in [arch.unshare, *sorted(arch.blocked.values())]:
        code += _returns_if(number, eperm)
    if not uncounted_memory:
        for number in sorted(arch.uncounted.values()):
            code += _returns_if(number, enosys)
        for number in sorted(arch.processes.values()):
            code += _returns_if(number, eperm)
    code += _returns_if(arch.clone3, enosys)
    for number in (arch.socket, arch.socketpair):
        code += [_insn(_JEQ_K, 0, len(_FAMILIES), number), *_FAMILIES]
    # clone's flags (its first argument): the namespace bits and CLONE_THREAD are all low
    threads_only = [] if uncounted_memory else [_insn(_JSET_K, 0, 1, CLONE_THREAD)]
    code += [
        _insn(_JEQ_K, 0, 2 + len(threads_only), arch.clone),  # not clone: to the allowing return
        _insn(_LD_W_ABS, 0, 0, _ARG0_LOW),
        _insn(_JSET_K, 1 + len(threads_only), 0, NAMESPACE_FLAGS),  # to the refusal
        *threads_only,  # a thread: allowed; a process: to the refusal
        _insn(_RET_K, 0, 0, RET_ALLOW),
        _insn(_RET_K, 0, 0, eperm),
    ]
    return b"".join(code)


def _returns_if(number: int, action: int) -> list[bytes]:
    """The system call ``number`` (in the accumulator) ends in ``action``."""
    return [_insn(_JEQ_K, 0, 1, number), _insn(_RET_K, 0, 0, action)]


# socket(2) and socketpair(2): the families allowed (the domain, their first argument), and
# AF_NETLINK only for NETLINK_ROUTE (the protocol, their third); every other one refused.
_FAMILIES = [
    _insn(_LD_W_ABS, 0, 0, _ARG0_LOW),
    _insn(_JEQ_K, 6, 0, AF_UNIX),  # to the allowing return, 6 instructions on
    _insn(_JEQ_K, 5, 0, AF_INET),
    _insn(_JEQ_K, 4, 0, AF_INET6),
    _insn(_JEQ_K, 0, 2, AF_NETLINK),  # else to the refusal
    _insn(_LD_W_ABS, 0, 0, _ARG2_LOW),
    _insn(_JEQ_K, 1, 0, NETLINK_ROUTE),
    _insn(_RET_K, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
    _insn(_RET_K, 0, 0, RET_ALLOW),
]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(uncounted_memory: bool = False) -> str | None:
    """Install the filter on every thread of this process (no_new_privs set first). None when
    it is in force, else why not. ``uncounted_memory``: see ``program``."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return f"no system call filter for the {platform.machine()} architecture"
    code = program(arch, uncounted_memory=uncounted_memory)
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.addressof(buffer))
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
    result = _libc.syscall(arch.seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
                           ctypes.byref(prog))
    if result != 0 and ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL):
        # an older kernel: this thread only (a worker has no other thread yet)
        result = _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0)
    if result != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None


def in_force() -> bool:
    """Whether the filter is measurably in force here: calls that are harmless when allowed
    (``unshare(0)`` changes nothing; ``clone3`` of a zero size is invalid; a socket is closed
    at once) fail as the filter makes them fail: a packet socket with EAFNOSUPPORT, not the
    EPERM of a process without CAP_NET_RAW."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return False
    unshare = _fails(_libc.syscall(arch.unshare, 0), errno.EPERM)
    clone3 = _fails(_libc.syscall(arch.clone3, None, 0), errno.ENOSYS)
    setns = _fails(_libc.syscall(arch.blocked["setns"], -1, 0), errno.EPERM)
    families = all(_fails(_libc.syscall(arch.socket, family, socket.SOCK_DGRAM, 0),
                          errno.EAFNOSUPPORT) for family in (AF_VSOCK, AF_PACKET))
    return unshare and clone3 and setns and families


def uncounted_memory_closed() -> bool:
    """Whether the calls that make memory the address-space limit does not count fail here as
    the filter makes them fail (a memfd or a segment made instead is released at once)."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return False
    memfd = _fails(_libc.syscall(arch.uncounted["memfd_create"], b"rnngrade-probe", 0),
                   errno.ENOSYS)
    segment = _libc.syscall(arch.uncounted["shmget"], 0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT
    if segment >= 0:
        _libc.shmctl(segment, 0, None)  # IPC_RMID
    shm = segment == -1 and ctypes.get_errno() == errno.ENOSYS
    return memfd and shm


def new_processes_closed() -> bool:
    """Whether this process can start no other process (a thread still starts). Where a fork
    succeeds after all, the child leaves at once."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return False
    pid = _libc.syscall(arch.clone, 17, None, None, None, None)  # SIGCHLD: a plain fork
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        return False
    return ctypes.get_errno() == errno.EPERM


def _fails(result: int, expected: int) -> bool:
    """Whether a system call's ``result`` is the failure ``expected``; a descriptor it made
    instead is closed."""
    if result >= 0:
        if result > 2:  # 0-2 are the worker's standard streams: never one made here
            os.close(result)
        return False
    return ctypes.get_errno() == expected

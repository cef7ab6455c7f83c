"""A seccomp filter that closes the kernel interfaces a worker has no use for.

Inside its jail a worker could still create user and mount namespaces of its own (and be root
there), mount, trace, load BPF programs, use the kernel keyring or performance counters: kernel
attack surface that grading never needs. The filter makes these system calls fail with EPERM (the
calling code sees an ordinary error; nothing is killed):

- ``unshare``, ``setns``, and ``clone`` with any namespace flag (a thread or a fork, which use
  ``clone`` without them, still work);
- ``clone3`` fails with ENOSYS instead: its flags live in memory a filter cannot read, and ENOSYS
  makes the C library fall back to ``clone``, which the filter can check;
- ``mount``, ``umount2``, ``pivot_root`` and the new mount interface (``fsopen`` ...);
- ``keyctl``, ``add_key``, ``request_key``, ``bpf``, ``ptrace``, ``perf_event_open``,
  ``userfaultfd``.

A system call of another architecture (32-bit or x32 calls on x86-64) fails with EPERM as a whole.
Installed (``install``) after the jail is built and the privileges dropped, before any student
code runs, on every thread of the worker; ``in_force`` measures it from inside.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
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
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # offsets in struct seccomp_data (little endian)
_X32_BIT = 0x40000000

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1


@dataclass(frozen=True)
class Arch:
    """System call numbers of one architecture."""

    audit: int  # AUDIT_ARCH_* of struct seccomp_data
    seccomp: int  # the seccomp(2) system call
    clone: int
    clone3: int
    unshare: int
    blocked: dict[str, int]  # name -> number, failing with EPERM


_COMMON = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
           "fspick": 433, "mount_setattr": 442}
ARCHES = {
    "x86_64": Arch(0xC000003E, 317, 56, 435, 272, {
        "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "keyctl": 250,
        "add_key": 248, "request_key": 249, "bpf": 321, "ptrace": 101, "perf_event_open": 298,
        "userfaultfd": 323, **_COMMON}),
    "aarch64": Arch(0xC00000B7, 277, 220, 435, 97, {
        "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "keyctl": 219,
        "add_key": 217, "request_key": 218, "bpf": 280, "ptrace": 117, "perf_event_open": 241,
        "userfaultfd": 282, **_COMMON}),
}

_libc = ctypes.CDLL(None, use_errno=True)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(arch: Arch) -> bytes:
    """The filter as BPF instructions (struct sock_filter, 8 bytes each)."""
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    numbers = [arch.unshare, *sorted(arch.blocked.values())]
    code = [
        _insn(_LD_W_ABS, 0, 0, _ARCH),
        _insn(_JEQ_K, 1, 0, arch.audit),
        _insn(_RET_K, 0, 0, eperm),  # another architecture's calls: refused as a whole
        _insn(_LD_W_ABS, 0, 0, _NR),
    ]
    if arch.audit == ARCHES["x86_64"].audit:
        code += [_insn(_JGE_K, 0, 1, _X32_BIT), _insn(_RET_K, 0, 0, eperm)]  # the x32 ABI
    # A listed call jumps over the rest of the list and the 6 instructions after it, to EPERM.
    for i, number in enumerate(numbers):
        code.append(_insn(_JEQ_K, len(numbers) - i - 1 + 6, 0, number))
    code += [
        _insn(_JEQ_K, 0, 1, arch.clone3),
        _insn(_RET_K, 0, 0, enosys),
        _insn(_JEQ_K, 0, 2, arch.clone),
        _insn(_LD_W_ABS, 0, 0, _ARG0_LOW),  # clone's flags: namespace bits are all low
        _insn(_JSET_K, 1, 0, NAMESPACE_FLAGS),
        _insn(_RET_K, 0, 0, RET_ALLOW),
        _insn(_RET_K, 0, 0, eperm),
    ]
    return b"".join(code)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> str | None:
    """Install the filter on every thread of this process (no_new_privs set first). None when
    it is in force, else why not."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return f"no system call filter for the {platform.machine()} architecture"
    code = program(arch)
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
    (``unshare(0)`` changes nothing; ``clone3`` of a zero size is invalid) fail as the filter
    makes them fail."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return False
    unshare = _libc.syscall(arch.unshare, 0) == -1 and ctypes.get_errno() == errno.EPERM
    clone3 = _libc.syscall(arch.clone3, None, 0) == -1 and ctypes.get_errno() == errno.ENOSYS
    setns = _libc.syscall(arch.blocked["setns"], -1, 0) == -1 and ctypes.get_errno() == errno.EPERM
    return unshare and clone3 and setns

"""Memory a worker's address-space limit does not count: memfds, System V shared memory
segments and tmpfs pages. A worker may hold none of the first two and no more than its disk size
of the third. The attacks stay small: a worker limited to 256 MiB above its own start-up size
tries to hold 512 MiB."""

from __future__ import annotations

import textwrap

import pytest

from rnngrade.sandbox import Limits

MIB = 1 << 20
HEADROOM = 256 * MIB  # address space the attacking worker has beyond what it starts with
ATTEMPT = 512 * MIB

SIZE_PROBE = textwrap.dedent('''
    def address_space():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
''')

HOARDS = textwrap.dedent('''
    import ctypes
    import errno
    import os

    CHUNK = 16 << 20
    kept = []  # what a hoard holds stays held while the worker lives


    def ordinary(total):
        """Whether ``total`` bytes of ordinary memory can be had (the limit says no)."""
        try:
            block = bytearray(total)
        except MemoryError:
            return False
        del block
        return True


    def memfds(total):
        """Fill memfds (two chunks each, under the file size limit) with write(2)."""
        held, block = 0, b"x" * CHUNK
        try:
            while held < total:
                fd = os.memfd_create("hoard")
                kept.append(fd)
                for _ in range(2):
                    view = memoryview(block)
                    while view:
                        view = view[os.write(fd, view):]
                    held += CHUNK
        except OSError as exc:
            return held, errno.errorcode.get(exc.errno, str(exc.errno))
        return held, ""


    def segments(total):
        """Fill System V segments one at a time, each attached only while it is filled."""
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        libc.shmdt.argtypes = [ctypes.c_void_p]
        held = 0
        while held < total:
            segment = libc.shmget(0, 2 * CHUNK, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
            if segment == -1:
                return held, errno.errorcode.get(ctypes.get_errno(), "?")
            address = libc.shmat(segment, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                return held, errno.errorcode.get(ctypes.get_errno(), "?")
            ctypes.memset(address, 1, 2 * CHUNK)
            libc.shmdt(address)
            held += 2 * CHUNK
        return held, ""


    def disk(total):
        """Fill files in every folder a worker may write, each folder as far as it goes."""
        held, block = 0, b"x" * (4 << 20)
        for folder in (".", "/tmp", "/dev/shm"):
            for number in range(total // len(block) // 4):  # files under the size limit
                try:
                    with open(f"{folder}/hoard-{number}", "wb") as f:
                        for _ in range(4):
                            f.write(block)
                            f.flush()
                            held += len(block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
        return held


    def honest():
        """What honest code does with the same folders and devices."""
        for path in ("notes.txt", "/tmp/notes.txt", "/dev/shm/notes.txt"):
            with open(path, "w") as f:
                f.write("fine")
        with open("/dev/null", "w") as f:
            f.write("discarded")
        with open("/dev/zero", "rb") as f, open("/dev/urandom", "rb") as g:
            return [open(p).read() for p in ("notes.txt", "/tmp/notes.txt",
                                              "/dev/shm/notes.txt")], f.read(4), len(g.read(8))
''')


@pytest.fixture
def hoarder(sandbox):
    """A worker limited to HEADROOM of address space above a fresh worker's start-up size
    (measured), which cannot have ATTEMPT bytes of ordinary memory."""
    size = sandbox(SIZE_PROBE).call("address_space").value
    runner = sandbox(HOARDS, limits=Limits(memory_bytes=size + HEADROOM, call_seconds=30.0))
    assert runner.call("ordinary", (ATTEMPT,)).value is False
    return runner


def test_a_worker_holds_no_memory_in_memfds(hoarder):
    held, error = hoarder.call("memfds", (ATTEMPT,)).value
    assert held < HEADROOM, f"{held // MIB} MiB held in memfds beyond the memory limit"
    assert error == "ENOSYS"
    assert hoarder.protections()["shared memory bounded"]


def test_a_worker_holds_no_memory_in_system_v_segments(hoarder):
    held, error = hoarder.call("segments", (ATTEMPT,)).value
    assert held < HEADROOM, f"{held // MIB} MiB held in shared memory beyond the memory limit"
    assert error == "ENOSYS"


def test_the_worker_s_writable_folders_share_one_disk_size(sandbox):
    runner = sandbox(HOARDS, limits=Limits(disk_bytes=32 * MIB, call_seconds=30.0))
    held = runner.call("disk", (64 * MIB,)).value
    assert 16 * MIB <= held <= 32 * MIB  # the working directory alone fills it
    assert runner.protections()["shared memory bounded"]


def test_honest_code_writes_its_folders_and_uses_the_devices(sandbox):
    runner = sandbox(HOARDS)
    assert runner.call("honest").value == (["fine"] * 3, b"\0" * 4, 8)

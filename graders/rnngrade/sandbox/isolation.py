"""Jailing a worker process (Linux): namespaces, a private root, resource limits, an
unprivileged uid, no_new_privs, a scrubbed environment; and ``verify()``, which measures from
inside the worker which of these are in force.

Runs in processes forked from the zygote, before any student code exists in them:

1. ``enter_namespaces`` (the intermediate process): new mount, PID, network, IPC, UTS and cgroup
   namespaces (plus a user namespace when not root). Its next child is PID 1 of the new PID
   namespace: when that child dies, everything it started dies with it.
2. ``build_root`` (that child, still privileged): a tmpfs root holding only read-only binds of the
   system directories and the Python installation, a read-only ``/dev`` with a few device nodes
   of its own (made with ``mknod`` as root: the host's nodes are not in the jail, so nothing
   there can change them; bound from the host, writable, where ``mknod`` is refused), a fresh
   ``/proc``, and ``/tmp``, ``/submission`` (the working directory) and ``/dev/shm``, three
   folders of one tmpfs of ``disk_bytes`` (pages a memory limit does not count: one size for
   all three); then ``pivot_root`` and a detach of the old root, so the course repository and
   every other grader path are simply not there. Nothing is mounted unless the process is
   verifiably in a mount namespace of its own whose mounts do not propagate back.
3. ``drop_privileges`` (when a submission is assigned): rlimits, then a uid/gid of its own with no
   capabilities, then no_new_privs; ``hide_initial_environment`` blanks what ``/proc/1/environ``
   and ``/proc/1/cmdline`` would show of the host; then the worker installs its ``seccomp``
   filter.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import resource
import socket
import stat
import sys
from dataclasses import dataclass, field

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 4, 24, 38, 36
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}
_CAPSET = {"x86_64": 126, "aarch64": 91, "ppc64le": 184, "s390x": 185}

JAIL_MARKER = "/.rnngrade-jail"
WORKDIR = "/submission"
STUDENT = "student"
KEPT_ENV = frozenset({
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS", "GOTO_NUM_THREADS", "TORCH_NUM_THREADS",
    "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "OMP_DYNAMIC", "MKL_DYNAMIC",
    "KMP_AFFINITY", "KMP_BLOCKTIME", "MALLOC_ARENA_MAX", "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "TZ",
})
# The student's code computes on one thread: a worker is one of several grading at once, and
# on the labs' small matrices a second thread only waits (measured: no faster for one `grade`,
# ten times slower for lab3 at `batch -j 2` on two cores).
# (The grading workers of a batch set the same, ``gradebook.executors``.)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
                    "GOTO_NUM_THREADS", "TORCH_NUM_THREADS")
ONE_THREAD_ENV = dict.fromkeys(THREAD_VARIABLES, "1")
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR, "TMPDIR": "/tmp",
              "USER": STUDENT, "LOGNAME": STUDENT, "PYTHONDONTWRITEBYTECODE": "1"}
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_DEVICES = ("null", "zero", "full", "random", "urandom")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationError(OSError):
    """A measure could not be put in place."""


@dataclass
class Context:
    """What the zygote knows before it forks: its own namespaces, what to bind, what to hide."""

    namespaces: dict[str, str]
    staging: str  # an empty directory to build the new root on (in the private mount namespace)
    scratch: str = ""  # the zygote's own directory for the working dirs of unisolated workers
    binds: list[str] = field(default_factory=list)  # host directories, bound read-only
    hidden: list[str] = field(default_factory=list)  # host paths that must not be visible
    cuda_binds: list[str] = field(default_factory=list)  # library dirs CUDA workers also get
    privileged: bool = False  # root in the initial user namespace


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    _check(_libc.mount(source.encode() if source else None, target.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       data.encode() if data else None), f"mount {target}")


def namespace_ids() -> dict[str, str]:
    ids = {}
    for name in ("mnt", "pid", "net", "ipc", "uts", "user", "cgroup"):
        try:
            ids[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            ids[name] = ""
    return ids


def set_child_subreaper() -> None:
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def make_context(staging: str, scratch: str, hidden: list[str]) -> Context:
    """The zygote's view: its namespaces and the Python directories a worker needs."""
    hidden = [os.path.realpath(p) for p in hidden if p]
    binds: list[str] = []
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    for module in ("numpy", "torch"):
        mod = sys.modules.get(module)
        file = getattr(mod, "__file__", None) if mod is not None else None
        if file:
            candidates.append(os.path.dirname(os.path.dirname(file)))
    for path in candidates:
        real = os.path.realpath(path)
        if not os.path.isdir(real) or real == "/":
            continue
        if any(_within(h, real) for h in hidden):  # would expose a hidden path
            continue
        if any(_within(real, "/" + top) for top in _SYSTEM_DIRS):
            continue  # already visible through the system directories
        if not any(_within(real, b) for b in binds):
            binds = [b for b in binds if not _within(b, real)] + [real]
    candidates = os.environ.get("LD_LIBRARY_PATH", "").split(":") + driver_library_dirs(
        _read_text("/proc/self/maps"))
    cuda_binds = cuda_library_binds(candidates, _mount_points(_read_text("/proc/self/mountinfo")),
                                    binds, hidden)
    return Context(namespaces=namespace_ids(), staging=staging, scratch=scratch, binds=binds,
                   hidden=hidden, cuda_binds=cuda_binds, privileged=os.geteuid() == 0)


def driver_library_dirs(maps: str) -> list[str]:
    """The directories of the GPU driver's libraries mapped in this process (``maps``: the text
    of ``/proc/self/maps``): the driver loads its helpers (the PTX JIT compiler, NVVM) from
    there later, in the worker."""
    dirs: list[str] = []
    for line in maps.splitlines():
        parts = line.split(None, 5)
        path = parts[5].strip() if len(parts) == 6 else ""
        folder = os.path.dirname(path)
        if os.path.basename(path).startswith(("libcuda.so", "libnvidia-")) \
                and folder not in dirs:
            dirs.append(folder)
    return dirs


def cuda_library_binds(candidates: list[str], mount_points: list[str], binds: list[str],
                       hidden: list[str]) -> list[str]:
    """What a CUDA worker's jail binds besides the Python directories, for library directories
    ``candidates``: each one outside the system directories, and, for one inside them on a
    mount of its own (a container's ``/usr/local/nvidia``), that mount: the jail binds the
    system directories without what is mounted below them."""
    out: list[str] = []
    for path in candidates:
        real = os.path.realpath(path) if path else ""
        if not real or real == "/" or not os.path.isdir(real) \
                or any(_within(h, real) or _within(real, h) for h in hidden):
            continue
        tops = ["/" + top for top in _SYSTEM_DIRS if _within(real, "/" + top)]
        if tops:
            mount = max((m for m in mount_points if _within(real, m)), key=len, default="/")
            if _within(tops[0], mount):
                continue  # on the system directory's own mount: visible already
            real = mount
        if any(_within(h, real) for h in hidden) or any(_within(real, b) for b in binds + out):
            continue
        out = [b for b in out if not _within(b, real)] + [real]
    return out


def _mount_points(mountinfo: str) -> list[str]:
    """The mount points listed in ``/proc/self/mountinfo`` (its fifth field, octal escapes
    decoded)."""
    points = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4:
            points.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points


def _read_text(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


# ---------------------------------------------------------------------------- namespaces

def enter_namespaces(isolate: bool) -> list[str]:
    """In the intermediate process: new namespaces for it and its next child. Returns what
    failed (nothing: all in place)."""
    if not isolate:
        return ["isolation disabled"]
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    user = os.geteuid() != 0
    uid, gid = os.geteuid(), os.getegid()
    if user:
        flags |= CLONE_NEWUSER
    # a cgroup namespace, where the kernel has them: /proc/self/cgroup then shows "/", not the
    # host's cgroup path
    if _libc.unshare(flags | CLONE_NEWCGROUP) == 0 or _libc.unshare(flags) == 0:
        if user:
            _map_user(uid, gid)
        return []
    problems = [f"unshare: {os.strerror(ctypes.get_errno())}"]
    if user:  # no user namespace: no other namespace is possible either
        return problems
    for flag in (CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS):
        if _libc.unshare(flag) != 0:
            problems.append(f"unshare {flag:#x}: {os.strerror(ctypes.get_errno())}")
    return problems


def _map_user(uid: int, gid: int) -> None:
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


# ---------------------------------------------------------------------------- the new root

def build_root(ctx: Context, device: str, uid: int, gid: int, disk_bytes: int) -> list[str]:
    """In the worker-to-be (PID 1 of its namespace): build and enter the private root.
    Returns problems; raises IsolationError when nothing may be mounted at all."""
    if namespace_ids()["mnt"] in ("", ctx.namespaces["mnt"]):
        raise IsolationError(errno.EPERM, "no private mount namespace: nothing mounted")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing propagates back to the host
    problems: list[str] = []
    root = ctx.staging
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    _mount_system(root, uid, gid)
    _make_dev(root, device)
    os.makedirs(root + "/proc")
    try:
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as exc:
        problems.append(f"{exc} (no /proc in the worker)")
    _mount_disk(root, uid, gid, disk_bytes)
    # after /tmp: a Python environment may live under it (a checkout in /tmp with a .venv)
    problems += _mount_python_and_sys(ctx, root, device)
    old = root + "/.old-root"
    os.makedirs(old)
    machine = platform.machine()
    if machine not in _PIVOT_ROOT:
        raise IsolationError(errno.ENOSYS, f"pivot_root: unknown machine {machine}")
    _check(_libc.syscall(_PIVOT_ROOT[machine], root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old-root", MNT_DETACH), "umount the old root")
    os.rmdir("/.old-root")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _mount(None, "/dev", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    name = b"rnngrade-sandbox"
    if _libc.sethostname(name, len(name)) != 0:
        problems.append(f"sethostname: {os.strerror(ctypes.get_errno())}")
    return problems


def _mount_system(root: str, uid: int, gid: int) -> None:
    """The host's system directories and a few /etc files, read-only, and the student's
    passwd, group and hosts entries, under the new root."""
    for top in _SYSTEM_DIRS:
        host = "/" + top
        if os.path.islink(host):
            os.symlink(os.readlink(host), root + host)
        elif os.path.isdir(host):
            _bind(host, root + host, read_only=True)
    os.makedirs(root + "/etc", exist_ok=True)
    for path in _ETC_FILES:
        if os.path.isfile(path):
            _bind(path, root + path, read_only=True)
    _write(root + "/etc/passwd", f"{STUDENT}:x:{uid}:{gid}:student:{WORKDIR}:/bin/false\n")
    _write(root + "/etc/group", f"{STUDENT}:x:{gid}:\n")
    _write(root + "/etc/hosts", "127.0.0.1 localhost\n")
    _write(root + JAIL_MARKER, "")


def _mount_python_and_sys(ctx: Context, root: str, device: str) -> list[str]:
    """The Python directories (and, for CUDA, the driver's libraries and all of /sys; else
    only the CPU topology under /sys), read-only. Returns problems."""
    problems: list[str] = []
    extra = list(ctx.binds)
    if device.startswith("cuda"):
        _bind("/sys", root + "/sys", read_only=True)
    else:
        for path in ("/sys/devices/system/cpu", "/sys/devices/system/node"):
            if os.path.isdir(path):
                try:
                    _bind(path, root + path, read_only=True)
                except OSError as exc:
                    problems.append(str(exc))
    for path in extra:
        if not os.path.exists(root + path):
            _bind(path, root + path, read_only=True)
    if device.startswith("cuda"):
        for path in ctx.cuda_binds:  # a mount point below /usr, say, exists there but is empty
            try:
                _bind(path, root + path, read_only=True)
            except OSError as exc:
                problems.append(f"{exc} (the CUDA libraries in {path} are not visible)")
    return problems


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _bind(source: str, target: str, *, read_only: bool, device: bool = False) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            _write(target, "")
    _mount(source, target, None, MS_BIND)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | _atime_flags(source)
    if read_only:
        flags |= MS_RDONLY
    if not device:
        flags |= MS_NODEV
    _mount(None, target, None, flags)


def _atime_flags(path: str) -> int:
    """Keep the source mount's atime flags (a user namespace may not change them)."""
    st = os.statvfs(path).f_flag
    out = 0
    for st_flag, ms_flag in ((1024, MS_NOATIME), (2048, MS_NODIRATIME), (4096, MS_RELATIME),
                             (os.ST_NOEXEC, MS_NOEXEC)):
        if st & st_flag:
            out |= ms_flag
    return out


DISK_DIRS = (("/tmp", 0o1777), (WORKDIR, 0o700), ("/dev/shm", 0o1777))


def _mount_disk(root: str, uid: int, gid: int, disk_bytes: int) -> None:
    """One tmpfs of ``disk_bytes`` for the folders a worker may write (``DISK_DIRS``), each a
    bind of a folder of it; the tmpfs itself is mounted nowhere in the jail."""
    disk = root + "/.disk"
    os.makedirs(disk)
    _mount("tmpfs", disk, "tmpfs", MS_NOSUID | MS_NODEV, f"size={disk_bytes},mode=0700")
    for path, mode in DISK_DIRS:
        folder = disk + "/" + path.strip("/").replace("/", "-")
        os.mkdir(folder)
        os.chmod(folder, mode)
        if path == WORKDIR:
            os.chown(folder, uid, gid)
        os.makedirs(root + path, exist_ok=True)
        _mount(folder, root + path, None, MS_BIND)
        _mount(None, root + path, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV)
    _check(_libc.umount2(disk.encode(), MNT_DETACH), "umount the disk")
    os.rmdir(disk)


def _make_dev(root: str, device: str) -> None:
    """``/dev`` on a tmpfs of its own (read-only once the jail is built): the nodes of
    ``_DEVICES`` made afresh, or bound from the host where the kernel refuses ``mknod`` (in a
    user namespace); for CUDA the host's ``/dev/nvidia*``, bound."""
    dev = root + "/dev"
    os.makedirs(dev)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name in _DEVICES:
        host = "/dev/" + name
        try:
            st = os.stat(host)
        except OSError:
            continue
        if not stat.S_ISCHR(st.st_mode):
            continue  # the host's node is not a device (replaced): nothing of it in the jail
        try:
            os.mknod(f"{dev}/{name}", stat.S_IFCHR | 0o666, st.st_rdev)
            os.chmod(f"{dev}/{name}", 0o666)  # whatever the umask
        except PermissionError:
            _bind(host, f"{dev}/{name}", read_only=False, device=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    if device.startswith("cuda"):
        for name in sorted(os.listdir("/dev")):
            if name.startswith("nvidia"):
                path = "/dev/" + name
                if os.path.isdir(path):
                    _bind(path, dev + "/" + name, read_only=True, device=True)
                else:
                    _bind(path, dev + "/" + name, read_only=False, device=True)


# ---------------------------------------------------------------------------- privileges

def apply_limits(limits: dict, device: str, own_uid: bool) -> None:
    """setrlimit: soft = hard, so the student cannot raise them again. RLIMIT_NPROC counts
    every process of the uid: it only applies to a worker with a uid of its own (as root)."""
    memory = resource.RLIMIT_DATA if device.startswith("cuda") else resource.RLIMIT_AS
    settings = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, limits["cpu_seconds"]),
                (memory, limits["memory_bytes"]), (resource.RLIMIT_FSIZE, limits["file_bytes"]),
                (resource.RLIMIT_NOFILE, limits["open_files"])]
    if own_uid:
        settings.append((resource.RLIMIT_NPROC, limits["processes"]))
    for which, value in settings:
        resource.setrlimit(which, (value, value))


def drop_privileges(uid: int, gid: int, privileged: bool) -> list[str]:
    """A uid/gid of its own and no capabilities, then no_new_privs. Returns problems."""
    problems: list[str] = []
    if privileged:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability
    else:
        problems += _drop_capabilities()
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # its own /proc/self stays readable to it
    return problems


def _drop_capabilities() -> list[str]:
    """In a user namespace (not root): empty the bounding set and every capability set."""
    last = 40
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    machine = platform.machine()
    if machine not in _CAPSET:
        return [f"capset: unknown machine {machine}"]

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if _libc.syscall(_CAPSET[machine], ctypes.byref(header), ctypes.byref(data)) != 0:
        return [f"capset: {os.strerror(ctypes.get_errno())}"]
    return []


WORKER_TITLE = b"rnngrade-worker"


def hide_initial_environment() -> None:
    """Blank the memory that ``/proc/self/environ`` and ``/proc/self/cmdline`` show: the
    environment and command line the zygote was started with (the host's PATH, the
    interpreter's path). Only after ``scrub_environment``: the C library's environment then no
    longer points there."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        # fields 48-51 of proc(5): arg_start, arg_end, env_start, env_end (from field 3 on here)
        arg_start, arg_end, env_start, env_end = (int(x) for x in fields[45:49])
    except (OSError, ValueError, IndexError):
        return
    if 0 < env_start < env_end:
        ctypes.memset(env_start, 0, env_end - env_start)
    if 0 < arg_start < arg_end:
        ctypes.memset(arg_start, 0, arg_end - arg_start)
        title = WORKER_TITLE[: arg_end - arg_start - 1]
        ctypes.memmove(arg_start, title, len(title))


def scrub_environment() -> None:
    kept = {k: v for k, v in os.environ.items() if k in KEPT_ENV}
    os.environ.clear()
    os.environ.update(kept)
    os.environ.update(WORKER_ENV)


# ---------------------------------------------------------------------------- verification

def _status_fields() -> dict[str, str]:
    try:
        with open("/proc/self/status") as f:
            return dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    except OSError:
        return {}


def verify(ctx: Context, limits: dict, device: str) -> tuple[dict[str, bool], dict[str, str]]:
    """Which measures are in force, measured from inside the worker: (protections, details)."""
    ids = namespace_ids()
    status = _status_fields()
    details: dict[str, str] = {}

    def other(name: str) -> bool:
        return bool(ids[name]) and ids[name] != ctx.namespaces.get(name)

    visible = [p for p in ctx.hidden if exposed(p, ctx.binds)]
    if visible:
        details["visible grader paths"] = ", ".join(visible)
    private_fs = other("mnt") and os.path.exists(JAIL_MARKER) and not visible
    read_only = True
    for path in ("/", "/usr", sys.prefix):
        try:
            read_only &= bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        except OSError:
            pass
    try:
        interfaces = {name for _, name in socket.if_nameindex()}
    except OSError:
        interfaces = set()
    ids_nonzero = all(os.getresuid()) and all(os.getresgid())
    no_caps = status.get("CapEff", "").strip().strip("0") == "" and "CapEff" in status
    memory = resource.RLIMIT_DATA if device.startswith("cuda") else resource.RLIMIT_AS
    rlimits = (resource.getrlimit(resource.RLIMIT_CPU)[1] == limits["cpu_seconds"]
               and resource.getrlimit(memory)[1] == limits["memory_bytes"]
               and resource.getrlimit(resource.RLIMIT_FSIZE)[1] == limits["file_bytes"]
               and resource.getrlimit(resource.RLIMIT_NOFILE)[1] == limits["open_files"]
               and (resource.getrlimit(resource.RLIMIT_NPROC)[1] == limits["processes"]
                    or not ctx.privileged))
    if not ctx.privileged:  # RLIMIT_NPROC would count every process of the grader's uid
        details["resource limits"] = ("no process-count limit without root (RLIMIT_NPROC "
                                      "would count every process of the grader's uid): a fork "
                                      "bomb runs until the call's time limit ends the worker "
                                      "and its PID namespace")
    cgroups = _read("/proc/self/cgroup")
    protections = {
        "separate process": True,
        "private filesystem": private_fs,
        "read-only system directories": private_fs and read_only,
        "pid namespace": other("pid") and os.getpid() == 1,
        "network namespace": other("net") and interfaces <= {"lo"},
        "ipc namespace": other("ipc"),
        "uts namespace": other("uts") and socket.gethostname() == "rnngrade-sandbox",
        "unprivileged uid": bool(ids_nonzero and no_caps),
        "no_new_privs": status.get("NoNewPrivs", "").strip() == "1",
        "resource limits": rlimits,
        "scrubbed environment": set(os.environ) <= KEPT_ENV | set(WORKER_ENV),
        "output captured": all(_is_fifo(fd) for fd in (1, 2)),
        "cgroup namespace": other("cgroup") and bool(cgroups) and all(
            line.endswith(b":/") for line in cgroups.splitlines()),
        "host environment hidden in /proc": (_read("/proc/self/environ").strip(b"\0") == b""
                                             and _read("/proc/self/cmdline").rstrip(b"\0")
                                             == WORKER_TITLE),
    }
    return protections, details


def one_disk() -> bool:
    """Whether the folders of ``DISK_DIRS`` are all on one file system (one size for all)."""
    try:
        return len({os.stat(path).st_dev for path, _ in DISK_DIRS}) == 1
    except OSError:
        return False


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 16)
    except OSError:
        return b""


def exposed(path: str, binds: list[str]) -> bool:
    """Whether ``path`` shows anything in the jail beyond the directories leading to a bind
    (a virtual environment inside the course repository is bound at its own path, so the
    repository's directory exists, holding that environment and nothing else)."""
    if not os.path.lexists(path):
        return False
    if os.path.islink(path) or not os.path.isdir(path):
        return True
    allowed = {b[len(path):].strip("/").split("/")[0] for b in binds
               if _within(b, path) and b != path}
    try:
        return not set(os.listdir(path)) <= allowed
    except OSError:
        return True


def _is_fifo(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False

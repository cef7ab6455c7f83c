"""What a worker can see and do, measured with harmless code that only looks (attacks are in
test_hostile.py), and the refusal to run unprotected."""

from __future__ import annotations

import os
import resource
import socket
import sys
import textwrap

import pytest

from rnngrade.paths import course_root
from rnngrade.sandbox import Limits, SandboxRunner, SandboxUnavailable

PROBE = textwrap.dedent('''
    import os
    import resource
    import socket
    import sys


    def look(paths):
        seen = {}
        for path in paths:
            seen[path] = os.path.exists(path)
        return seen


    def facts():
        usr = os.statvfs("/usr").f_flag & os.ST_RDONLY
        prefix = os.statvfs(sys.prefix).f_flag & os.ST_RDONLY
        return {
            "uid": os.getuid(), "gid": os.getgid(), "euid": os.geteuid(), "pid": os.getpid(),
            "cwd": os.getcwd(), "hostname": socket.gethostname(), "root": sorted(os.listdir("/")),
            "env": dict(os.environ), "usr_ro": bool(usr), "prefix_ro": bool(prefix),
            "interfaces": [name for _, name in socket.if_nameindex()],
            "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            "as": resource.getrlimit(resource.RLIMIT_AS)[1],
            "cpu": resource.getrlimit(resource.RLIMIT_CPU)[1],
            "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[1],
            "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[1],
            "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[1],
            "status": open("/proc/self/status").read(),
            "can_write_cwd": os.access(".", os.W_OK), "can_write_root": os.access("/", os.W_OK),
            "sys_path": list(sys.path),
        }


    def connect(host, port):
        try:
            socket.create_connection((host, port), timeout=1).close()
        except OSError as exc:
            return type(exc).__name__ + ": " + str(exc)
        return "connected"


    def files():
        with open("scratch.txt", "w") as f:
            f.write("mine")
        with open("/tmp/scratch.txt", "w") as f:
            f.write("mine too")
        return sorted(os.listdir(".")), open("/tmp/scratch.txt").read()
''')


def test_the_worker_sees_a_private_root_without_the_grader_s_paths(sandbox, canary, tmp_path):
    runner = sandbox(PROBE)
    root = str(course_root())
    course = [os.path.join(root, part) for part in ("solutions", "graders", "fixtures",
                                                     "assignments", "templates", "tests")]
    paths = [root, str(canary.root), str(tmp_path), os.getcwd(), str(canary.root / "solutions"),
             "/work", "/root/.ssh", "/etc/shadow", "/etc/passwd", "/usr/bin", "/proc/self",
             *course]
    seen = runner.call("look", (paths,)).value
    # A virtual environment inside the checkout (`make setup` puts .venv there) is bound read-only,
    # so the checkout's own path may exist in the jail, but never anything of the course in it.
    environment_inside = os.path.realpath(sys.prefix).startswith(os.path.realpath(root) + os.sep)
    assert not any(seen[path] for path in course)
    assert environment_inside or not seen[root]
    assert not seen[str(canary.root)] and not seen[str(tmp_path)]
    assert not seen["/etc/shadow"] and not seen["/root/.ssh"]
    assert seen["/usr/bin"] and seen["/proc/self"] and seen["/etc/passwd"]  # its own passwd
    facts = runner.call("facts").value
    # The interpreter's own prefixes are bound read-only wherever they live (a checkout's .venv
    # under /check or /home brings that top-level directory along, empty but for the path).
    prefixes = {os.path.realpath(p).strip("/").split("/")[0]
                for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    assert set(facts["root"]) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc",
                                  "root", "sbin", "submission", "sys", "tmp", "usr", "opt",
                                  ".rnngrade-jail"} | prefixes
    assert facts["cwd"] == "/submission" and facts["can_write_cwd"]
    assert not facts["can_write_root"] and facts["usr_ro"] and facts["prefix_ro"]
    # `python -m pytest` puts the checkout on sys.path; nothing of the course is reachable there.
    into_course = [p for p in facts["sys_path"]
                   if p.startswith(root) and not p.startswith(sys.prefix)]
    reachable = [os.path.join(p, part) for p in into_course
                 for part in ("solutions", "graders", "rnngrade", "suites", "conftest.py")]
    assert not any(runner.call("look", (reachable,)).value.values())


def test_the_worker_is_an_unprivileged_pid_1_without_network(sandbox):
    runner = sandbox(PROBE)
    facts = runner.call("facts").value
    assert facts["uid"] != 0 and facts["euid"] != 0 and facts["gid"] != 0
    assert facts["pid"] == 1 and facts["processes"] == [1]
    assert facts["hostname"] == "rnngrade-sandbox"
    assert "CapEff:\t0000000000000000" in facts["status"]
    assert "NoNewPrivs:\t1" in facts["status"]
    assert set(facts["interfaces"]) <= {"lo"}
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        server.settimeout(0.5)
        assert runner.call("connect", ("127.0.0.1", port)).value.startswith("OSError")
        with pytest.raises(TimeoutError):
            server.accept()
    other = sandbox(PROBE)
    assert other.call("facts").value["uid"] != facts["uid"]  # a uid of its own per worker


def test_limits_environment_and_scratch_space(sandbox):
    limits = Limits(cpu_seconds=30, file_bytes=1 << 20, open_files=64)
    runner = sandbox(PROBE, limits=limits)
    facts = runner.call("facts").value
    assert facts["as"] == 4 << 30 and facts["cpu"] == 30 and facts["fsize"] == 1 << 20
    assert facts["nofile"] == 64 and facts["nproc"] == limits.processes
    assert facts["env"]["HOME"] == "/submission"
    assert not any(k.startswith(("RNNGRADE", "PYTHON", "SSH", "GIT")) for k in facts["env"]
                   if k != "PYTHONDONTWRITEBYTECODE")
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        assert facts["env"][key] == "1"  # the student's code computes on one thread
    listing, text = runner.call("files").value
    assert listing == ["rnn.py", "scratch.txt"] and text == "mine too"
    assert runner.call("files").value[0] == ["rnn.py", "scratch.txt"]
    fresh = sandbox(PROBE)  # nothing is shared between workers
    assert fresh.call("look", (["/tmp/scratch.txt", "scratch.txt"],)).value == {
        "/tmp/scratch.txt": False, "scratch.txt": False}


def test_resource_limits_of_the_grader_are_untouched(sandbox):
    before = resource.getrlimit(resource.RLIMIT_AS)
    sandbox(PROBE).call("facts")
    assert resource.getrlimit(resource.RLIMIT_AS) == before


class _Unisolated(SandboxRunner):
    """A runner whose workers get no namespaces: what a machine without them would give."""

    _isolate = False


def test_without_protection_the_runner_refuses_to_run_student_code(sandbox_available):
    with pytest.raises(SandboxUnavailable, match="refusing to run student code.*private "
                                                 "filesystem"):
        _Unisolated("def f():\n    return 1\n", "rnn.py")


def test_allow_unprotected_runs_trusted_code_and_reports_the_missing_measures(
        sandbox_available):
    runner = _Unisolated("def f():\n    return 1\n", "rnn.py", allow_unprotected=True)
    try:
        assert runner.call("f").value == 1
        protections = runner.protections()
        assert protections["separate process"] is True
        assert protections["private filesystem"] is False
        assert protections["network namespace"] is False
        for measure in ("system call filter", "cgroup namespace",
                        "host environment hidden in /proc", "shared memory bounded"):
            assert protections[measure] is False  # measured, not assumed
    finally:
        runner.close()


def test_a_grader_path_counts_as_hidden_when_it_only_leads_to_a_bound_environment(tmp_path):
    from rnngrade.sandbox.isolation import exposed

    course = tmp_path / "course"
    (course / ".venv" / "lib").mkdir(parents=True)
    binds = [str(course / ".venv")]
    assert not exposed(str(tmp_path / "nowhere"), binds)
    assert not exposed(str(course), binds)  # only the way to the environment
    (course / "solutions").mkdir()
    assert exposed(str(course), binds)
    (tmp_path / "file").write_text("x")
    assert exposed(str(tmp_path / "file"), binds)


def test_cuda_workers_get_their_own_jail_and_limits(sandbox):
    """The jail for device="cuda" (device nodes, /sys, RLIMIT_DATA instead of RLIMIT_AS) builds
    and protects even without a GPU; with one, tensors cross to the worker's CUDA device."""
    import torch

    runner = sandbox(PROBE + "\n\ndef twice(t):\n    return t * 2, str(t.device)\n" + GRADIENT,
                     device="cuda")
    facts = runner.call("facts").value
    assert facts["uid"] != 0 and facts["pid"] == 1 and facts["as"] == resource.RLIM_INFINITY
    assert runner.protections()["resource limits"]
    if torch.cuda.is_available():
        value, device = runner.call("twice", (torch.ones(3, device="cuda"),)).value
        assert device.startswith("cuda") and value.device.type == "cuda"
        assert torch.equal(value.cpu(), torch.full((3,), 2.0))
        for where in ("cpu", "cuda"):  # autograd works in a worker forked on a GPU machine
            grad = runner.call("gradient", (torch.tensor([1.0, -2.0], device=where),)).value
            assert grad.device.type == where and grad.tolist() == [3.0, 12.0]


GRADIENT = """

def gradient(t):
    import torch
    leaf = t.clone().requires_grad_(True)
    (leaf ** 3).sum().backward()
    return leaf.grad
"""


@pytest.mark.cuda
def test_the_zygote_leaves_cuda_uninitialised_for_its_workers(sandbox):
    """Workers fork from the zygote: had it initialised CUDA (autograd's first backward does,
    asking for the device count; so does torch.cuda.is_available()), CUDA would fail in every
    worker with "initialization error", and autograd too. Here with every lab's
    worker_imports imported in the zygote."""
    import torch

    from rnngrade.labs import available_labs
    from rnngrade.sandbox.zygote import client as zygote

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    imports = sorted({name for lab in available_labs() for name in lab.worker_imports})
    zygote.close_shared_client()  # a zygote of its own, with every lab's worker_imports
    zygote.start_soon(imports)
    runner = sandbox(GRADIENT, device="cuda")
    for where in ("cuda", "cpu"):
        grad = runner.call("gradient", (torch.ones(2, device=where),)).value
        assert grad.device.type == where and grad.tolist() == [3.0, 3.0]


def test_rnngrade_grade_says_why_it_cannot_sandbox_and_what_to_do(sandbox_available,
                                                                   monkeypatch, tmp_path,
                                                                   capsys):
    """No traceback: the reason, the way out (--inprocess, for trusted code), exit code 4."""
    from rnngrade.cli import main
    from rnngrade.errors import ExitCode
    from rnngrade.paths import course_root
    from rnngrade.sandbox import SandboxRunner

    monkeypatch.setattr(SandboxRunner, "_isolate", False)  # the refusal comes before any load
    submission = course_root() / "fixtures" / "submissions" / "lab1" / "reference"
    code = main(["grade", str(submission), "--lab", "lab1", "--out", str(tmp_path / "out"),
                 "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == ExitCode.GRADER
    assert "refusing to run student code" in err and "--inprocess" in err
    assert "Traceback" not in err

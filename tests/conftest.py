"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rnngrade.paths import CACHE_ENV, course_root

ROOT = course_root()
SUBMISSIONS = ROOT / "fixtures" / "submissions"


def pytest_configure(config: pytest.Config) -> None:
    """The reference's outcome figures are cached in a folder of this test run's own (the
    user's cache would carry values from one run, or one checkout, into the next; the xdist
    workers inherit the controller's). torch computes on one thread in every test process, as a
    grading worker does: pytest runs one process per core (``-n auto``), and a second torch
    thread per process only waits for a core (a release build took five times longer with two
    per process on two cores). A child process (the sandbox, a batch worker, a console script)
    sets its own threads."""
    if "RNNGRADE_CACHE_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="rnngrade-test-cache-")
        os.environ["RNNGRADE_CACHE_DIR"] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # pytest-xdist's controller runs no test
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of the test's own for the grader's disk cache (``RNNGRADE_CACHE_DIR``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def run_public_inprocess(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                         repo: Path, lab: str, *options: str) -> tuple[int, str]:
    """``pytest assignments/<lab>`` in ``repo``, run in this process: the exit code and the
    terminal output. The student's module is built from its file by the ``student`` fixture on
    every run; the public tests and the repository's conftest are forgotten after the run, so the
    next run imports its own. Everything else the run imported stays (pytester's
    ``runpytest_inprocess`` drops it all, and numpy.random or torch submodules imported a second
    time crash the interpreter)."""
    monkeypatch.delenv("RNNGRADE_ROOT", raising=False)  # a student shell has no course in sight
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the run puts `repo` on it
    capsys.readouterr()
    try:
        code = pytest.main([f"assignments/{lab}", "-p", "no:randomly", "-p", "no:cacheprovider",
                            f"--rootdir={repo}", *options])
    finally:
        _forget_modules_under(repo)
    out, err = capsys.readouterr()
    return int(code), out + err


def _forget_modules_under(folder: Path) -> None:
    """Drop the modules imported from files under ``folder``, and the namespace packages
    (``assignments``, ``assignments.lab1``) that hold them."""
    root = str(folder.resolve()) + os.sep
    ours = {name for name, module in list(sys.modules.items())
            if os.path.realpath(getattr(module, "__file__", None) or os.sep).startswith(root)}
    parents = {name.rsplit(".", i)[0] for name in ours for i in range(1, name.count(".") + 1)}
    for name in ours | {p for p in parents
                        if getattr(sys.modules.get(p), "__file__", None) is None}:
        sys.modules.pop(name, None)


HOST_DEVICE_NODES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                     "/dev/tty")


def device_nodes(paths: tuple[str, ...] = HOST_DEVICE_NODES) -> dict[str, tuple | None]:
    """What makes each node what it is (file type and permissions, device number, owner, inode),
    never its times; None for a path that is not there."""
    state: dict[str, tuple | None] = {}
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError:
            state[path] = None
            continue
        state[path] = (stat.filemode(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev),
                       st.st_uid, st.st_gid, st.st_dev, st.st_ino)
    return state


@pytest.fixture(autouse=True)
def host_device_nodes_unchanged() -> Iterator[None]:
    """Every test leaves the host's device nodes as it found them (a worker, a grading run
    or a test that replaced or altered ``/dev/null`` as root would break the machine)."""
    before = device_nodes()
    yield
    after = device_nodes()
    changed = [f"{path}: {before[path]} -> {after[path]}" for path in before
               if before[path] != after[path]]
    if changed:
        pytest.fail("this test changed the host's device nodes: " + "; ".join(changed),
                    pytrace=False)


@pytest.fixture
def device_node_state() -> Callable[..., dict[str, tuple | None]]:
    """``device_nodes``, what ``host_device_nodes_unchanged`` compares."""
    return device_nodes


@pytest.fixture
def course_copy(tmp_path: Path) -> Path:
    """A copy of the course (solutions, suites, assignments, fixtures, templates) to break."""
    target = tmp_path / "course"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".git", ".venv", "out")
    for name in ("solutions", "graders", "assignments", "fixtures", "templates"):
        shutil.copytree(ROOT / name, target / name, ignore=ignore)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, target / name)
    return target

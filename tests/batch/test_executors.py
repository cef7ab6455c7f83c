"""The same scores at -j 1, -j 2 and on a Dask cluster; a dying worker fails one submission."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradebook.entries import Entry, read_entry
from rnngrade.gradebook.executors import GradingSpec, LocalPool, grade_payload
from rnngrade.gradebook.messages import (
    Done,
    Fatal,
    Graded,
    GraderBroken,
    NotGraded,
    Ready,
    decode,
    decode_outcome,
)
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.model import EntryStatus

from ..synthetic import make_class, write_entry
from .conftest import INPROCESS, assert_csv_matches_gradebook, current, query


def scores(out: Path) -> dict[str, tuple]:
    """Per student: score, status and every test's outcome and score."""
    tests = query(out, "SELECT r.student_id, t.test, t.outcome, t.score FROM test_results t "
                       "JOIN results r ON r.id = t.result_id WHERE r.current = 1")
    per_test: dict[str, list] = {}
    for row in tests:
        per_test.setdefault(row["student_id"], []).append((row["test"], row["outcome"],
                                                           row["score"]))
    return {s: (row["score"], row["status"], sorted(per_test[s]))
            for s, row in current(out).items()}


def run_on_dask(folder: Path, out: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert main(["batch", str(folder), "--lab", "lab1", "--out", str(out),
                     "--executor", "dask", "--scheduler", cluster.scheduler_address,
                     "--quiet", *INPROCESS]) == ExitCode.OK
    run = query(out, "SELECT executor, status FROM runs")[0]
    assert tuple(run) == ("dask", "finished")
    assert_csv_matches_gradebook(out)


def test_dask_cluster_grades_like_this_process(tmp_path):
    folder = tmp_path / "class"
    samples = make_class(folder, "lab1", 8, bad=True)
    run_on_dask(folder, tmp_path / "dask")
    on_dask = scores(tmp_path / "dask")
    for sample in samples:
        result = grade(sample.path, "lab1", device="cpu", inprocess=True)
        tests = sorted((t.name, t.outcome, t.score) for t in result.tests)
        status = "graded" if result.status == "graded" else "load_error"
        assert on_dask[sample.student] == (result.score, status, tests), sample.student


@pytest.mark.slow
def test_scores_are_identical_at_j1_j2_and_on_dask(tmp_path):
    folder = tmp_path / "class"
    make_class(folder, "lab1", 30, bad=True)
    outs = {name: tmp_path / name for name in ("j1", "j2", "dask")}
    for jobs in ("1", "2"):
        assert main(["batch", str(folder), "--lab", "lab1", "--out", str(outs[f"j{jobs}"]),
                     "-j", jobs, "--quiet", *INPROCESS]) == ExitCode.OK
    run_on_dask(folder, outs["dask"])
    reference = scores(outs["j1"])
    assert len(reference) == 30 and any(v[1] == "load_error" for v in reference.values())
    assert scores(outs["j2"]) == reference
    assert scores(outs["dask"]) == reference


def test_a_worker_that_dies_fails_only_its_submission(tmp_path):
    lab = get_lab("lab1")
    reference = (lab.solution_path()).read_text()
    folder = tmp_path / "class"
    folder.mkdir()
    write_entry(folder, "alice", lab, reference, "py")
    write_entry(folder, "mallory", lab, "import os\nos._exit(3)\n", "py")  # in-process only
    write_entry(folder, "zoe", lab, reference, "py")
    pool = LocalPool(GradingSpec("lab1", "cpu", True), 1, timeout=120)
    tasks = [(e.student, read_entry(e).to_wire()) for e in
             (Entry(p.stem, p) for p in sorted(folder.iterdir()))]
    outcomes = dict(pool.run(tasks))
    for graded in (outcomes["alice"], outcomes["zoe"]):
        assert isinstance(graded, Graded)
        assert graded.result["score"] == graded.result["max_score"]
    died = outcomes["mallory"]
    assert isinstance(died, NotGraded) and died.status == EntryStatus.ERROR
    assert "died" in died.error and "exit code 3" in died.error


def test_grade_payload_reports_problems_as_data(tmp_path):
    spec = GradingSpec("lab1", "cpu", True).to_wire()
    evil = {"name": "x", "is_folder": True, "data": b"", "files": {"../up.py": b""}}
    outcome = grade_payload(spec, evil)
    assert isinstance(outcome, NotGraded) and outcome.status == EntryStatus.ERROR
    assert "refusing" in outcome.error
    broken = grade_payload({**spec, "lab": "lab99"}, evil)
    assert isinstance(broken, Fatal) and "lab99" in broken.message


def test_the_coordinator_refuses_what_is_no_message():
    assert decode(Ready(7)) == Ready(7)
    assert decode_outcome(Graded({"score": 1})) == Graded({"score": 1})
    for junk in (("ready", 7), {"fatal": "x"}, Done("k", {"result": {}}), None):
        with pytest.raises(GraderBroken):
            decode(junk)
    with pytest.raises(GraderBroken):
        decode_outcome({"result": {}})


def _children(pid: int) -> set[int]:
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        children |= {int(c) for c in (task / "children").read_text().split()}
    return children


def test_sandboxed_workers_use_clones_of_the_coordinator_s_zygote(tmp_path):
    from rnngrade.sandbox import SandboxUnavailable
    from rnngrade.sandbox.zygote.client import shared_client

    try:
        mother = shared_client()
    except SandboxUnavailable as exc:
        pytest.skip(f"sandbox unavailable here: {exc}")
    lab = get_lab("lab1")
    folder = tmp_path / "class"
    folder.mkdir()
    write_entry(folder, "alice", lab, lab.solution_path().read_text(), "py")
    pool = LocalPool(GradingSpec("lab1", "cpu", False), 1, timeout=120)
    before = _children(mother.info.pid)
    tasks = [(e.student, read_entry(e).to_wire()) for e in [Entry("alice", folder / "alice.py")]]
    for _, outcome in pool.run(tasks):
        assert isinstance(outcome, Graded)
        worker = int(outcome.worker.rsplit(":", 1)[1])
        clones = _children(mother.info.pid) - before
        assert len(clones) == 1  # the worker's zygote, forked from this process's
        assert _children(worker) == set()  # the worker started no zygote of its own
        result = outcome.result
        assert result["score"] == result["max_score"] and result["protections"]
    assert all(_ends(pid) for pid in clones)  # gone with its worker


def _ends(pid: int, timeout: float = 10.0) -> bool:
    """Whether process ``pid`` exits within ``timeout`` (a zombie counts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("lab, inprocess, server, zygote", [
    ("lab1", False, ["torch"], True),  # a lab with torch checks: its workers get torch too
    ("lab1", True, ["torch"], False),  # no sandbox: no zygote
    ("lab2", False, [], True),  # no torch checks: the grading processes never import torch
    ("lab99", False, None, False),  # a lab the batch will refuse: nothing started
])
def test_start_early_starts_the_fork_server_and_the_zygote(monkeypatch, lab, inprocess, server,
                                                            zygote):
    import multiprocessing.forkserver

    from rnngrade.gradebook import executors
    from rnngrade.sandbox.zygote import client as zygote_module

    started: dict[str, object] = {}
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running",
                        lambda: started.setdefault("server", list(
                            multiprocessing.forkserver._forkserver._preload_modules)))
    monkeypatch.setattr(zygote_module, "start_soon", lambda *_: started.setdefault("zygote", True))
    saved = list(multiprocessing.forkserver._forkserver._preload_modules)
    try:
        executors.start_early(GradingSpec(lab, "cpu", inprocess))
    finally:
        multiprocessing.forkserver.set_forkserver_preload(saved)
    preloaded = started.get("server")
    assert (preloaded is None) == (server is None)
    if server is not None:
        assert isinstance(preloaded, list) and "rnngrade.grading.engine" in preloaded
        assert ("torch" in preloaded) == ("torch" in server)
    assert started.get("zygote", False) == zygote

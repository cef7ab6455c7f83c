"""Outcome tests run the same everywhere: a fresh worker with one thread and seeded generators,
the same figures on every run and at any parallelism, and the student's training run with a
progress line per 100 updates when asked for."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.gradebook.batch import BatchOptions, run_batch
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from ..conftest import _forget_modules_under

SUBMISSIONS = course_root() / "fixtures" / "submissions" / "lab9"


def test_a_prepared_worker_has_one_thread_and_seeded_generators(sandbox):
    source = ("import numpy as np\n\ndef draw():\n    return float(np.random.random())\n")
    runner = sandbox(source, "charlm.py")
    pinned = runner.call_helper("prepare_outcome", (1234,)).value
    first = runner.call("draw").value
    runner.restart()
    assert runner.call_helper("prepare_outcome", (1234,)).value == pinned
    assert runner.call("draw").value == first  # a fresh worker, seeded alike
    assert pinned["blas"]


Figures = dict[str, tuple[float, dict[str, list[tuple[str, float]]]]]


def figures_over_three_batches(tmp_path: Path, lab_name: str, mistake: str,
                               tests: tuple[str, ...]) -> list[Figures]:
    """Batch the lab's reference (``ref``) and one known mistake (``mistake``) three times, at
    -j 1, 2 and 2: per batch and student, the score and every measurement of ``tests``."""
    lab = get_lab(lab_name)
    reference = (course_root() / "fixtures" / "submissions" / lab_name / "reference"
                 / lab.filename).read_text(encoding="utf-8")
    mutants = {m.name: m for m in load_mutant_table(lab.mutants_path()).mutants}
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ref.py").write_text(reference, encoding="utf-8")
    (folder / "mistake.py").write_text(mutants[mistake].apply(reference), encoding="utf-8")
    runs = []
    for jobs in (1, 2, 2):
        out = tmp_path / f"out{len(runs)}"
        run_batch([folder], BatchOptions(lab=lab_name, out=out, jobs=jobs, device="cpu"))
        got = {}
        for student in ("ref", "mistake"):
            data = json.loads((out / lab_name / "students" / student / "results.json")
                              .read_text())
            by_id = {t["test_id"]: t for t in data["tests"]}
            got[student] = (data["score"], {
                name: [(m["name"], m["value"]) for m in by_id[name]["measurements"]]
                for name in tests})
        runs.append(got)
        shutil.rmtree(out)
    return runs


@pytest.mark.slow
def test_same_figures_at_j1_and_j2_and_on_every_run(tmp_path):
    runs = figures_over_three_batches(tmp_path, "lab9", "gradient_ascent",
                                      ("test_training_reaches_band",))
    assert runs[0] == runs[1] == runs[2]
    loss = {s: figures["test_training_reaches_band"][0][1] for s, (_, figures) in runs[0].items()}
    assert loss["ref"] < 0.42 < loss["mistake"]


def run_public(repo: Path, *args: str) -> tuple[int, str]:
    """``pytest assignments/lab9 ARGS`` in ``repo``, in this process, its output captured."""
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            code = pytest.main(["assignments/lab9", "-p", "no:randomly", "-p", "no:cacheprovider",
                                f"--rootdir={repo}", *args])
    finally:
        _forget_modules_under(repo)
    return int(code), log.getvalue()


@pytest.mark.slow
def test_public_training_run_prints_progress_with_outcome_only(tmp_path, monkeypatch):
    repo = tmp_path / "course"
    (repo / "assignments" / "lab9").mkdir(parents=True)
    (repo / "fixtures" / "public").mkdir(parents=True)
    shutil.copy(course_root() / "conftest.py", repo / "conftest.py")
    shutil.copy(course_root() / "assignments" / "lab9" / "test_charlm_public.py",
                repo / "assignments" / "lab9")
    shutil.copy(SUBMISSIONS / "reference" / "charlm.py", repo / "assignments" / "lab9")
    shutil.copy(course_root() / "fixtures" / "public" / "lab9.npz", repo / "fixtures" / "public")
    monkeypatch.delenv("RNNGRADE_ROOT", raising=False)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "path", list(sys.path))
    code, out = run_public(repo)
    assert code == 0 and "1 skipped" in out and "update 100/500" not in out, out
    code, out = run_public(repo, "--outcome", "-k", "training")
    assert code == 0, out
    assert [f"update {k}/500" in out for k in (100, 200, 300, 400, 500)] == [True] * 5


@pytest.mark.slow
def test_lab8_part_b_same_figures_at_j1_and_j2_and_on_every_run(tmp_path):
    """lab8 Part B's training run (two torch fits), for the reference and for a loop that never
    zeroes its gradients."""
    test = "test_forecaster_training_reproduces_the_lesson"
    runs = figures_over_three_batches(tmp_path, "lab8", "gradients_accumulate", (test,))
    assert runs[0] == runs[1] == runs[2]
    per_window = {s: dict(figures[test])["RMSE of the per-window model"]
                  for s, (_, figures) in runs[0].items()}
    assert per_window["ref"] < 0.2 < per_window["mistake"]


@pytest.mark.slow
def test_lab11_same_figures_at_j1_and_j2_and_on_every_run(tmp_path):
    """Lab 11's training runs (torch), for the reference and for a loop that draws the same
    batch at every update."""
    tests = ("test_train_seq2seq_attention_reaches_band", "test_train_seq2seq_bottleneck",
             "test_greedy_decode_batch_exposure_bias", "test_decoder_step_beam_search",
             "test_greedy_decode_batch_alignment")
    runs = figures_over_three_batches(tmp_path, "lab11", "same_batch_every_step", tests)
    assert runs[0] == runs[1] == runs[2]
    band = "test_train_seq2seq_attention_reaches_band"
    bands = (0.9, 0.9, 0.7)  # lengths 4, 8, 12 (the suite's ATTENTION_BAND)
    assert all(value >= b for (_, value), b in zip(runs[0]["ref"][1][band], bands))
    assert any(value < b for (_, value), b in zip(runs[0]["mistake"][1][band], bands))


@pytest.mark.slow
def test_lab10_same_figures_at_j1_and_j2_and_on_every_run(tmp_path):
    """Lab 10's three training runs, for the reference and for a model whose forget bias is
    doubled."""
    tests = ("test_lstm_forget_bias_5_solves_lag_25", "test_lstm_forget_bias_1_stays_at_chance",
             "test_diagonal_linear_solves_lag_100")
    runs = figures_over_three_batches(tmp_path, "lab10", "forget_bias_in_both_vectors", tests)
    assert runs[0] == runs[1] == runs[2]
    accuracies = [runs[0]["ref"][1][name][0][1] for name in tests]
    assert accuracies[0] >= 0.95 and accuracies[1] <= 0.25 and accuracies[2] >= 0.95

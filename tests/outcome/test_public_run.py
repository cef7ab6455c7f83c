"""The student's training run (``pytest assignments/labN --outcome``) runs as the grader's does,
with one thread per pool, and shows its figure when it passes, without ``-s``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from rnngrade.paths import course_root

PUBLIC = '''\
import os

import pytest


@pytest.mark.outcome(wall=10, cpu=10)
def test_training_run():
    import numpy  # noqa: F401  (its BLAS is loaded: pinned by the harness, not here)
    import torch

    print(f"validation loss 0.391 nats/char; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
          f"; torch threads {torch.get_num_threads()}")


@pytest.mark.outcome(wall=10, cpu=10)
def test_failing_run():
    print("validation loss 0.600 nats/char")
    assert False, "outside the band"


def test_ordinary():
    print("not a training run")
'''


def run_public(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``pytest assignments/lab90 ARGS`` in a student's repository, in a fresh process whose
    environment pins no thread pool."""
    repo = tmp_path / "repo"
    (repo / "assignments" / "lab90").mkdir(parents=True, exist_ok=True)
    shutil.copy(course_root() / "conftest.py", repo / "conftest.py")
    (repo / "assignments" / "lab90" / "test_toy_public.py").write_text(PUBLIC)
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_NUM_THREADS") and k != "RNNGRADE_ROOT"}
    done = subprocess.run([sys.executable, "-m", "pytest", "assignments/lab90", "-p",
                           "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--rootdir={repo}", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def test_a_passing_training_run_shows_its_figure_and_runs_on_one_thread(tmp_path):
    code, out = run_public(tmp_path, "--outcome")
    assert code == 1, out  # the failing run fails
    lines = [line for line in out.splitlines() if "validation loss 0.391" in line]
    assert lines == ["  test_training_run: validation loss 0.391 nats/char; OMP_NUM_THREADS=1; "
                     "torch threads 1"], out
    assert "not a training run" not in out  # an ordinary test's output stays captured
    assert "test_failing_run: validation loss" not in out  # pytest shows a failure's output


def test_without_outcome_the_training_runs_are_skipped_and_print_nothing(tmp_path):
    code, out = run_public(tmp_path)
    assert code == 0 and "2 skipped" in out, out
    assert "validation loss" not in out

"""Nothing in a lab's worker answers a graded function, and nothing of a hidden suite's text is
there to quote: lab 9's cheats that walk the garbage collector beside the lab's helpers find no
Adam to borrow and no docstring to print (the helpers ship as code only)."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from rnngrade.harness.runner.base import StudentError
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab
from tests.cheats.fixtures import (
    ADAM_FROM_GC,
    DOCSTRINGS_FROM_GC,
    replace_function,
    with_function,
)

LAB9 = get_lab("lab9")


def adam_args() -> tuple:
    rng = np.random.default_rng(0)
    shapes = {"W_xh": (4, 3), "b_h": (4,)}
    params = {k: rng.standard_normal(s) for k, s in shapes.items()}
    grads = {k: rng.standard_normal(s) for k, s in shapes.items()}
    state = {"m": {k: np.zeros(s) for k, s in shapes.items()},
             "v": {k: np.zeros(s) for k, s in shapes.items()}}
    return params, grads, state, 1


def suite_texts() -> list[str]:
    """Every line of a docstring in lab 9's hidden suite and helpers (long enough to tell)."""
    lines = []
    for path in (LAB9.helpers_path(), *LAB9.suite_dir().glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef):
                doc = ast.get_docstring(node) or ""
                lines += [line.strip() for line in doc.splitlines() if len(line.strip()) >= 12]
    return lines


def test_adam_step_finds_no_adam_in_the_worker(sandbox):
    runner = sandbox(with_function(LAB9, ADAM_FROM_GC), "charlm.py",
                     helpers=lab_helpers(LAB9).source)
    with pytest.raises(StudentError, match="no Adam to borrow"):
        runner.call("adam_step", adam_args())


def test_no_suite_docstring_in_the_worker(sandbox):
    runner = sandbox(with_function(LAB9, DOCSTRINGS_FROM_GC), "charlm.py",
                     helpers=lab_helpers(LAB9).source)
    with pytest.raises(StudentError) as failed:
        runner.call("adam_step", adam_args())
    message = str(failed.value)
    assert "LEAK" in message
    texts = suite_texts()
    assert texts and not [t for t in texts if t in message]


@pytest.mark.slow
def test_graded_cheats_score_nothing_and_quote_no_suite_text(sandbox_available, tmp_path):
    """Graded in the sandbox: the borrowed Adam scores nothing on adam_step's tests, and what
    the docstring dump raised reaches results.json and the feedback without a line of the
    suite's text."""
    import json
    import subprocess
    import sys

    dump = DOCSTRINGS_FROM_GC
    header = "def adam_step(params, grads, state, step, lr=3e-3, beta1=0.9, beta2=0.999, eps=1e-8):"
    assert header in dump
    source = with_function(LAB9, ADAM_FROM_GC)
    source = replace_function(source, dump.replace(
        header, "def token_weighted_perplexity(batch_losses, batch_token_counts):"))
    folder = tmp_path / "cheat"
    folder.mkdir()
    (folder / "charlm.py").write_text(source, encoding="utf-8")
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "rnngrade.cli", "grade", str(folder), "--lab", "lab9",
                    "--out", str(out), "--no-outcome", "--device", "cpu"], check=True,
                   timeout=1800)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    scores = {t["test_id"]: t["score"] for t in results["tests"]}
    assert scores["test_adam_step"] == 0 and scores["test_adam_step_tiny_moments"] == 0
    assert scores["test_token_weighted_perplexity"] == 0
    reports = "".join((out / name).read_text(encoding="utf-8")
                      for name in ("results.json", "feedback.md", "feedback.html"))
    assert "LEAK" in reports
    assert not [t for t in suite_texts() if t in reports]


"""A lab's own helpers (``graders/suites/labN/helpers.py``) run in the jailed worker, sent as
source by the grader: they work there as in-process, while the suite folder stays out of reach."""

from __future__ import annotations

import numpy as np
import pytest

from rnngrade.harness.runner.base import FunctionRef, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.worker_helpers import GENERIC
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import available_labs, get_lab

LAB6 = get_lab("lab6")
REFERENCE = LAB6.solution_path().read_text(encoding="utf-8")

LOOK = '''
import os


def look(paths):
    seen = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                seen[path] = len(f.read())
        except OSError:
            seen[path] = None
    return seen
'''


def sample_args() -> tuple:
    model = FunctionRef("random_lm", (11, 6, 0, 0.5))
    return model, (), 1, 0, 8, 0.8, 1234  # step_fn, state, bos, eos, max_len, temperature, seed


def test_a_lab6_helper_runs_in_the_sandbox_as_in_process(sandbox):
    helpers = lab_helpers(LAB6)
    assert {"sample_seeded", "sample_counts"} <= set(helpers.registry.helpers)
    runner = sandbox(REFERENCE, LAB6.filename, helpers=helpers.source)
    jailed = runner.call_helper("sample_seeded", sample_args()).value
    local = InProcessRunner.from_source(REFERENCE, LAB6.filename, helpers=helpers.registry)
    expected = local.call_helper("sample_seeded", sample_args()).value
    assert list(jailed["tokens"]) == list(expected["tokens"]) and jailed["tokens"]
    assert jailed["draws"] == expected["draws"] >= 1


def test_without_the_lab_s_helpers_the_worker_does_not_know_them(sandbox):
    runner = sandbox(REFERENCE, LAB6.filename)
    with pytest.raises(StudentError, match="sample_seeded"):
        runner.call_helper("sample_seeded", sample_args())


def test_the_worker_cannot_read_the_suite_beside_the_helpers(sandbox):
    helpers = lab_helpers(LAB6)
    runner = sandbox(LOOK + "\n\n" + REFERENCE, LAB6.filename, helpers=helpers.source)
    suite = LAB6.suite_dir()
    paths = [str(suite / name) for name in ("helpers.py", "mutants.py", "rubric.yaml",
                                             "test_decoding_hidden.py", "lab.yaml")]
    paths.append(str(LAB6.solution_path()))
    assert runner.call("look", (paths,)).value == {path: None for path in paths}
    tokens = runner.call_helper("sample_seeded", sample_args()).value["tokens"]
    assert np.asarray(tokens).size  # the helpers work in that same worker


def own_helpers(lab: str) -> list[str]:
    return sorted(set(lab_helpers(lab).registry.helpers) - set(GENERIC.helpers))


@pytest.mark.parametrize("lab", [lab.name for lab in available_labs() if own_helpers(lab.name)])
def test_every_lab_s_helpers_load_in_the_jailed_worker(sandbox, lab):
    """They import ``rnngrade.suite.worker`` after the jail, which the worker loaded before: each
    helper is there (a call without its arguments reaches it and fails on them)."""
    runner = sandbox("def f():\n    return 1\n", "m.py", helpers=lab_helpers(lab).source)
    for name in own_helpers(lab):
        with pytest.raises(StudentError, match=rf"TypeError: {name}\(\) missing"):
            runner.call_helper(name, ())

"""Training runs stopped once their verdict is decided (lab 10's bands "reach ≥ 95%"): the
verdict and the figures are those of the run to its end, on seeds 0-4 for the reference and
every known mistake, and a batch graded at -j 1 and at -j 2 gives the same results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table, load_source_as_module, strip_markers
from rnngrade.gradebook.batch import BatchOptions, run_batch
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

LAB = get_lab("lab10")
SUITE = LAB.suite_dir()
# the runs whose band is "reach": (kind, lag, forget bias), as test_memory_hidden grades them
REACHED = (("lstm", 25, 5.0), ("lin", 100, 0.0))
SEEDS = range(5)


@pytest.fixture(scope="module")
def suite():
    """The hidden suite's constants and the lab's helpers, as plain functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_lab10_suite_for_stops",
                                                  SUITE / "test_memory_hidden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, lab_helpers(LAB).registry.helpers


def variants() -> dict[str, str]:
    """The reference and every known mistake that changes a recall run. The other mistakes edit
    functions train_recall never calls while graded (the README's recall_batch is put in place),
    so their runs are the reference's."""
    reference = LAB.solution_path().read_text(encoding="utf-8")
    sources = {"reference": reference}
    for mutant in load_mutant_table(SUITE / "mutants.py").mutants:
        if mutant.function == "train_recall":
            sources[mutant.name] = mutant.apply(reference)
        else:
            assert mutant.function not in ("DiagLinearRecurrence", "train_recall"), mutant.name
    return sources


def run_both_ways(suite, module, reference, kind: str, lag: int, forget_bias: float,
                  seed: int) -> tuple[dict, dict]:
    """The run to its end and the run stopped once decided, each measured on the trusted side
    as the hidden suite measures it: ``(accuracy, stopped, losses, final)`` for each."""
    tests, helpers = suite
    args = (kind, lag, forget_bias, tests.UPDATES, seed)
    x, y = helpers["recall_seeded"](reference, 1000, lag, 12345)
    results = []
    for reach in (None, (x, y, 0.95 + tests.STOP_MARGIN)):
        run = helpers["train_recall_observed"](module, *args, tests.EVERY, None, reach)
        figures = helpers["recall_figures"](reference, kind, lag, seed, run)
        results.append({"accuracy": figures["accuracy"], "stopped": tests.stopped_at(run),
                        "losses": figures["losses"], "run": run})
    return results[0], results[1]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_stopped_run_has_the_verdict_and_figures_of_the_run_to_its_end(suite, seed):
    tests, _ = suite
    reference = load_source_as_module(strip_markers(LAB.solution_path().read_text("utf-8")),
                                      "_lab10_stops_reference")
    decided = []
    for name, source in variants().items():
        module = load_source_as_module(strip_markers(source), f"_lab10_stops_{name}")
        for kind, lag, forget_bias in REACHED:
            if kind == "lin" and "forget" in name:
                continue  # the forget slice is the LSTM's only
            full, stopped = run_both_ways(suite, module, reference, kind, lag, forget_bias,
                                          seed)
            where = (name, kind, seed, full["accuracy"], stopped["accuracy"])
            assert (full["accuracy"] >= 0.95) == (stopped["accuracy"] >= 0.95), where
            at = stopped["stopped"]
            if at is None:  # never reached: the same run to its end, the same figures
                assert stopped["accuracy"] == full["accuracy"], where
                assert stopped["losses"] == full["losses"], where
                continue
            decided.append(at)
            # the figures at the stop are the full run's at that update, bit for bit
            assert stopped["losses"] == [e for e in full["losses"] if e[0] <= at + 1], where
            checkpoint = dict(full["run"]["checkpoints"])[at + 1]
            assert set(checkpoint) == set(stopped["run"]["final"])
            for key, value in checkpoint.items():
                assert value.equal(stopped["run"]["final"][key]), (where, key)
    assert decided, "no run was stopped: nothing was shown"


def comparable(data: dict) -> dict:
    """A results.json without its timings."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()
                    if k not in ("execution_time", "seconds", "graded_at")
                    and not k.endswith("_seconds")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(data)


def test_a_batch_with_stopped_runs_gives_the_same_results_at_j1_and_j2(tmp_path: Path):
    """Sandboxed: the reference (its reached runs stopped) and a mistake whose reached run never
    stops (forget_slice_is_input_gate), graded at -j 1 and at -j 2."""
    samples = tmp_path / "in"
    samples.mkdir()
    reference = (course_root() / "fixtures" / "submissions" / LAB.name / "reference" /
                 LAB.filename).read_text(encoding="utf-8")
    mistake = next(m for m in load_mutant_table(SUITE / "mutants.py").mutants
                   if m.name == "forget_slice_is_input_gate")
    (samples / "reference.py").write_text(reference, encoding="utf-8")
    (samples / "mistake.py").write_text(mistake.apply(reference), encoding="utf-8")
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        run_batch([samples], BatchOptions(lab=LAB.name, out=out, jobs=jobs, device="cpu"))
        results[jobs] = {name: comparable(json.loads(
            (out / LAB.name / "students" / name / "results.json").read_text(encoding="utf-8")))
            for name in ("reference", "mistake")}
    assert results[1] == results[2]
    tests = {t["name"]: t for t in results[1]["reference"]["tests"]}
    reached = [t for t in tests.values() if "where the band was reached" in json.dumps(t)]
    assert len(reached) == 2, "the reference's two reached runs were not stopped"
    assert results[1]["reference"]["score"] == results[1]["reference"]["max_score"]
    assert results[1]["mistake"]["score"] < results[1]["mistake"]["max_score"]

"""A grader's memo kept on disk: the next process of the same lab version reads the trusted
values without computing them, leaves the global generators where the computation would have,
and computes again whenever the lab, the device, the value's key or the file itself differ."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnngrade.grading import reference_cache
from rnngrade.grading.engine import Grader
from rnngrade.grading.memo import DiskScope, ExpectationMemo
from rnngrade.paths import course_root

from ..counting import Counted
from .test_reusable_grader import comparable

SCOPE = DiskScope("lab1", "d" * 64, "cpu")



def value() -> dict:
    return {"h": np.linspace(0.0, 1.0, 7).reshape(7, 1) / 3, "loss": 0.1 + 0.2,
            "grads": (torch.arange(4.0) / 7, np.float32(0.3))}


def fresh(scope: DiskScope = SCOPE) -> ExpectationMemo:
    """A memo as a new grading process starts with: nothing in memory."""
    return ExpectationMemo(disk=scope)


def test_a_new_process_reads_the_value_without_computing_it(cache):
    compute = Counted(value)
    key = ExpectationMemo.key("check", value, (1, 2.5))
    first = fresh().compute(key, "reference", compute)
    memo = fresh()
    second = memo.compute(key, "reference", compute)
    assert compute.calls == 1 and memo.disk_hits == 1
    assert reference_cache.same(first, second) and reference_cache.same(second, value())
    assert memo.compute(key, "mutant m", compute) is not None and compute.calls == 2  # a role


@pytest.mark.parametrize("scope", [DiskScope("lab2", SCOPE.digest, "cpu"),
                                   DiskScope("lab1", "e" * 64, "cpu"),
                                   DiskScope("lab1", SCOPE.digest, "cuda")],
                         ids=["lab", "edited-lab", "device"])
def test_another_lab_version_or_device_computes_again(cache, scope):
    compute = Counted(value)
    key = ExpectationMemo.key("check", value, ())
    fresh().compute(key, "reference", compute)
    fresh(scope).compute(key, "reference", compute)
    assert compute.calls == 2


def test_other_library_or_grader_source_computes_again(cache, monkeypatch):
    compute = Counted(value)
    key = ExpectationMemo.key("check", value, ())
    fresh().compute(key, "reference", compute)
    monkeypatch.setattr(reference_cache, "_PACKAGE", ["another source"])
    fresh().compute(key, "reference", compute)
    monkeypatch.setattr(reference_cache, "_LIBRARIES", {"torch": "0.0", "numpy": "0.0",
                                                        "cpu": "other"})
    fresh().compute(key, "reference", compute)
    assert compute.calls == 3


def test_other_thread_settings_compute_again(cache, monkeypatch):
    compute = Counted(value)
    key = ExpectationMemo.key("check", value, ())
    threads = torch.get_num_threads()
    fresh().compute(key, "reference", compute)
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    fresh().compute(key, "reference", compute)
    torch.set_num_threads(threads + 1)
    try:
        fresh().compute(key, "reference", compute)
    finally:
        torch.set_num_threads(threads)
    assert compute.calls == 3


def test_a_draw_is_read_back_under_the_same_states_and_leaves_them_as_it_did(cache):
    compute = Counted(lambda: np.random.standard_normal(3) + torch.randn(1).item())
    key = ExpectationMemo.key("draw", compute.value, ())

    def from_state(seed: int) -> tuple:
        np.random.seed(seed)
        torch.manual_seed(seed)
        got = fresh().compute(key, "reference", compute)
        return got, np.random.standard_normal(), torch.randn(1).item()

    first = from_state(1)
    again = from_state(1)
    assert compute.calls == 1
    assert np.array_equal(first[0], again[0]) and first[1:] == again[1:]
    from_state(2)  # other states before it: computed again
    assert compute.calls == 2


@pytest.mark.parametrize("damage", ["truncated", "not-json", "another-value-kind",
                                    "bad-state"])
def test_a_damaged_file_is_computed_again(cache, damage):
    compute = Counted(lambda: np.random.standard_normal(2))
    key = ExpectationMemo.key("draw", compute.value, ())
    np.random.seed(3)
    want = fresh().compute(key, "reference", compute)
    want_next = np.random.standard_normal()
    for path in cache.glob("*/*/*.json"):
        text = path.read_text()
        if damage == "truncated":
            text = text[: len(text) // 2]
        elif damage == "not-json":
            text = "\0garbage"
        elif damage == "another-value-kind":
            text = text.replace('"draws":true', '"draws":"yes"')
        elif '"after"' in text:  # a state that does not load
            text = text.replace('"MT19937"', '"PCG64"')
        path.write_text(text)
    np.random.seed(3)
    got = fresh().compute(key, "reference", compute)
    assert compute.calls == 2
    assert np.array_equal(got, want) and np.random.standard_normal() == want_next


def test_a_failure_or_a_value_plain_data_cannot_hold_is_computed_every_time(cache):
    def boom():
        raise ValueError("reference failed")

    failing = Counted(boom)
    odd = Counted(lambda: {"a set": {1, 2}})
    for _ in range(2):
        with pytest.raises(ValueError):
            fresh().compute("k1", "reference", failing)
        assert fresh().compute("k2", "reference", odd) == {"a set": {1, 2}}
    assert failing.calls == 2 and odd.calls == 2


def test_no_disk_scope_or_no_cache_folder_keeps_nothing_on_disk(cache, monkeypatch):
    compute = Counted(value)
    ExpectationMemo().compute("k", "reference", compute)
    ExpectationMemo().compute("k", "reference", compute)
    monkeypatch.setenv(reference_cache.ENV, "")
    fresh().compute("k", "reference", compute)
    fresh().compute("k", "reference", compute)
    assert compute.calls == 4 and not cache.exists()


def test_a_new_grader_reads_the_reference_s_values_and_grades_alike(cache):
    samples = course_root() / "fixtures" / "submissions" / "lab1"
    graded = []
    for _ in range(2):
        with Grader("lab1", device="cpu", inprocess=True) as grader:
            graded.append([comparable(grader.grade(samples / name))
                           for name in ("reference", "buggy_feeds_a0")])
            hits = grader.memo.disk_hits
    assert graded[0] == graded[1]
    assert hits > 0

"""The reference's outcome figures on disk: read back by the next grading process without
computing, recomputed when the lab's files, the seed or the file itself change, never kept when
plain data cannot hold them exactly, and never visible to a worker."""

from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

from rnngrade.grading import reference_cache
from rnngrade.grading.reference_cache import cache_dir, decode, encode, entry_key, same, value_of

from ..counting import Counted
from ..course_env import edit
from ..toy_course import TOY, toy_course


def key(**changes: object) -> dict:
    fields: dict = dict(lab="lab10", digest="d" * 64, test="suites/lab10/t.py::test_a", seed=0,
                        key=("lstm", 25, 5.0, 400, 0), device="cpu")
    fields.update(changes)
    return entry_key(**fields)


LAB9_LIKE = ({"Wxh": np.arange(6.0).reshape(2, 3) / 7}, {"loss": np.linspace(3.6, 0.4, 5),
                                                         "chunk": np.arange(5)})
LAB10_LIKE = (0.9730000000000001, 137, [2.302585092994046, 0.1 + 0.2, -0.0, 1e-300])
LAB11_LIKE = ({"enc.weight": torch.randn(3, 4, generator=torch.Generator().manual_seed(1))},
              torch.tensor([2.5, 1.25], dtype=torch.float32))


@pytest.mark.parametrize("value", [LAB9_LIKE, LAB10_LIKE, LAB11_LIKE, np.float32(0.1), None,
                                   {"nested": [(1, "a"), [True, False]]}],
                         ids=["lab9", "lab10", "lab11", "numpy-scalar", "none", "nested"])
def test_plain_data_comes_back_exactly(value):
    restored = decode(json.loads(json.dumps(encode(value))))
    assert same(value, restored)
    assert type(restored) is type(value)


@pytest.mark.parametrize("value", [
    float("nan"), [1.0, float("inf")], {1: "int key"}, {"$tuple": 1}, {1, 2}, object(),
    np.arange(6.0).reshape(2, 3).T, np.array(["text"]), torch.ones(2, requires_grad=True),
    torch.ones(2, 3).T, torch.ones(2, dtype=torch.bfloat16), type("L", (list,), {})()],
    ids=["nan", "inf", "int-key", "tag-key", "set", "object", "transposed", "str-array",
         "requires-grad", "transposed-tensor", "bfloat16", "list-subclass"])
def test_what_does_not_round_trip_is_computed_every_time_and_never_written(cache, value):
    compute = Counted(value)
    assert value_of(key(), compute) is value and value_of(key(), compute) is value
    assert compute.calls == 2
    assert not cache.exists() or not any(cache.iterdir())


def test_same_tells_apart_what_plain_equality_would_not():
    assert not same(0.0, -0.0) and not same(1, 1.0) and not same(True, 1)
    assert not same((1,), [1]) and not same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same(np.zeros(2, np.float32), np.zeros(2, np.float64))
    assert not same(torch.zeros(2), torch.zeros(2, dtype=torch.float64))
    assert same(0.1 + 0.2, float(repr(0.1 + 0.2))) and not same(0.1 + 0.2, 0.3)


@pytest.mark.parametrize("value", [LAB11_LIKE, LAB9_LIKE], ids=["lab11", "lab9"])
def test_a_second_process_reads_the_value_without_computing(cache, value):
    first = Counted(value)
    cold = value_of(key(), first)
    again = Counted(value)
    warm = value_of(key(), again)
    assert first.calls == 1 and again.calls == 0
    # the same value, its dicts in their own order (lab 9's history is "loss" before "chunk")
    assert same(warm, value) and same(cold, warm)
    assert cold is not value  # the decoded value, on a cold cache too
    assert len(list(cache.glob("*/*/*.json"))) == 1 and not list(cache.rglob(".*.tmp"))


@pytest.mark.parametrize("change", [dict(digest="e" * 64), dict(seed=1), dict(device="cuda"),
                                    dict(test=""), dict(key=("lstm", 25, 1.0, 400, 0)),
                                    dict(lab="lab11")],
                         ids=["digest", "seed", "device", "shared", "caller-key", "lab"])
def test_every_part_of_the_key_names_its_own_entry(cache, change):
    value_of(key(), Counted(1.5))
    other = Counted(2.5)
    assert value_of(key(**change), other) == 2.5 and other.calls == 1
    if "digest" not in change:  # a run of another version of the lab removed this one's entry
        assert value_of(key(), Counted(None)) == 1.5


def test_other_library_versions_compute_again(cache, monkeypatch):
    assert key()["numpy"] == np.__version__
    value_of(key(), Counted(1.5))
    monkeypatch.setattr(reference_cache, "library_versions",
                        lambda: {"torch": "0.0", "numpy": np.__version__})
    other = Counted(2.5)
    assert value_of(key(), other) == 2.5 and other.calls == 1


@pytest.mark.parametrize("damage", ["truncated", "not-json", "other-key", "no-value",
                                    "bad-value", "directory"])
def test_a_damaged_or_foreign_file_is_recomputed_and_replaced(cache, damage):
    value_of(key(), Counted([1.0, 2.0]))
    (path,) = cache.glob("*/*/*.json")
    text = path.read_text()
    data = json.loads(text)
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "not-json":
        path.write_bytes(b"\xff\xfe\x00garbage")
    elif damage == "other-key":
        path.write_text(json.dumps({"key": {**data["key"], "seed": 7}, "value": [9.0]}))
    elif damage == "no-value":
        path.write_text(json.dumps({"key": data["key"]}))
    elif damage == "bad-value":
        path.write_text(json.dumps({"key": data["key"], "value": {"$tensor": {"dtype": "x"}}}))
    else:
        path.unlink()
        path.mkdir()
    compute = Counted([1.0, 2.0])
    assert value_of(key(), compute) == [1.0, 2.0] and compute.calls == 1
    if damage != "directory":
        assert value_of(key(), Counted(None)) == [1.0, 2.0]  # rewritten whole


def test_an_unwritable_location_computes_every_time_with_one_note(tmp_path, monkeypatch,
                                                                  capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(reference_cache.ENV, str(blocker / "cache"))
    monkeypatch.setattr(reference_cache, "_warned", False)
    compute = Counted(3.0)
    assert [value_of(key(seed=s), compute) for s in (0, 0, 1)] == [3.0, 3.0, 3.0]
    assert compute.calls == 3
    assert capsys.readouterr().err.count("cannot keep the reference's figures") == 1


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.delenv(reference_cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "rnngrade"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/not/allowed")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "rnngrade"
    monkeypatch.setenv(reference_cache.ENV, str(tmp_path / "chosen"))
    assert cache_dir() == tmp_path / "chosen"
    monkeypatch.setenv(reference_cache.ENV, "")
    assert cache_dir() is None
    compute = Counted(1.0)
    value_of(key(), compute)
    value_of(key(), compute)
    assert compute.calls == 2 and not (tmp_path / "home").exists()


# ------------------------------------------------------------------ through a grading session

LAB_YAML = """\
title: "Toy: a figure graded by outcome"
module: toy
functions: [twice]
uses_torch: false
"""
SOLUTION = "def twice(x):\n    return 2 * x\n"
SUITE = '''\
import os

import numpy as np
import pytest


def reference_run(reference, seed):
    with open(os.environ["TOY_COUNT"], "a") as f:
        f.write("x")
    rng = np.random.default_rng(seed)
    return float(reference.twice(0.1)) + 0.01 * float(rng.random()), [0.5, 0.25]


@pytest.mark.outcome(wall=10, cpu=20)
def test_figure(student, reference, outcome):
    figure, curve = outcome.reference_value("run", lambda: reference_run(reference, outcome.seed))
    outcome.measure("twice 0.1", float(student.twice(0.1)), bound="≤", threshold=figure,
                    baselines=[("the reference's", figure)], curve=[1.0, 0.5],
                    reference_curve=curve)
    outcome.verdict()


def shared_run():
    with open(os.environ["TOY_COUNT"], "a") as f:
        f.write("s")
    return 0.25


@pytest.mark.outcome(wall=10, cpu=20)
@pytest.mark.parametrize("case", [1, 2])
def test_shared(student, outcome, case):
    figure = outcome.reference_value("shared", shared_run, shared=True)
    outcome.measure("a shared figure", figure, bound="≤", threshold=0.25)
    outcome.verdict()


def test_plain(student):
    assert student.twice(2) == 4
'''
RUBRIC = f"""\
lab: {TOY}
tests:
  test_figure: {{points: 2, title: "a figure"}}
  test_shared: {{points: 1, title: "a shared figure"}}
  test_plain: {{points: 1, title: "plain"}}
"""
FILES = {f"graders/suites/{TOY}/lab.yaml": LAB_YAML,
         f"graders/suites/{TOY}/rubric.yaml": RUBRIC,
         f"graders/suites/{TOY}/test_toy_hidden.py": SUITE,
         f"solutions/{TOY}/toy.py": SOLUTION}


def graded(submission: Path) -> list:
    """Grade in a fresh grader (a new pytest session, as another process would): per test, its
    score, outcome and measurements."""
    from rnngrade.grading.engine import close_shared_graders, grade

    close_shared_graders()
    result = grade(submission, TOY, device="cpu", inprocess=True)
    close_shared_graders()
    return [(t.name, t.score, t.outcome, [asdict(m) for m in t.measurements])
            for t in result.tests]


@pytest.fixture
def toy(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch):
    """(the toy course's root, its reference submission, the file counting the reference's
    runs) while the toy course is this process's course."""
    count = tmp_path / "count"
    count.write_text("")
    monkeypatch.setenv("TOY_COUNT", str(count))
    submission = tmp_path / "toy.py"
    submission.write_text(SOLUTION)
    with toy_course(tmp_path, FILES) as root:
        yield root, submission, count


def test_a_later_session_reads_the_figure_and_grades_alike(toy):
    _, submission, count = toy
    cold = graded(submission)
    warm = graded(submission)
    # computed once (the shared figure once for both tests), read by the second session
    assert sorted(count.read_text()) == ["s", "x"]
    assert cold == warm and cold[0][1] == 2.0 and cold[0][3][0]["baselines"]


def test_an_edited_reference_is_run_again(toy):
    """What ``validate`` meets after an edit of the reference: the lab's digest changes."""
    root, submission, count = toy
    graded(submission)
    edit(root / "solutions" / TOY / "toy.py", "2 * x", "x + x")
    graded(submission)
    assert sorted(count.read_text()) == ["s", "s", "x", "x"]


def test_the_worker_cannot_see_the_cache(sandbox, tmp_path, monkeypatch):
    from rnngrade.sandbox import isolation
    from rnngrade.sandbox.zygote import client as zygote

    monkeypatch.delenv(reference_cache.ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    default = cache_dir()
    assert default is not None
    existed = default.exists()
    marker = default / f".probe-{secrets.token_hex(4)}.json"
    try:
        default.mkdir(parents=True, exist_ok=True)
        marker.write_text("{}")
    except OSError:
        pytest.skip(f"cannot write the default cache folder {default} here")
    try:
        chosen = tmp_path / "chosen"
        chosen.mkdir()
        (chosen / "entry.json").write_text("{}")
        assert str(default) in zygote._hidden_paths()
        runner = sandbox("import os\n\ndef look(paths):\n"
                         "    return [os.path.exists(p) for p in paths]\n", "toy.py")
        paths = [str(marker), str(default), str(default.parent), str(chosen)]
        assert runner.call("look", (paths,)).value == [False] * 4
    finally:
        marker.unlink()
        if not existed:
            default.rmdir()
    # A Python prefix that would hold the cache folder is never bound into the jail.
    inside = os.path.join(os.path.realpath(sys.prefix), "cache")
    ctx = isolation.make_context(str(tmp_path), str(tmp_path), [inside])
    assert not any(os.path.realpath(sys.prefix).startswith(b) for b in ctx.binds)


def test_validate_reads_its_seed_s_figure_and_never_a_stale_one(toy):
    """``rnngrade validate`` runs the reference's outcome tests at other seeds, in this process:
    each seed has its own entry, and an edit of the reference is run again."""
    from rnngrade.labs import get_lab
    from rnngrade.validate_outcomes import run_reference_seed

    root, _, count = toy
    lab = get_lab(TOY)
    first = run_reference_seed(lab, 3)
    assert run_reference_seed(lab, 3) == first and sorted(count.read_text()) == ["s", "x"]
    edit(root / "solutions" / TOY / "toy.py", "2 * x", "x + x")
    assert run_reference_seed(lab, 3) == first
    assert sorted(count.read_text()) == ["s", "s", "x", "x"]


# ------------------------------------------------------------------ figures of a trained result

TRAINED_SOLUTION = ("import numpy as np\n\n\ndef twice(x):\n    return 2 * x\n\n\n"
                    "def train(n):\n    return {'w': np.linspace(0.0, 1.0, n), 'b': np.zeros(2)}\n")
TRAINED_SUITE = '''\
import os

import numpy as np
import pytest


def measured(trained):
    with open(os.environ["TOY_COUNT"], "a") as f:
        f.write("m")
    return float(np.sum(np.asarray(trained["w"], dtype=np.float64) ** 2))


@pytest.mark.outcome(wall=10, cpu=20)
def test_trained(student, reference, outcome):
    theirs = outcome.reference_value("run", lambda: reference.train(5))
    figure, reference_figure = outcome.of_trained("squares", student.train(5), theirs, measured)
    outcome.measure("squares", figure, bound="≤", threshold=2.0,
                    baselines=[("the reference's", reference_figure)])
    outcome.verdict()
'''
TRAINED_FILES = {f"graders/suites/{TOY}/lab.yaml": LAB_YAML.replace("[twice]", "[twice, train]"),
                 f"graders/suites/{TOY}/rubric.yaml": (f"lab: {TOY}\ntests:\n  test_trained: "
                                                       "{points: 1, title: \"trained\"}\n"),
                 # a name of its own: a suite module of another test may still be imported
                 f"graders/suites/{TOY}/test_trained_hidden.py": TRAINED_SUITE,
                 f"solutions/{TOY}/toy.py": TRAINED_SOLUTION}


@pytest.mark.parametrize("edit_of_reference, measured_each_time", [
    (None, False),  # exactly the reference's result: its figure, measured once
    (("np.linspace(0.0, 1.0, n)", "np.linspace(0.0, 1.0, n) * (1 + 1e-15)"), True),  # 1 ulp off
    (("np.linspace(0.0, 1.0, n)", "np.linspace(0.0, 1.0, n, dtype=np.float32)"), True)],
    ids=["reference", "one-ulp", "float32"])
def test_a_figure_of_a_trained_result_is_measured_unless_it_is_the_reference_s(
        tmp_path, cache, monkeypatch, edit_of_reference, measured_each_time):
    count = tmp_path / "count"
    count.write_text("")
    monkeypatch.setenv("TOY_COUNT", str(count))
    source = TRAINED_SOLUTION
    if edit_of_reference is not None:
        source = source.replace(*edit_of_reference)
    submission = tmp_path / "toy.py"
    submission.write_text(source)
    with toy_course(tmp_path, TRAINED_FILES):
        cold, warm = graded(submission), graded(submission)
    namespace: dict = {}
    exec(source, namespace)
    own = float(np.sum(np.asarray(namespace["train"](5)["w"], dtype=np.float64) ** 2))
    reference = float(np.sum(np.linspace(0.0, 1.0, 5) ** 2))
    assert cold == warm, cold
    assert cold[0][3], cold
    figure = cold[0][3][0]
    assert figure["value"] == own and figure["baselines"][0]["value"] == reference
    # the reference's figure once (cold), the submission's own in each session unless it is
    # exactly the reference's result
    assert count.read_text() == ("mmm" if measured_each_time else "m")

"""The public tests say which outputs of a failed check are wrong and which are right (at the
check's own tolerance), and report a student function that writes into its arguments."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.harness.checks.arguments import WriteCheckingProxy, argument_writes, changed_entry
from rnngrade.harness.checks.compare import CheckFailure, compare
from rnngrade.harness.checks.structure import compare_tree
from rnngrade.harness.checks.tolerance import FLOAT32, FLOAT64
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.labs import get_lab
from rnngrade.testing import assert_outputs

GRADS = ("dxt", "da_prev", "dc_prev", "dWf", "dWi", "dbf", "dbi")


def gradients(rng: np.random.Generator, dtype: type = np.float64) -> dict[str, np.ndarray]:
    return {k: rng.standard_normal((3, 4)).astype(dtype) for k in GRADS}


def failure(got: object, want: object, name: str, **kwargs: object) -> str:
    with pytest.raises(CheckFailure) as raised:
        assert_outputs(got, want, name, **kwargs)  # type: ignore[arg-type]
    return raised.value.message


def test_a_failed_check_says_which_outputs_are_wrong_and_which_right():
    want = gradients(np.random.default_rng(0))
    got = {k: v.copy() for k, v in want.items()}
    got["dc_prev"][1, 2] += 1e-3
    message = failure(got, want, "lstm_cell_backward", inputs=(want["dxt"],))
    assert message.splitlines()[-1] == ("`dc_prev` is wrong; `dxt`, `da_prev`, every weight "
                                        "gradient and every bias gradient are right")
    pair = failure((want["dxt"], want["dxt"] + 1), (want["dxt"], want["dxt"]), "cell",
                   names=("cell a_next", "cell yt_pred"), inputs=(want["dxt"],))
    assert pair.splitlines()[-1] == "`yt_pred` is wrong; `a_next` is right"


def test_no_sentence_when_nothing_is_right_or_there_is_one_output():
    x = np.ones((2, 2))
    assert "right" not in failure((x + 1, x + 1), (x, x), "f", names=("a", "b"), inputs=(x,))
    assert "right" not in failure(x + 1, x, "f", inputs=(x,))
    assert "right" not in failure((x,), (x, x), "f", names=("a", "b"), inputs=(x,))


@pytest.mark.parametrize("dtype, tol", [(np.float64, FLOAT64), (np.float32, FLOAT32)],
                         ids=["float64", "float32"])
def test_an_output_called_right_passes_the_checks_own_tolerance(dtype, tol):
    """Outputs perturbed around the tolerance's edge (0.5 to 2 tolerances on one entry):
    every output the sentence calls right passes ``compare`` at the check's tolerance, every
    one it calls wrong fails it."""
    rng = np.random.default_rng(1)
    keys = GRADS[:4]  # four outputs: each listed by name
    checked = 0
    for _ in range(60):
        want = {k: v for k, v in gradients(rng, dtype).items() if k in keys}
        got = {k: v.copy() for k, v in want.items()}
        for k in rng.choice(keys, size=2, replace=False):
            i = tuple(rng.integers(0, 3, size=2))
            allowed = tol.atol + tol.rtol * abs(float(want[k][i]))
            got[k][i] = float(want[k][i]) + float(rng.uniform(0.5, 2.0)) * allowed
        ok = {k: compare(got[k], want[k], tol, k).ok for k in keys}
        if all(ok.values()):
            continue
        line = failure(got, want, "f", inputs=(want["dxt"],)).splitlines()[-1]
        wrong, right = line.split("; ")
        assert {k for k in keys if f"`{k}`" in right} == {k for k, v in ok.items() if v}, line
        assert {k for k in keys if f"`{k}`" in wrong} == {k for k, v in ok.items() if not v}
        checked += 1
    assert checked > 10


def test_the_sentence_uses_the_comparisons_of_the_check():
    """``compare_tree`` at the check's tolerance decides: the sentence never differs from it."""
    want = gradients(np.random.default_rng(2))
    got = {k: v * (1 + 5e-9) for k, v in want.items()}  # within rtol 1e-8: right
    got["dWi"] = want["dWi"] * (1 + 1e-6)
    assert [c.name for c in compare_tree(got, want, FLOAT64, "f", None, None) if not c.ok] \
        == ["f['dWi']"]
    assert failure(got, want, "f", inputs=(want["dxt"],)).splitlines()[-1] == (
        "`dWi` is wrong; `dxt`, `da_prev`, `dc_prev`, `dWf` and every bias gradient are right")


MODULE = '''
import numpy as np

def cell(xt, c_prev, ft):
    """Returns ``(a_next, c_next)``."""
    np.multiply(c_prev, ft, out=c_prev)
    return np.tanh(c_prev), c_prev

def scales(p):
    p["W"] *= 2.0
    return p["W"].sum()

def pure(xt, c_prev, ft):
    return np.tanh(c_prev * ft), c_prev * ft
'''


def test_an_argument_write_is_named_with_the_entry_it_holds():
    proxy = ModuleProxy(InProcessRunner.from_source(MODULE, "mod.py"))
    c_prev = np.linspace(-1, 1, 6).reshape(2, 3)
    proxy.cell(np.ones(2), c_prev, np.full((2, 3), 0.5))
    proxy.scales({"W": np.ones(3)})
    proxy.pure(np.ones(2), c_prev, np.full((2, 3), 0.5))
    assert np.array_equal(c_prev, np.linspace(-1, 1, 6).reshape(2, 3))  # the caller's array
    module = proxy.runner.module  # type: ignore[attr-defined]
    writes = dict(argument_writes(proxy.calls, {n: getattr(module, n) for n in
                                                ("cell", "scales", "pure")}))
    assert set(writes) == {"cell", "scales"}
    assert writes["cell"].startswith("`cell` writes `c_next` into the array passed as `c_prev`: "
                                     "the caller's `c_prev` is changed in place, and the "
                                     "`c_next` it returns is that same array")
    assert writes["scales"].startswith("`scales` changes its argument `p['W']` in place")


def test_equal_values_are_no_write():
    assert changed_entry(np.array([0.0, np.nan]), np.array([-0.0, np.nan]), "argument 1") == ""
    assert changed_entry({"W": np.ones(2)}, {"W": np.ones(2), "b": 0}, "argument 1") \
        == "argument 1['b'] added"
    assert changed_entry(np.ones(2), np.array([1.0, 1.0 + 2e-16]), "argument 2") == "argument 2"


# lstm_cell_forward builds c_next in the c_prev array it was given (corpus variant
# lstm_cell_forward_c_prev_in_place): its values are right, so only the argument check sees it
CELL_WRITES_C_PREV = ("    c_next = ft * c_prev + it * cct\n",
                      "    c_prev *= ft\n    c_prev += it * cct\n    c_next = c_prev\n")


def test_pytest_on_lab3_reports_the_cell_writing_into_c_prev(course_copy):
    lab = get_lab("lab3")
    source = strip_markers(lab.solution_path(course_copy).read_text())
    assert source.count(CELL_WRITES_C_PREV[0]) == 1
    lab.stub_path(course_copy).write_text(source.replace(*CELL_WRITES_C_PREV))
    output = subprocess.run(
        [sys.executable, "-m", "pytest", "assignments/lab3", "-q", "-p", "no:randomly", "-k",
         "lstm_cell_forward_values or lstm_cell_backward_values or lstm_forward_values"],
        cwd=course_copy, capture_output=True, text=True, timeout=300).stdout
    assert "FAILED assignments/lab3/test_lstm_public.py::test_lstm_cell_forward_values" in output
    assert ("`lstm_cell_forward` writes `c_next` into the array passed as `c_prev`: the "
            "caller's `c_prev` is changed in place, and the `c_next` it returns is that same "
            "array") in output, output[-3000:]
    assert "1 failed, 2 passed" in output, output[-3000:]  # the backward and the loop: not theirs


def test_a_test_changing_its_own_arrays_after_a_call_is_no_write():
    """A numerical gradient perturbs its input between calls: the argument as passed is
    compared with the copy the function ran on when the call returns, not at the end."""
    proxy = WriteCheckingProxy(InProcessRunner.from_source(MODULE, "mod.py"))
    c_prev, ft = np.linspace(-1, 1, 6).reshape(2, 3), np.full((2, 3), 0.5)
    proxy.pure(np.ones(2), c_prev, ft)
    c_prev[0, 0] += 1e-5  # the test's own change, after the call
    proxy.pure(np.ones(2), c_prev, ft)
    assert proxy.writes == []
    proxy.cell(np.ones(2), c_prev, ft)
    assert [(i, f) for i, f, _ in proxy.writes] == [(2, "cell")]

"""Gradient checks along directions: the power of the check that decides a passing submission.

A hidden gradient check first compares the submission's gradient with central differences along
a few random directions per key (``rnngrade.harness.checks.gradcheck``) and runs the entry-wise
check only when that fails. The directional check must therefore fail wherever the entry-wise one
does: here both run on every case of every gradient check of labs 2, 3 and 4, on the
references, every known mistake of those labs and a handful of one-bug backward passes written
here.
"""

from __future__ import annotations

import importlib.util
import itertools
import types
from collections.abc import Callable, Iterator
from functools import cache

import numpy as np
import pytest

from rnngrade.diagnosis.mutants import (
    Mutant,
    load_mutant_table,
    load_source_as_module,
    strip_markers,
)
from rnngrade.grading.chained import GradientCheck, plan_gradient_check
from rnngrade.harness.checks.gradcheck import (
    DIRECTIONAL_RTOL,
    OutputLoss,
    directional_differences,
    directional_error,
    random_directions,
)
from rnngrade.harness.checks.seeding import seed_from_name
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.labs import get_lab

SUITES = {"lab2": "test_bptt_hidden.py", "lab3": "test_lstm_hidden.py"}

# Backward passes with one bug each, in the style of the held-out mistakes (not in mutants.py).
VARIANTS = {
    "lab2": [
        Mutant("own_tanh_derivative_dropped", "rnn_cell_backward", "dz = da_next", "",
               (("dz = (1 - a_next ** 2) * da_next", "dz = da_next"),)),
        Mutant("own_dWaa_from_a_next", "rnn_cell_backward", "dWaa = dz a_nextᵀ", "",
               (("dWaa = dz @ a_prev.T", "dWaa = dz @ a_next.T"),)),
        Mutant("own_dba_not_accumulated", "rnn_backward", "dba overwritten per step", "",
               (('dba += grads["dba"]', 'dba = grads["dba"]'),)),
        Mutant("own_first_step_dx_dropped", "rnn_backward", "dx[:, :, 0] never written", "",
               (('dx[:, :, t] = grads["dxt"]', 'dx[:, :, t] = grads["dxt"] * (t > 0)'),)),
        Mutant("own_char_rnn_scale_dropped", "char_rnn_loss_and_grads", "dlogits not scaled",
               "", (("dlogits *= scale", "dlogits *= scale * B"),)),
        Mutant("own_char_rnn_b_h_from_dh", "char_rnn_loss_and_grads", "db_h from dh", "",
               (('grads["b_h"] += np.sum(dz, axis=1)', 'grads["b_h"] += np.sum(dh, axis=1)'),)),
    ],
    "lab3": [
        Mutant("own_candidate_tanh_derivative_dropped", "lstm_cell_backward",
               "dcct = dc ⊙ it", "", (("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it"),)),
        Mutant("own_forget_sigmoid_derivative_dropped", "lstm_cell_backward",
               "dft = dc ⊙ c_prev", "",
               (("dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_prev"),)),
        Mutant("own_dbo_over_all_axes", "lstm_cell_backward", "dbo summed over the gates too", "",
               (("np.sum(dot, axis=1, keepdims=True)",
                 "np.sum(dot, keepdims=True) * np.ones((n_a, 1))"),)),
        Mutant("own_dWc_from_a_prev_only", "lstm_cell_backward", "dWc's input columns zero", "",
               (('"dWc": dcct @ concat.T,',
                 '"dWc": dcct @ np.concatenate((a_prev, 0 * xt), axis=0).T,'),)),
        Mutant("own_bias_grads_first_step_only", "lstm_backward",
               "bias gradients kept from the last step processed (t = 0)", "",
               (("totals[name] += grads[name]",
                 "totals[name] = grads[name] if name.startswith('db') "
                 "else totals[name] + grads[name]"),)),
        Mutant("own_dc_carried_without_forget", "lstm_backward", "dc_prev · 1/ft", "",
               (('dc_prevt = grads["dc_prev"]', 'dc_prevt = grads["dc_prev"] * 1.5'),)),
    ],
}


def _suite_file(lab: str, name: str) -> types.ModuleType:
    path = get_lab(lab).suite_dir() / name
    spec = importlib.util.spec_from_file_location(f"_directional_{lab}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _suite(lab: str) -> types.ModuleType:
    return _suite_file(lab, SUITES[lab])


def _parametrized(fn: Callable[..., None], name: str) -> Iterator[tuple[str, Callable[..., None],
                                                                         dict]]:
    """``fn`` (a test parametrised once) with each of its parameter sets, named as pytest
    names the case."""
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    assert len(marks) == 1, name
    names = [n.strip() for n in marks[0].args[0].split(",")]
    values = marks[0].args[1]
    ids = marks[0].kwargs.get("ids") or [str(i) for i in range(len(values))]
    for case_id, value in zip(ids, values):
        if hasattr(value, "values"):  # a pytest.param: its values and its id
            case_id, value = value.id or case_id, value.values
        yield f"{name}[{case_id}]", fn, dict(zip(names, value))


def _cases(suite: types.ModuleType) -> Iterator[tuple[str, Callable[..., None], dict]]:
    """Every gradient-check test of a suite with each of its parameter sets."""
    for name, fn in vars(suite).items():
        if name.startswith("test_") and name.endswith("gradient_check"):
            yield from _parametrized(fn, name)


@cache
def _plans(lab: str) -> list[tuple[str, GradientCheck, Callable[..., object], tuple]]:
    """Each gradient check of ``lab``'s suite as the grader draws it: (case, plan, backward
    probe, arguments), with the seeds the grader uses."""
    suite = _suite(lab)
    reference = ModuleProxy(InProcessRunner(_module(lab, None)), "reference")
    plans = []
    for case, fn, params in _cases(suite):
        captured = []

        def record(check, reference, name, backward, loss, args, targets, rng, tol, count=6,
                   chain=None, captured=captured):
            captured.append((backward, loss, args, targets, rng, tol, count))

        suite.expect_gradient_check = record
        fn(check=None, reference=reference, rng=np.random.default_rng(seed_from_name(case)),
           **params)
        (backward, loss, args, targets, rng, tol, count), = captured
        plan = plan_gradient_check(reference, backward, loss, args, targets, rng, tol, count)
        plans.append((case, plan, backward, args))
    assert plans
    return plans


@cache
def _module(lab: str, mutant: Mutant | None) -> types.ModuleType:
    source = get_lab(lab).solution_path().read_text(encoding="utf-8")
    text = strip_markers(source) if mutant is None else mutant.apply(source)
    return load_source_as_module(text, f"_{lab}_{mutant.name if mutant else 'reference'}")


def _mutants(lab: str) -> list[Mutant]:
    return load_mutant_table(get_lab(lab).mutants_path()).mutants + VARIANTS[lab]


def _verdicts(lab: str, mutant: Mutant | None) -> list[tuple[str, bool, bool]]:
    """(case, entry-wise check caught it, directional check caught it) per gradient check."""
    proxy = ModuleProxy(InProcessRunner(_module(lab, mutant)), "module")
    found = []
    for case, plan, backward, args in _plans(lab):
        try:
            grads = backward(proxy, *args)
        except Exception:  # noqa: BLE001 - a mistake that raises fails every check alike
            continue
        mine = {key: grads.get(key) if isinstance(grads, dict) else grads for key in plan.shapes}
        entrywise = plan.entrywise(proxy, args, mine, None)
        allowed = plan.share * DIRECTIONAL_RTOL  # the suite's tolerance on 1
        caught = any(np.shape(value) != plan.shapes[key]
                     or not np.all(np.abs(np.asarray(value, dtype=np.float64) - 1) <= allowed)
                     for key, value in entrywise.items())
        found.append((case, caught, plan.along_directions(proxy, args, mine, None) is None))
    return found


@pytest.mark.parametrize("lab", sorted(SUITES))
def test_the_references_pass_along_every_direction_with_a_wide_margin(lab):
    proxy = ModuleProxy(InProcessRunner(_module(lab, None)), "reference")
    for case, plan, backward, args in _plans(lab):
        mine = backward(proxy, *args)
        passed = plan.along_directions(proxy, args, mine, None)
        assert passed is not None, case
        worst = max(float(np.max(v)) for v in passed.values()) - 1
        assert worst <= plan.share * DIRECTIONAL_RTOL / 100, (case, worst)  # the 100x margin


@pytest.mark.parametrize("lab, mutant", [(lab, m) for lab in sorted(SUITES)
                                         for m in _mutants(lab)],
                         ids=lambda v: v if isinstance(v, str) else v.name)
def test_no_mistake_the_entrywise_check_catches_passes_the_directional_one(lab, mutant):
    verdicts = _verdicts(lab, mutant)
    missed = [case for case, entrywise, directional in verdicts if entrywise and not directional]
    assert not missed, f"{mutant.name} passes the directional check of {missed}"


@pytest.mark.parametrize("lab", sorted(SUITES))
def test_the_one_bug_variants_are_caught(lab):
    """The variants written here are real mistakes: some gradient check catches each."""
    for mutant in VARIANTS[lab]:
        assert any(directional for _, _, directional in _verdicts(lab, mutant)), mutant.name


def test_directions_are_unit_seeded_and_stay_on_the_mask():
    mask = np.zeros((3, 4), dtype=bool)
    mask[:, 1] = True
    first = random_directions((3, 4), 2, np.random.default_rng(7), mask)
    again = random_directions((3, 4), 2, np.random.default_rng(7), mask)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    for v in first:
        assert np.isclose(np.linalg.norm(v), 1.0) and not v[~mask].any()
    assert not np.array_equal(first[0], first[1])
    assert random_directions((3, 4), 2, np.random.default_rng(7), np.zeros((3, 4), bool)) == []


def test_the_directional_error_is_measured_against_the_gradient_norm():
    v = np.array([0.6, 0.8])
    assert directional_error(np.array([3.0, 4.0]), v, 5.0) == 0.0
    assert directional_error(np.array([3.0, 4.0]), v, 4.5) == pytest.approx(0.1)
    assert np.isnan(directional_error(np.array([np.nan, 4.0]), v, 5.0))
    # an entry the direction never moves counts neither in g·v nor in the scale
    assert directional_error(np.array([3.0, 4.0, 1e6]), np.append(v, 0.0), 5.0) == 0.0


def test_the_whole_array_moves_along_the_direction_and_comes_back_bit_exactly():
    module = types.SimpleNamespace(square=lambda x, w: (np.sum(w * x ** 2, keepdims=True),))
    x, w = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([1.0, 2.0, 3.0, 4.0]).reshape(2, 2)
    before = x.copy()
    v = np.array([[0.5, 0.5], [0.5, 0.5]])
    (d,), = directional_differences(ModuleProxy(InProcessRunner(module)),
                                    OutputLoss("square", 2, ((0, np.ones((1, 1))),)), (x, w),
                                    [((0,), [v])])
    assert d == pytest.approx(float(np.sum(2 * w * x * v)), rel=1e-8)
    assert np.array_equal(x, before)


def test_every_checked_key_has_its_own_directions_in_every_case():
    plans = {case: plan for case, plan, _, _ in _plans("lab3")}
    assert len(plans) == 6
    for plan in plans.values():
        assert set(plan.directions) == {key for key, picks in plan.picks.items() if picks}
        assert all(len(v) == 2 for v in plan.directions.values())
    firsts = [plan.directions["dbf"][0] for plan in plans.values()]
    assert all(not np.array_equal(a, b) for a, b in itertools.combinations(firsts, 2))


# ------------------------------------------------------------------------------------- lab 4
# lab4 writes its own gradient check (relative errors expected 0, ``gradient_check`` in its
# suite) with the same directional pass first: the same proof on its own cases.
LAB4_VARIANTS = [
    Mutant("own_candidate_tanh_derivative_dropped", "gru_cell_backward", "dzc = dcc", "",
           (("dzc = dcc * (1 - cc**2)", "dzc = dcc"),)),
    Mutant("own_update_sigmoid_derivative_dropped", "gru_cell_backward", "dzu = du", "",
           (("dzu = du * u * (1 - u)", "dzu = du"),)),
    Mutant("own_dbc_without_keepdims_broadcast", "gru_cell_backward", "dbc summed over all",
           "", (("dbc = np.sum(dzc, axis=1, keepdims=True)",
                 "dbc = np.sum(dzc, keepdims=True) * np.ones_like(dzc[:, :1])"),)),
    Mutant("own_dr_from_a_next", "gru_cell_backward", "dr = dreset_state ⊙ a_next", "",
           (("dr = dreset_state * a_prev", "dr = dreset_state * a_next"),)),
]


def _lab4_checks() -> list[tuple[str, Callable[..., object], tuple, types.ModuleType]]:
    """Each case of lab4's gradient check as the grader draws it: (case, the check on a
    module's own forward pass, its arguments, the suite)."""
    suite = _suite_file("lab4", "test_gru_hidden.py")
    fn = suite.test_gru_cell_backward_central_differences
    found = []
    for case, _, params in _parametrized(fn, "test_gru_cell_backward_central_differences"):
        captured = []
        suite.run_chained = lambda student, chain, args, run, own, classic, c=captured: \
            c.append((own, args))
        fn(check=types.SimpleNamespace(student=None),
           rng=np.random.default_rng(seed_from_name(case)), **params)
        (own, args), = captured
        found.append((case, own, args, suite))
    assert len(found) == 4
    return found


def _lab4_verdicts(mutant: Mutant | None) -> list[tuple[str, bool, bool]]:
    """(case, entry-wise check caught it, directional check caught it) per case."""
    proxy = ModuleProxy(InProcessRunner(_module("lab4", mutant)), "module")
    found = []
    for case, own, args, suite in _lab4_checks():
        agreement = suite.directional_agreement
        seen: list[object] = []

        def recorded(*a: object, agreement: Callable[..., object] = agreement,
                     seen: list[object] = seen, **k: object) -> object:
            seen.append(agreement(*a, **k))
            return seen[-1]

        try:
            suite.directional_agreement = lambda *a, **k: None  # entry-wise only
            try:
                errors = own(proxy, *args)
            except Exception:  # noqa: BLE001 - a mistake that raises fails every check alike
                continue
            suite.directional_agreement = recorded
            own(proxy, *args)
        finally:
            suite.directional_agreement = agreement
        caught = not isinstance(errors, dict) or any(
            not np.all(np.abs(np.asarray(e, dtype=np.float64)) <= suite.RELATIVE_ERROR.atol)
            for e in errors.values())
        found.append((case, caught, seen == [None]))
    return found


def test_lab4_reference_passes_along_every_direction():
    verdicts = _lab4_verdicts(None)
    assert verdicts and not any(e or d for _, e, d in verdicts), verdicts


@pytest.mark.parametrize("mutant", [m for m in load_mutant_table(
    get_lab("lab4").mutants_path()).mutants if m.function == "gru_cell_backward"]
    + LAB4_VARIANTS, ids=lambda m: m.name)
def test_lab4_no_mistake_the_entrywise_check_catches_passes_the_directional_one(mutant):
    verdicts = _lab4_verdicts(mutant)
    missed = [case for case, entrywise, directional in verdicts if entrywise and not directional]
    assert not missed, f"{mutant.name} passes the directional check of {missed}"
    if mutant in LAB4_VARIANTS:  # a real mistake: some case catches it
        assert any(directional for _, _, directional in verdicts), mutant.name

"""The comparison messages say what differs, where and by how much."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rnngrade.harness.checks.compare import CheckFailure, assert_close, compare
from rnngrade.harness.checks.structure import assert_outputs, compare_tree
from rnngrade.harness.checks.tolerance import EXACT, FLOAT32, FLOAT64, Tolerance, tolerance_for

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5), elements=finite))
def test_an_array_matches_itself_and_not_a_perturbed_copy(a):
    assert compare(a.copy(), a, FLOAT64, "a").ok
    if a.size:
        b = a.copy()
        b.flat[a.size // 2] += 1e-3 + 1e-3 * abs(b.flat[a.size // 2])
        result = compare(b, a, FLOAT64, "a")
        assert not result.ok
        index = np.unravel_index(a.size // 2, a.shape)
        assert result.worst_index == tuple(int(i) for i in index)
        assert result.n_bad == 1


def test_message_names_the_check_place_size_and_tolerance_but_not_the_expected_value():
    want = np.arange(12.0).reshape(3, 4) + 0.123456
    got = want.copy()
    got[2, 1] += 0.5
    message = compare(got, want, FLOAT64, "a_next").message()
    assert "a_next" in message and "[2, 1]" in message and "0.5" in message
    assert "1 of 12" in message and "atol=1e-10" in message
    assert "9.123456" not in message  # the expected value at [2, 1]


def test_public_messages_reveal_got_and_expected():
    want = np.array([1.0, 2.0])
    with pytest.raises(CheckFailure, match="expected 2.0"):
        assert_close(np.array([1.0, 2.5]), want, FLOAT64, "y")


@pytest.mark.parametrize("got, fragment", [
    (None, "returns None"),
    (np.zeros((4, 3)), "shape (4, 3), expected (3, 4)"),
    (np.zeros((3, 4), dtype=np.float32), "dtype float32, expected float64"),
    (np.zeros((3, 4), dtype=object), "dtype object"),
    (np.zeros((3, 4), dtype=np.int64), "floating-point"),
    ([[0.0] * 4] * 3, "expected a NumPy array"),
    (np.full((3, 4), np.nan), "NaN or inf"),
])
def test_each_kind_of_problem_has_its_own_message(got, fragment):
    result = compare(got, np.zeros((3, 4)), FLOAT64, "x", dtype=np.float64)
    assert not result.ok
    assert fragment in result.message()


def test_float32_results_are_accepted_at_float32_tolerance_and_float64_is_fine_too():
    want = np.linspace(-1, 1, 10)
    assert compare((want + 1e-7).astype(np.float32), want, FLOAT32, "x", dtype=np.float32).ok
    assert compare(want, want, FLOAT32, "x", dtype=np.float32).ok
    assert not compare(want + 1e-3, want, FLOAT32, "x").ok


def test_tolerance_follows_the_least_precise_input():
    assert tolerance_for(np.zeros(2), {"W": np.zeros(2, np.float32)}) is FLOAT32
    assert tolerance_for(np.zeros(2), [np.zeros(3)], 3) is FLOAT64


def test_nan_where_nan_is_expected_matches():
    want = np.array([np.nan, 1.0, np.inf])
    assert compare(want.copy(), want, FLOAT64, "x").ok
    assert not compare(np.array([0.0, 1.0, np.inf]), want, FLOAT64, "x").ok


def test_structures_are_compared_leaf_by_leaf_with_names():
    want = ({"dW": np.ones(2), "db": np.zeros(1)}, 3.0)
    got = ({"dW": np.ones(2)}, 3.0)
    names = [c.name for c in compare_tree(got, want, FLOAT64, "grads", ("g", "loss"), None)
             if not c.ok]
    assert names == ["g"]
    with pytest.raises(CheckFailure, match=r"returns 1 items, expected 2"):
        assert_outputs((np.ones(2),), (np.ones(2), np.ones(2)), "pair")
    with pytest.raises(CheckFailure, match=r"expected a tuple of 2 items, got None"):
        assert_outputs(None, (np.ones(2), np.ones(2)), "pair")


def test_torch_results_must_stay_tensors_on_the_inputs_device():
    torch = pytest.importorskip("torch")
    want = torch.zeros(3, dtype=torch.float64)
    assert "expected a torch tensor" in compare(np.zeros(3), want, FLOAT64, "h").message()
    assert compare(torch.zeros(3, dtype=torch.float64), want, FLOAT64, "h").ok
    meta = torch.zeros(3, dtype=torch.float64, device="meta")
    assert "on meta" in compare(meta, want, FLOAT64, "h").message()


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 40),
                  elements=st.floats(-1e6, 1e6, allow_nan=False)),
       st.data())
def test_the_float64_fast_path_measures_what_extended_precision_measures(want, data):
    """Finite real arrays take a float64 path; it must agree with the extended-precision one
    on every figure a message or a margin shows (the two differ by rounding of |a−e| only)."""
    from rnngrade.harness.checks.compare import _errors, _finite_errors

    noise = data.draw(hnp.arrays(np.float64, want.shape, elements=st.floats(-1e-6, 1e-6)))
    got = (want + noise * data.draw(st.sampled_from([0.0, 1e-6, 1.0, 1e3])))
    tol = data.draw(st.sampled_from([FLOAT64, FLOAT32, EXACT, Tolerance(0.0, 1e-6, "relative")]))
    want = want.astype(data.draw(st.sampled_from([np.float64, np.longdouble])))
    fast = _finite_errors(got, want, tol)
    assert fast is not None
    wide = _errors(got, want, tol)
    for f, w in zip(fast, wide, strict=True):
        np.testing.assert_allclose(f, w, rtol=1e-15, atol=0)  # one rounding of |a−e| apart
    flips = (fast[2] > 1.0) != (wide[2] > 1.0)
    assert np.all(np.abs(wide[2][flips] - 1.0) < 1e-12)  # only a ratio at 1 ± rounding may flip


def test_non_finite_or_integer_values_take_the_extended_path():
    from rnngrade.harness.checks.compare import _finite_errors

    tol = tolerance_for(np.zeros(1))
    assert _finite_errors(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), tol) is None
    assert _finite_errors(np.array([1e308, 0.0]), np.array([-1e308, 0.0]), tol) is None  # overflow
    assert _finite_errors(np.array([1, 2]), np.array([1, 2]), tol) is None
    assert _finite_errors(np.array([1j]), np.array([1j]), tol) is None
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), tol, "x").ok
    overflowing = compare(np.array([1e308]), np.array([-1e308]), tol, "x")
    assert not overflowing.ok and overflowing.max_abs_error == np.inf


@pytest.mark.parametrize("got, want", [
    (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)),
    (np.float32([1.5, -0.0, np.inf]), np.float64([1.5, 0.0, np.inf])),
    (np.array(2.5), np.array(2.5)),
    (np.array([1 + 2j, 3j]), np.array([1 + 2j, 3j])),
    (np.array([True, False]), np.array([True, False])),
])
def test_the_very_same_numbers_compare_as_no_error_at_all(got, want):
    """Equal arrays take a shortcut; what it reports is what measuring every entry reports."""
    result = compare(got, want, FLOAT64, "x")
    assert result.ok and result.problem == "" and result.n_bad == 0
    assert result.ratio == result.max_abs_error == result.max_rel_error == 0.0
    assert result.worst_index == (0,) * want.ndim and result.n_total == want.size


def test_one_ulp_apart_is_measured_not_taken_as_equal():
    want = np.array([1.0, 2.0])
    got = want.copy()
    got[1] = np.nextafter(2.0, 3.0)
    result = compare(got, want, FLOAT64, "x")
    assert result.ok and result.ratio > 0 and result.worst_index == (1,)
    assert result.max_abs_error == got[1] - 2.0


def _near(want: np.ndarray, data: st.DataObject) -> np.ndarray:
    """``want`` moved by about one tolerance (either side of the limit), or unchanged."""
    scale = data.draw(st.sampled_from([0.0, 1e-11, 1e-10, 1e-9, 1e-5, 1e-4, 1e-3]))
    noise = data.draw(hnp.arrays(np.float64, want.shape, elements=st.floats(-2, 2)))
    return (want + scale * noise * (1 + np.abs(want))).astype(want.dtype)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64]), hnp.array_shapes(max_dims=2),
                  elements=st.floats(-1e3, 1e3, width=32)),
       st.data())
def test_the_verdict_alone_is_the_verdict_of_the_full_comparison(want, data):
    """``agrees`` skips the report, never the arithmetic: on values at the tolerance's edge, on
    NaN and inf, on other dtypes, shapes and types it says what ``compare(...).ok`` says."""
    from rnngrade.harness.checks.compare import agrees

    got = _near(want, data).astype(data.draw(st.sampled_from([np.float32, np.float64])))
    if got.size and data.draw(st.booleans()):
        got.flat[0] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    other = data.draw(st.sampled_from(["as is", "list", "ints", "reshaped", "tensor", "None"]))
    if other == "list":
        got = got.tolist()
    elif other == "ints":
        got = got.astype(np.int64) if np.isfinite(got).all() else got
    elif other == "reshaped":
        got = got.reshape(-1, 1)
    elif other == "tensor":
        import torch
        got = torch.from_numpy(got)
    elif other == "None":
        got = None
    tol = data.draw(st.sampled_from([FLOAT64, FLOAT32, EXACT, Tolerance(0.0, 1e-6, "relative")]))
    required = data.draw(st.sampled_from([None, np.float64]))
    assert agrees(got, want, tol, dtype=required) == compare(got, want, tol, "x",
                                                             dtype=required).ok


def test_a_tree_of_verdicts_fails_and_passes_the_leaves_a_full_comparison_does():
    want = {"dx": np.ones((2, 3)), "db": np.zeros(3), "sizes": [2, 3], "name": "lstm"}
    got = {"dx": np.ones((2, 3)) + 1e-12, "db": np.full(3, 1e-3), "sizes": [2, 3],
           "name": "lstm"}
    full = compare_tree(got, want, FLOAT64, "grads", None, None)
    quick = compare_tree(got, want, FLOAT64, "grads", None, None, verdicts=True)
    assert [(c.name, c.ok) for c in quick] == [(c.name, c.ok) for c in full]
    assert [c.ok for c in quick] == [True, False, True, True]
    assert compare_tree({"dx": np.ones((2, 3))}, want, FLOAT64, "grads", None, None,
                        verdicts=True)[0].problem == "structure"  # missing keys, as before


@pytest.mark.parametrize("tol", [FLOAT64, FLOAT32, Tolerance(0.0, 1e-6, "relative")],
                         ids=["float64", "float32", "relative"])
@pytest.mark.parametrize("factor", [0.5, 0.99, 1.01, 1.2, 3.0])
def test_the_verdict_alone_passes_inside_the_tolerance_and_fails_outside(tol, factor):
    from rnngrade.harness.checks.compare import agrees

    want = np.linspace(-3.0, 3.0, 7)
    got = want + factor * tol.allowed(want)
    assert agrees(got, want, tol) == compare(got, want, tol, "x").ok == (factor <= 1)

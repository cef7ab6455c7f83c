"""The comparison messages say what differs, where and by how much."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rnngrade.checks.compare import CheckFailure, assert_close, compare
from rnngrade.checks.structure import assert_outputs, compare_tree
from rnngrade.checks.tolerance import FLOAT32, FLOAT64, tolerance_for

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

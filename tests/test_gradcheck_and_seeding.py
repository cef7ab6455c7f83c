"""Central differences, relative error and per-test seeding."""

import textwrap

import numpy as np
import pytest

from rnngrade.harness.checks.compare import CheckFailure
from rnngrade.harness.checks.gradcheck import (
    OutputLoss,
    central_differences,
    locate,
    numeric_gradient,
    relative_error,
    sample_indices,
)
from rnngrade.harness.checks.seeding import seed_everything, seed_from_name
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy

FORWARD = textwrap.dedent("""
    import numpy as np


    def forward(x, p):
        h = np.tanh(p["W"] @ x + p["b"])
        x *= 1.0  # in place, on its own copy: must not disturb the perturbations
        return h, h ** 2, "cache"


    def wrong_shape(x, p):
        return (np.ones(3),)
""")


def test_central_differences_match_a_known_derivative_and_restore_x_exactly():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    before = x.copy()
    indices = sample_indices(x.shape, 12, rng)
    numeric = numeric_gradient(lambda: float(np.sum(np.sin(x) * x)), x, indices)
    analytic = np.array([np.cos(x[i]) * x[i] + np.sin(x[i]) for i in indices])
    assert relative_error(analytic, numeric).max() < 1e-7  # O(eps²) truncation on O(1) values
    assert np.array_equal(x, before)


def test_central_not_one_sided():
    x = np.array([1.0])
    (g,) = numeric_gradient(lambda: float(x[0] ** 3), x, [(0,)], eps=1e-3)
    assert abs(g - (3 + 1e-6)) < 1e-9  # central: 3x² + ε²; one-sided would be off by 3ε


def test_relative_error_is_zero_not_nan_on_zeros_and_symmetric():
    assert relative_error(np.zeros(3), np.zeros(3)).max() == 0
    a, b = np.array([1.0, -2.0]), np.array([1.1, -2.0])
    assert np.allclose(relative_error(a, b), relative_error(b, a))
    assert np.isclose(relative_error(a, b)[0], 0.1 / 1.1)


def test_sampling_respects_the_mask_and_count():
    rng = np.random.default_rng(1)
    mask = np.zeros((4, 5), dtype=bool)
    mask[1, :] = True
    picked = sample_indices(mask.shape, 10, rng, mask)
    assert len(picked) == 5 and all(i == 1 for i, _ in picked)
    assert sample_indices((2, 2), 3, rng, np.zeros((2, 2), bool)) == []


def test_seeds_are_stable_and_distinct_per_test():
    assert seed_from_name("test_a[1]") == seed_from_name("test_a[1]")
    assert seed_from_name("test_a[1]") != seed_from_name("test_a[2]")
    seed_everything(5)
    first = np.random.random(3)
    seed_everything(5)
    assert np.array_equal(first, np.random.random(3))


def test_central_differences_beside_the_module_match_those_taken_here():
    """The helper's L(θ ± ε) give the same numbers as numeric_gradient on the same loss."""
    rng = np.random.default_rng(3)
    x, p = rng.standard_normal((3, 2)), {"W": rng.standard_normal((4, 3)),
                                         "b": rng.standard_normal((4, 1))}
    up0, up1 = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    m = ModuleProxy(InProcessRunner.from_source(FORWARD, "forward.py"))
    loss = OutputLoss("forward", 2, ((0, up0), (1, up1)))
    picks = {"x": sample_indices(x.shape, 4, rng), "W": sample_indices(p["W"].shape, 4, rng)}
    before = (x.copy(), {k: v.copy() for k, v in p.items()})
    got = central_differences(m, loss, (x, p), [(locate(x, (x, p)), picks["x"]),
                                                (locate(p["W"], (x, p)), picks["W"])])

    def here():
        h = np.tanh(p["W"] @ x + p["b"])
        return float(np.sum(up0 * h) + np.sum(up1 * h**2))

    assert np.array_equal(got[0], numeric_gradient(here, x, picks["x"]))
    assert np.array_equal(got[1], numeric_gradient(here, p["W"], picks["W"]))
    assert np.array_equal(x, before[0]) and np.array_equal(p["W"], before[1]["W"])
    assert locate(p["W"], (x, p)) == (1, "W")


def test_an_output_the_loss_cannot_use_fails_the_check_with_a_sentence():
    m = ModuleProxy(InProcessRunner.from_source(FORWARD, "forward.py"))
    x, p = np.ones((3, 2)), {"W": np.ones((4, 3)), "b": np.ones((4, 1))}
    with pytest.raises(CheckFailure, match=r"wrong_shape\(...\)\[0\] as a float array of shape "
                       r"\(4, 2\); it returned dtype float64, shape \(3,\)"):
        central_differences(m, OutputLoss("wrong_shape", 2, ((0, np.ones((4, 2))),)), (x, p),
                            [((0,), [(0, 0)])])


class _Liar:
    """A proxy whose helper answers with something other than loss values."""

    def __init__(self, answer):
        self.answer = answer

    def helper(self, *args):
        return self.answer


@pytest.mark.parametrize("answer", [None, [[[1.0]]], [[[1.0, "2"]]], [[[1.0, 2.0]], []], {}])
def test_an_answer_that_is_not_loss_values_fails_the_check(answer):
    with pytest.raises(CheckFailure, match="no usable loss values"):
        central_differences(_Liar(answer), OutputLoss("f", 1, ((0, 1.0),)), (np.ones(2),),
                            [((0,), [(0,)])])

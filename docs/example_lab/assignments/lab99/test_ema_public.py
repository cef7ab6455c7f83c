"""Public tests of the example lab. Run them with:  pytest assignments/lab99

The expected values come from fixtures/public/lab99.npz, computed by the course's reference."""

import numpy as np
import pytest

from rnngrade.testing import assert_outputs

STUDENT_MODULE = "ema"


@pytest.mark.points(1)
def test_smoothing_factor(student, vectors):
    case = vectors.case("smoothing_factor_3")
    assert_outputs(student.smoothing_factor(*case.args), case.outputs,
                   "smoothing_factor(3.0)", inputs=case.args)


@pytest.mark.points(2)
def test_ema_small(student, vectors):
    case = vectors.case("ema_small")
    assert_outputs(student.ema(*case.args), case.outputs, "ema(x, 0.25)", inputs=case.args)


@pytest.mark.points(1)
def test_ema_leaves_x_unchanged(student, rng):
    x = rng.standard_normal((3, 5))
    before = x.copy()
    student.ema(x, 0.5)
    assert np.array_equal(x, before), "ema changed its argument x; return a new array instead"

"""Public tests for lab 12. Run them with:  pytest assignments/lab12

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab12.npz, computed by the course's reference solution.

``sample`` is tested as the grader tests it (README, "How sample is graded"): while it runs,
``np.random.choice`` answers with indices fixed in advance and records every probability vector
you pass, so your function and the course's walk the same path whatever seeding you use.
``optimize`` updates its ``parameters`` in place, so the test compares them after the call too.
This file needs NumPy only.
"""

import numpy as np
import pytest

from rnngrade.testing import CheckFailure, assert_outputs

STUDENT_MODULE = "dinos"
# clip may clip in place (the README): its argument writes are not reported
MAY_MODIFY = ("clip",)

CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")
PARAMETER_KEYS = ("Wax", "Waa", "Wya", "b", "by")


# ------------------------------------------------------------------ helpers (not tests)

class FixedDraws:
    """Stands in for ``np.random.choice`` during one call of ``sample``: checks the arguments
    with NumPy's own ``choice``, records ``p`` and returns the next of the given indices."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.checker = np.random.RandomState(12)
        self.probabilities = []

    def __call__(self, a, size=None, replace=True, p=None):
        drawn = self.checker.choice(a, size, replace, p)  # NumPy's errors, e.g. for a 2-D p
        if len(self.probabilities) >= 200:
            raise CheckFailure("sample drew more than 200 characters: does your loop stop at "
                               "the newline and after 50 draws?")
        pool = np.arange(a) if np.ndim(a) == 0 else np.asarray(a)
        self.probabilities.append(np.array(p if p is not None else np.full(len(pool), 1 / len(pool)),
                                           dtype=np.float64).ravel())
        step = len(self.probabilities) - 1
        value = pool[self.draws[step]] if step < len(self.draws) else np.asarray(drawn).ravel()[0]
        if isinstance(drawn, np.ndarray):
            return np.full(drawn.shape, value, dtype=drawn.dtype)
        return int(value) if isinstance(drawn, int) else value


def sample_with_draws(m, parameters, char_to_ix, seed, draws):
    """``(indices, probabilities (k, V))`` of your ``sample`` on the given draws."""
    fake, original, state = FixedDraws(draws), np.random.choice, np.random.get_state()
    np.random.choice = fake
    try:
        indices = m.sample(parameters, char_to_ix, seed)
    finally:
        np.random.choice = original
        np.random.set_state(state)
    if indices is None:
        raise CheckFailure("sample returns None — looks unfinished")
    probabilities = np.array(fake.probabilities).reshape(len(fake.probabilities),
                                                         len(parameters["by"]))
    return np.array([int(i) for i in indices], dtype=np.int64), probabilities


def optimize_step(m, X, Y, a_prev, parameters, learning_rate):
    """``(loss, gradients, a_last, parameters after the step)`` of your ``optimize``. The harness
    calls your function on copies of the arguments; ``call_and_mutated`` returns those copies
    after the call, where your in-place update shows."""
    result, after = m.helper("call_and_mutated", "optimize",
                             (X, Y, a_prev, parameters, learning_rate))
    if result is None:
        raise CheckFailure("optimize returns None — looks unfinished")
    loss, gradients, a_last = result
    return (float(loss), {k: gradients[k] for k in CLASSIC_KEYS}, a_last,
            {k: after[3][k] for k in PARAMETER_KEYS})


# ------------------------------------------------------------------ clip

@pytest.mark.points(2)
def test_clip(student, vectors):
    for case_name in ("clip_classic_keys", "clip_float32"):
        case = vectors.case(case_name)
        assert_outputs(student.clip(*case.args), case.outputs, f"clip ({case_name})",
                       inputs=case.args)


# ------------------------------------------------------------------ sample

@pytest.mark.points(3)
def test_sample_short_name(student, vectors):
    """The draws spell "rex" and a newline: four probability vectors, four indices."""
    case = vectors.case("sample_short_name")
    label = "sample (sample_short_name)"
    assert_outputs(sample_with_draws(student, *case.args), case.outputs, label,
                   names=(f"{label} indices", f"{label} probabilities"), inputs=case.args)


@pytest.mark.points(2)
def test_sample_length_cap(student, vectors):
    """No newline among the draws: 50 characters, then the newline appended."""
    case = vectors.case("sample_length_cap")
    label = "sample (sample_length_cap)"
    assert_outputs(sample_with_draws(student, *case.args), case.outputs, label,
                   names=(f"{label} indices", f"{label} probabilities"), inputs=case.args)


# ------------------------------------------------------------------ optimize

@pytest.mark.points(3)
def test_optimize(student, vectors):
    for case_name in ("optimize_clipped", "optimize_small_step"):
        case = vectors.case(case_name)
        label = f"optimize ({case_name})"
        assert_outputs(optimize_step(student, *case.args), case.outputs, label,
                       names=(f"{label} loss", f"{label} gradients", f"{label} a_last",
                              f"{label} parameters after"), inputs=case.args)

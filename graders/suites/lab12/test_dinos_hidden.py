"""Hidden suite for lab 12: Dinosaur Island, classic layout (assignments/lab12/README.md). NumPy
only.

``sample`` is graded through the worker helper ``sample_with_draws`` (helpers.py): the grader
supplies the draws, so the student's function and the reference walk the same path and every
probability vector can be compared, whatever seeding the student used. ``optimize`` is graded
through the helper ``optimize_step_once``, which returns the parameters after the step (the
README: updated in place); it runs with the student's own ``clip`` where that clip is right on the
test's gradients, and otherwise with the clipped gradients computed here answering its call (and
the report says so), so ``optimize`` never loses points for a mistake in ``clip``.
"""

from __future__ import annotations

import string

import numpy as np
import pytest

from rnngrade.suite import StudentError, add_note, tolerance_for

CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")
CHAR_TO_IX = {ch: i for i, ch in enumerate("\n" + string.ascii_lowercase)}  # the classic 27
NEWLINE = CHAR_TO_IX["\n"]
SAMPLE_NAMES = ("indices", "probabilities")


def make_parameters(rng: np.random.Generator, n_a: int, V: int = 27, scale: float = 1.0) -> dict:
    """Weights large enough that the distributions differ clearly from step to step."""
    return {"Wax": scale * rng.standard_normal((n_a, V)),
            "Waa": scale * rng.standard_normal((n_a, n_a)) / np.sqrt(n_a),
            "Wya": scale * rng.standard_normal((V, n_a)),
            "b": 0.3 * rng.standard_normal((n_a, 1)),
            "by": 0.3 * rng.standard_normal((V, 1))}


def letters(rng: np.random.Generator, count: int, V: int = 27, newline: int = NEWLINE) -> list:
    """``count`` character indices, none of them the newline."""
    choices = [i for i in range(V) if i != newline]
    return [int(choices[i]) for i in rng.integers(0, len(choices), size=count)]


# ------------------------------------------------------------------ clip

def random_gradients(rng: np.random.Generator, n_a: int, V: int, scale: float,
                     dtype: type = np.float64) -> dict:
    shapes = {"dWaa": (n_a, n_a), "dWax": (n_a, V), "dWya": (V, n_a), "db": (n_a, 1),
              "dby": (V, 1)}
    return {k: (scale * rng.standard_normal(s)).astype(dtype) for k, s in shapes.items()}


# The README: clip is graded on the five classic keys; clipping in place is allowed.
@pytest.mark.parametrize("scale, max_value", [
    pytest.param(10.0, 5.0, id="maxValue5"),
    pytest.param(8.0, 0.5, id="small-bound"),
    pytest.param(0.5, 10.0, id="all-inside"),
])
def test_clip_elementwise(check, rng, scale, max_value):
    grads = random_gradients(rng, 5, 3, scale)
    check.expect(f"clip(gradients, {max_value})", lambda m, g, v: m.clip(g, v),
                 (grads, max_value), may_modify=True)


def test_clip_float32(check, rng):
    grads = random_gradients(rng, 4, 6, 10.0, np.float32)
    check.expect("clip (float32 gradients)", lambda m, g, v: m.clip(g, v), (grads, 2.0),
                 may_modify=True)


# ------------------------------------------------------------------ sample

def sample_probe(m, parameters, char_to_ix, seed, draws):
    if not m.has("sample"):  # reported as missing, as any missing function is
        return m.sample(parameters, char_to_ix, seed)
    return m.helper("sample_with_draws", parameters, char_to_ix, seed, draws)


def expect_sample(check, name: str, parameters: dict, char_to_ix: dict, seed: int,
                  draws: list) -> None:
    # The probability vectors are compared with the reference's on the same path, in float64
    # (no promotion: the draws are the grader's, and the vectors are plain softmax outputs).
    check.expect(name, sample_probe, (parameters, char_to_ix, seed, draws), promote=False,
                 names=SAMPLE_NAMES)


@pytest.mark.parametrize("n_a, length", [
    pytest.param(10, 6, id="n_a10-6-letters"),
    pytest.param(50, 12, id="n_a50-12-letters"),
    pytest.param(1, 3, id="n_a1"),
    pytest.param(None, None, id="drawn-sizes"),
])
def test_sample_probabilities(check, rng, n_a, length):
    """Every probability vector passed to np.random.choice, on a path that ends at a newline."""
    if n_a is None:
        n_a, length = (int(v) for v in rng.integers([2, 2], [40, 20]))
    parameters = make_parameters(rng, n_a)
    draws = letters(rng, length) + [NEWLINE]
    expect_sample(check, f"sample (n_a = {n_a}, a name of {length} letters)", parameters,
                  CHAR_TO_IX, int(rng.integers(0, 100)), draws)


@pytest.mark.parametrize("at", [1, 2], ids=["newline-first", "newline-second"])
def test_sample_stops_at_newline(check, rng, at):
    """The first newline drawn ends the name, even as the first character."""
    parameters = make_parameters(rng, 7)
    draws = letters(rng, at - 1) + [NEWLINE] + letters(rng, 5)
    expect_sample(check, f"sample (the newline drawn at step {at})", parameters, CHAR_TO_IX, 0,
                  draws)


def test_sample_length_cap(check, rng):
    """50 draws without a newline: the name stops there and ends with an appended newline."""
    parameters = make_parameters(rng, 9)
    expect_sample(check, "sample (50 letters, no newline drawn)", parameters, CHAR_TO_IX, 3,
                  letters(rng, 60))


@pytest.mark.parametrize("ending", ["newline", "cap"])
def test_sample_other_vocabulary(check, rng, ending):
    """V = 6 with the newline at index 2: sizes come from the parameters, the newline (drawn, or
    appended after 50 draws) from char_to_ix."""
    char_to_ix = {"a": 0, "b": 1, "\n": 2, "c": 3, "d": 4, "e": 5}
    parameters = make_parameters(rng, 4, V=6)
    draws = letters(rng, 5, V=6, newline=2) + [2] if ending == "newline" else \
        letters(rng, 55, V=6, newline=2)
    expect_sample(check, f"sample (V = 6, the newline at index 2, ends by {ending})",
                  parameters, char_to_ix, 1, draws)


# ------------------------------------------------------------------ optimize

MOVED_BY = "parameters moved by"  # which gradients the update used, as the step's outputs show
RETURNED = "−learning_rate × the returned gradients"
RETURNED_CLIPPED = "−learning_rate × the returned gradients clipped to ±5"
OTHER = "something other than −learning_rate × the returned gradients"


def optimize_probe(m, X, Y, a_prev, parameters, learning_rate, known_clip):
    """The helper's outputs of one step, and which gradients moved the parameters: a step that
    returns unclipped gradients but updates with clipped ones, and one that updates with the
    unclipped ones too, return the same gradients; only this output tells them apart."""
    if not m.has("optimize"):  # reported as missing, as any missing function is
        return m.optimize(X, Y, a_prev, parameters, learning_rate)
    step = m.helper("optimize_step_once", X, Y, a_prev, parameters, learning_rate, known_clip)
    if not isinstance(step, dict):
        return step
    return {**step, MOVED_BY: moved_by(parameters, step.get("parameters"),
                                       step.get("gradients"), learning_rate)}


def moved_by(before: dict, after: object, gradients: object, learning_rate: float) -> str:
    """Which of RETURNED, RETURNED_CLIPPED, OTHER the parameters moved by; RETURNED when the
    outputs cannot tell (missing keys, wrong shapes: the other outputs fail then)."""
    if not isinstance(after, dict) or not isinstance(gradients, dict):
        return RETURNED
    steps = []
    for key in before:
        was, now, grad = before[key], after.get(key), gradients.get("d" + key)
        if not all(isinstance(v, np.ndarray) and v.shape == was.shape for v in (now, grad)):
            return RETURNED
        steps.append((was, now, grad))
    tol = tolerance_for(before["Wax"])

    def moved(clip: bool) -> bool:
        return all(np.allclose(now, was - learning_rate * (np.clip(g, -5, 5) if clip else g),
                               rtol=tol.rtol, atol=tol.atol) for was, now, g in steps)

    return RETURNED if moved(False) else RETURNED_CLIPPED if moved(True) else OTHER


def optimize_args(rng: np.random.Generator, n_a: int, length: int, scale: float,
                  learning_rate: float = 0.01) -> tuple:
    """One name of ``length`` letters (X[0] = None) and the state and weights to start from;
    V = 27 as in the classic assignment, whose ``rnn_forward`` assumes it."""
    ix = letters(rng, length)
    X, Y = [None, *ix], [*ix, NEWLINE]
    return X, Y, 0.5 * rng.standard_normal((n_a, 1)), make_parameters(rng, n_a, scale=scale), \
        learning_rate


def reference_gradients(reference, X, Y, a_prev, parameters) -> dict:
    """The unclipped gradients of one step, as the course's rnn_forward/rnn_backward give them."""
    cache = reference.rnn_forward(X, Y, a_prev, parameters)[1]
    return reference.rnn_backward(X, Y, parameters, cache)[0]


def clip_is_right(student, gradients: dict) -> bool:
    """Whether the student's clip at 5 gives the element-wise clipping of ``gradients``."""
    grads = {k: np.array(gradients[k]) for k in CLASSIC_KEYS}
    try:
        got = student.clip(grads, 5)
    except StudentError:
        return False
    finally:
        student.calls.clear()
    if not isinstance(got, dict):
        return False
    tol = tolerance_for(grads["dWaa"])
    for key in CLASSIC_KEYS:
        want = np.clip(np.asarray(gradients[key], dtype=np.float64), -5, 5)
        value = got.get(key)
        if value is None or np.shape(value) != want.shape or not np.allclose(
                np.asarray(value, dtype=np.float64), want, rtol=tol.rtol, atol=tol.atol):
            return False
    return True


def expect_optimize(check, reference, name: str, args: tuple) -> None:
    gradients = reference_gradients(reference, *args[:4])
    own = clip_is_right(check.student, gradients)
    known_clip = None
    if not own:  # the clipped gradients, computed here, answer the student's clip in the step
        known = {k: np.array(gradients[k]) for k in CLASSIC_KEYS}
        tol = tolerance_for(known["dWaa"])
        known_clip = [known, {k: np.clip(g, -5, 5) for k, g in known.items()}, tol.atol,
                      tol.rtol]
        add_note("`optimize` was graded with a correct element-wise `clip` in place of yours, "
                 "wherever your `clip` gave other values: `optimize` loses no points for a "
                 "mistake in `clip`")
    # optimize updates `parameters` in place (the README), so the parameters after the step are
    # one of the checked outputs.
    check.expect(name, optimize_probe, (*args, known_clip), may_modify=True)


@pytest.mark.parametrize("n_a, length, scale", [
    pytest.param(12, 11, 1.5, id="n_a12-clipped"),
    pytest.param(50, 8, 1.0, id="n_a50"),
    pytest.param(1, 5, 2.0, id="n_a1"),
    pytest.param(None, None, 1.5, id="drawn-sizes"),
])
def test_optimize_step(check, reference, rng, n_a, length, scale):
    if n_a is None:
        n_a, length = (int(v) for v in rng.integers([2, 2], [30, 16]))
    expect_optimize(check, reference, f"optimize (n_a = {n_a}, a name of {length} letters)",
                    optimize_args(rng, n_a, length, scale))


def test_optimize_nothing_clipped(check, reference, rng):
    """Small weights: every gradient is inside [−5, 5], so clipping changes nothing."""
    expect_optimize(check, reference, "optimize (no gradient beyond ±5)",
                    optimize_args(rng, 6, 4, 0.2))


def test_optimize_learning_rate(check, reference, rng):
    expect_optimize(check, reference, "optimize (learning_rate = 0.1)",
                    optimize_args(rng, 8, 6, 1.0, learning_rate=0.1))


def test_optimize_empty_name(check, reference, rng):
    """X = [None], Y = [newline]: one time step, the zero input only."""
    _, _, a_prev, parameters, lr = optimize_args(rng, 5, 1, 1.5)
    expect_optimize(check, reference, "optimize (X = [None]: one step)",
                    ([None], [NEWLINE], a_prev, parameters, lr))

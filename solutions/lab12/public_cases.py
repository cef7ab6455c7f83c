"""Inputs of the lab 12 public test vectors (outputs are computed by the reference).

``sample`` draws with ``np.random.choice`` and ``optimize`` changes its ``parameters`` in place, so
their cases are *chains* (docs/AUTHORING.md): ``sample_with_draws`` answers each
``np.random.choice`` with the next of a given list of indices and records the probability vectors
passed in (the README's "How sample is graded"); ``optimize_step`` returns the parameters after
the step beside the function's own results. The public tests define the same chains.
"""

import string

import numpy as np

CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")
PARAMETER_KEYS = ("Wax", "Waa", "Wya", "b", "by")
CHAR_TO_IX = {ch: i for i, ch in enumerate("\n" + string.ascii_lowercase)}  # the classic 27


class _Draws:
    """``np.random.choice`` during one call: NumPy's own argument checks, then the next given
    index; records every ``p``."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.checker = np.random.RandomState(12)
        self.probabilities = []

    def __call__(self, a, size=None, replace=True, p=None):
        drawn = self.checker.choice(a, size, replace, p)
        if len(self.probabilities) >= 200:
            raise RuntimeError("sample drew more than 200 characters in one call")
        pool = np.arange(a) if np.ndim(a) == 0 else np.asarray(a)
        self.probabilities.append(np.array(p if p is not None else np.full(len(pool), 1 / len(pool)),
                                           dtype=np.float64).ravel())
        step = len(self.probabilities) - 1
        value = pool[self.draws[step]] if step < len(self.draws) else np.asarray(drawn).ravel()[0]
        if isinstance(drawn, np.ndarray):
            return np.full(drawn.shape, value, dtype=drawn.dtype)
        return int(value) if isinstance(drawn, int) else value


def sample_with_draws(m, parameters, char_to_ix, seed, draws):
    """``(indices, probabilities (k, V))`` of ``m.sample`` with the draws given (same in the
    public test)."""
    fake, original, state = _Draws(draws), np.random.choice, np.random.get_state()
    np.random.choice = fake
    try:
        indices = m.sample(parameters, char_to_ix, seed)
    finally:
        np.random.choice = original
        np.random.set_state(state)
    probabilities = np.array(fake.probabilities).reshape(len(fake.probabilities),
                                                         len(parameters["by"]))
    return np.array([int(i) for i in indices], dtype=np.int64), probabilities


def optimize_step(m, X, Y, a_prev, parameters, learning_rate):
    """``(loss, gradients, a_last, parameters after the step)`` of ``m.optimize``, the gradients
    and parameters on their classic keys (the public test computes the same through the
    harness's ``call_and_mutated``, since the harness calls on copies)."""
    loss, gradients, a_last = m.optimize(X, Y, a_prev, parameters, learning_rate)
    return (float(loss), {k: gradients[k] for k in CLASSIC_KEYS}, a_last,
            {k: parameters[k] for k in PARAMETER_KEYS})


def _grads(seed: int, scale: float, dtype=np.float64) -> dict:
    """Gradients with the classic keys, shaped for n_a = 5, V = 3."""
    rng = np.random.default_rng(seed)
    shapes = {"dWaa": (5, 5), "dWax": (5, 3), "dWya": (3, 5), "db": (5, 1), "dby": (3, 1)}
    return {k: (scale * rng.standard_normal(s)).astype(dtype) for k, s in shapes.items()}


def _parameters(seed: int, n_a: int, V: int = 27, scale: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    return {"Wax": scale * rng.standard_normal((n_a, V)),
            "Waa": scale * rng.standard_normal((n_a, n_a)) / np.sqrt(n_a),
            "Wya": scale * rng.standard_normal((V, n_a)),
            "b": 0.3 * rng.standard_normal((n_a, 1)),
            "by": 0.3 * rng.standard_normal((V, 1))}


def _name(text: str) -> tuple[list, list]:
    """X = [None, c1, c2, ...] and Y = [c1, c2, ..., newline] of one name."""
    ix = [CHAR_TO_IX[c] for c in text]
    return [None, *ix], [*ix, CHAR_TO_IX["\n"]]


def _optimize(seed: int, text: str, n_a: int, learning_rate: float, scale: float) -> tuple:
    X, Y = _name(text)
    rng = np.random.default_rng(seed + 100)
    return (X, Y, 0.5 * rng.standard_normal((n_a, 1)), _parameters(seed, n_a, scale=scale),
            learning_rate)


def _letters(text: str) -> list[int]:
    return [CHAR_TO_IX[c] for c in text]


CASES: dict[str, tuple] = {
    # clip: entries above, below and inside the interval; float32 kept
    "clip_classic_keys": ("clip", (_grads(0, 8.0), 5.0)),
    "clip_float32": ("clip", (_grads(1, 10.0, np.float32), 2.0)),
    # sample: the draws spell "rex" and a newline; the second case never draws the newline, so
    # the 50-character cap ends the name
    "sample_short_name": (sample_with_draws,
                          (_parameters(2, 10), CHAR_TO_IX, 0, _letters("rex\n"))),
    "sample_length_cap": (sample_with_draws,
                          (_parameters(3, 8), CHAR_TO_IX, 7, _letters("ab" * 25))),
    # optimize: large weights, so some gradients exceed 5 and clipping matters
    "optimize_clipped": (optimize_step, _optimize(4, "stegosaurus", 12, 0.01, 1.5)),
    "optimize_small_step": (optimize_step, _optimize(5, "rex", 6, 0.05, 0.2)),
}

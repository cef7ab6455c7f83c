"""Lab 12 helpers, run beside the student's code (and beside the reference's): sampling with the
draws supplied by the grader, and one optimisation step whose ``clip`` may be answered with the
clipped gradients the grader computed (never a ``clip`` of its own: nothing here answers a graded
function).

``sample`` draws with ``np.random.choice`` from NumPy's global generator, which the classic
notebook seeds in its own way (``np.random.seed(counter + seed)``). The grader does not judge that
convention (assignments/lab12/README.md, "How sample is graded"): during the call it answers every
``np.random.choice`` with the next index of a sequence it chose, after checking the arguments as
NumPy would, and records the probability vector passed in. The student's module and the
reference then walk the same path, so their probability vectors can be compared step by step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rnngrade.suite.worker import helper

CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")
PARAMETER_KEYS = ("Wax", "Waa", "Wya", "b", "by")
# A sample that keeps drawing past this many characters has no working stopping rule (the
# README's cap is 50); the call is stopped rather than left to the time limit.
MAX_DRAWS = 200


class _Draws:
    """Stands in for ``np.random.choice`` during one call: validates the arguments with a real
    ``RandomState.choice``, records ``p``, and returns the next supplied index (once the supplied
    indices run out, a draw from ``p`` with a fixed generator)."""

    def __init__(self, supplied: list[int]) -> None:
        self.supplied = [int(i) for i in supplied]
        self.checker = np.random.RandomState(12)  # validation and the draws after `supplied`
        self.probabilities: list[np.ndarray] = []

    def __call__(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        drawn = self.checker.choice(a, size, replace, p)  # raises what NumPy raises
        if len(self.probabilities) >= MAX_DRAWS:
            raise RuntimeError(f"sample drew more than {MAX_DRAWS} characters in one call: "
                               "does your loop stop at the newline and after 50 draws?")
        pool = None if np.ndim(a) == 0 else np.asarray(a)
        count = int(a) if pool is None else len(pool)
        if p is not None:
            self.probabilities.append(np.array(p, dtype=np.float64).ravel())
        else:  # uniform draws; a row that cannot be the model's is reported as NaN anyway
            self.probabilities.append(np.full(count, 1.0 / count) if count <= 10_000
                                      else np.empty(0))
        step = len(self.probabilities) - 1
        if step < len(self.supplied) and self.supplied[step] < count:
            k = self.supplied[step]
            value = k if pool is None else pool[k]
        else:
            value = np.asarray(drawn).ravel()[0]
        if isinstance(drawn, np.ndarray):
            return np.full(drawn.shape, value, dtype=drawn.dtype)
        return int(value) if isinstance(drawn, int) else value


def _as_indices(value: Any) -> Any:
    """The returned indices as a list of ints when they are integer-like (a NumPy integer, a
    one-element array); anything else is returned as it is, for the check to report."""
    if not isinstance(value, list | tuple | np.ndarray):
        return value
    out = []
    for item in value:
        array = np.asarray(item)
        if array.size != 1 or array.dtype.kind not in "iub":
            return value
        out.append(int(array.reshape(())))
    return out


@helper
def sample_with_draws(module: Any, parameters: dict, char_to_ix: dict, seed: int,
                      draws: list) -> dict:
    """``module.sample(parameters, char_to_ix, seed)`` with ``np.random.choice`` answering
    ``draws`` in order. Returns ``{"indices": what sample returned, "probabilities": (k, V) the
    k probability vectors it passed in}``. NumPy's global random state is restored afterwards."""
    fake = _Draws(draws)
    original = np.random.choice
    state = np.random.get_state()
    # A module that bound the function itself (`from numpy.random import choice`) is served too.
    bound = [name for name, value in vars(module).items() if value is original]
    np.random.choice = fake
    for name in bound:
        setattr(module, name, fake)
    try:
        indices = module.sample(parameters, char_to_ix, seed)
    finally:
        np.random.choice = original
        for name in bound:
            setattr(module, name, original)
        np.random.set_state(state)
    width = len(parameters["by"])
    rows = [p if p.shape == (width,) else np.full(width, np.nan) for p in fake.probabilities]
    return {"indices": _as_indices(indices),
            "probabilities": np.array(rows).reshape(len(rows), width)}


class _KnownClip:
    """Stands in for the module's ``clip`` during one ``optimize`` call: a call of the module's
    own code on the gradients the grader computed (each classic key within ``atol + rtol·|g|``)
    and ``maxValue`` 5 gets the grader's clipped gradients; any other call goes to the module's
    own ``clip``."""

    def __init__(self, module: Any, own: Any, known: dict, clipped: dict, atol: float,
                 rtol: float) -> None:
        self.module, self.own, self.known, self.clipped = module, own, known, clipped
        self.atol, self.rtol = atol, rtol
        self.__name__ = "clip"

    def _agrees(self, gradients: Any, max_value: Any) -> bool:
        if not isinstance(gradients, dict) or max_value != 5:
            return False
        for key, want in self.known.items():
            got = gradients.get(key)
            if not isinstance(got, np.ndarray) or got.shape != want.shape or not np.allclose(
                    got, want, atol=self.atol, rtol=self.rtol):
                return False
        return True

    def __call__(self, gradients: Any, maxValue: Any = None, *args: Any, **kwargs: Any) -> Any:
        import sys

        if sys._getframe(1).f_globals is self.module.__dict__ and not args and not kwargs \
                and self._agrees(gradients, maxValue):
            return {**gradients, **{k: np.array(v) for k, v in self.clipped.items()}}
        if not callable(self.own):
            raise NameError("name 'clip' is not defined")
        return self.own(gradients, maxValue, *args, **kwargs)


@helper
def optimize_step_once(module: Any, X: list, Y: list, a_prev: np.ndarray, parameters: dict,
                       learning_rate: float, known_clip: Any) -> dict:
    """``module.optimize(X, Y, a_prev, parameters, learning_rate)``; with ``known_clip``
    ``[gradients, clipped, atol, rtol]`` (the unclipped gradients of this step and their clipping
    at 5, computed by the grader), the module's ``clip`` is a ``_KnownClip`` during the call
    (None: its own). Returns ``{"loss", "gradients" (the
    classic keys), "a_last", "parameters" (after the call: optimize updates them in place)}``."""
    saved = vars(module).get("clip", None)
    if known_clip is not None:
        known, clipped, atol, rtol = known_clip
        module.clip = _KnownClip(module, saved, known, clipped, float(atol), float(rtol))
    try:
        result = module.optimize(X, Y, a_prev, parameters, learning_rate)
    finally:
        if known_clip is not None:
            if saved is None:
                del module.clip
            else:
                module.clip = saved
    if result is None:
        raise TypeError("optimize returned None — it should return (loss, gradients, a_last)")
    if not isinstance(result, tuple | list) or len(result) != 3:
        raise TypeError("optimize should return the tuple (loss, gradients, a_last); it returned "
                        + (f"{len(result)} values" if isinstance(result, tuple | list)
                           else f"a {type(result).__name__}"))
    loss, gradients, a_last = result
    if isinstance(gradients, dict):
        gradients = {k: gradients.get(k) for k in CLASSIC_KEYS}
    return {"loss": loss, "gradients": gradients, "a_last": a_last,
            "parameters": {k: parameters.get(k) for k in PARAMETER_KEYS}}

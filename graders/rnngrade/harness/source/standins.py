"""Stand-ins for the helper modules that the classic course platform provided.

Classic notebooks do ``from rnn_utils import *``, ``from public_tests import *`` and
``from test_utils import ...`` and call those tests at top level. In the grader these imports get
these small modules: ``rnn_utils`` gives ``softmax`` (over axis 0) and ``sigmoid``; the test helpers
accept any call and do nothing. Scripts exported from notebooks call ``get_ipython()`` for their
magics; that gets a shell whose methods do nothing. The Dinosaur Island notebooks (lab12) do
``from utils import *``: that gets the classic ``utils`` helpers (the lab12 part below).
"""

from __future__ import annotations

import types

import numpy as np


def _softmax(x):
    e_x = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e_x / e_x.sum(axis=0, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# ------------------------------------------------------------------ lab12: Dinosaur Island `utils`
#
# The classic Dinosaur Island notebook imports its helpers with ``from utils import *``: the ones
# below, with the classic names, arguments and conventions (column vectors; ``X[0] = None`` is the
# zero input; the loss summed over time steps; ``update_parameters`` works in place). They are
# written for this grader and agree with solutions/lab12/dinos.py. ``rnn_forward`` infers the
# vocabulary size from ``Wax`` when it is not given (the classic default, 27, is that size).

def _utils_softmax(x):
    e_x = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e_x / e_x.sum(axis=0, keepdims=True)


def _utils_smooth(loss, cur_loss):
    return loss * 0.999 + cur_loss * 0.001


def _utils_get_sample(sample_ix, ix_to_char):
    text = "".join(ix_to_char[int(i)] for i in sample_ix)
    return text[:1].upper() + text[1:]


def _utils_print_sample(sample_ix, ix_to_char):
    print(_utils_get_sample(sample_ix, ix_to_char), end="")


def _utils_get_initial_loss(vocab_size, seq_length):
    return float(np.log(vocab_size) * seq_length)


def _utils_initialize_parameters(n_a, n_x, n_y):
    draw = np.random.RandomState(1).randn  # the classic seed, without touching np.random's state
    return {"Wax": draw(n_a, n_x) * 0.01, "Waa": draw(n_a, n_a) * 0.01,
            "Wya": draw(n_y, n_a) * 0.01, "b": np.zeros((n_a, 1)), "by": np.zeros((n_y, 1))}


def _utils_rnn_step_forward(parameters, a_prev, x):
    a_next = np.tanh(parameters["Wax"] @ x + parameters["Waa"] @ a_prev + parameters["b"])
    return a_next, _utils_softmax(parameters["Wya"] @ a_next + parameters["by"])


def _utils_rnn_step_backward(dy, gradients, parameters, x, a, a_prev):
    gradients["dWya"] += dy @ a.T
    gradients["dby"] += dy
    dz = (1 - a * a) * (parameters["Wya"].T @ dy + gradients["da_next"])
    gradients["db"] += dz
    gradients["dWax"] += dz @ x.T
    gradients["dWaa"] += dz @ a_prev.T
    gradients["da_next"] = parameters["Waa"].T @ dz
    return gradients


def _utils_update_parameters(parameters, gradients, lr):
    for name in ("Wax", "Waa", "Wya", "b", "by"):
        parameters[name] += -lr * gradients["d" + name]
    return parameters


def _utils_rnn_forward(X, Y, a0, parameters, vocab_size=None):
    size = parameters["Wax"].shape[1] if vocab_size is None else vocab_size
    x, a, y_hat = {}, {-1: np.copy(a0)}, {}
    loss = 0.0
    for t in range(len(X)):
        x[t] = np.zeros((size, 1), dtype=np.asarray(a0).dtype)
        if X[t] is not None:
            x[t][X[t]] = 1
        a[t], y_hat[t] = _utils_rnn_step_forward(parameters, a[t - 1], x[t])
        loss -= np.log(y_hat[t][Y[t], 0])
    return loss, (y_hat, a, x)


def _utils_rnn_backward(X, Y, parameters, cache):
    y_hat, a, x = cache
    gradients = {"d" + k: np.zeros_like(parameters[k]) for k in ("Wax", "Waa", "Wya", "b", "by")}
    gradients["da_next"] = np.zeros_like(a[0])
    for t in reversed(range(len(X))):
        dy = np.copy(y_hat[t])
        dy[Y[t]] -= 1
        gradients = _utils_rnn_step_backward(dy, gradients, parameters, x[t], a[t], a[t - 1])
    return gradients, a


_DINOSAUR_UTILS = {
    "softmax": _utils_softmax, "smooth": _utils_smooth, "print_sample": _utils_print_sample,
    "get_sample": _utils_get_sample, "get_initial_loss": _utils_get_initial_loss,
    "initialize_parameters": _utils_initialize_parameters,
    "rnn_step_forward": _utils_rnn_step_forward, "rnn_step_backward": _utils_rnn_step_backward,
    "update_parameters": _utils_update_parameters, "rnn_forward": _utils_rnn_forward,
    "rnn_backward": _utils_rnn_backward,
}


def _dinosaur_utils() -> types.ModuleType:
    """A fresh ``utils`` module holding the functions above (and ``np``, as the original's
    ``import numpy as np`` made ``from utils import *`` give it)."""
    utils = types.ModuleType("utils")
    vars(utils).update(_DINOSAUR_UTILS, np=np, __all__=[*_DINOSAUR_UTILS, "np"])
    return utils

# ------------------------------------------------------------------ platform tests and IPython


class _DoNothing:
    """Any attribute is a function that accepts anything and returns None."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args, **kwargs) -> None:
        return None


class _IPythonShell:
    """What ``get_ipython()`` returns in a script exported from a notebook: every method
    (``run_line_magic``, ``system``, ...) does nothing."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _DoNothing(name)


def get_ipython() -> _IPythonShell:
    """Stand-in for IPython's ``get_ipython`` (nbconvert writes magics as calls to it)."""
    return _IPythonShell()


class _PlatformTestModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _DoNothing(name)


def make_standins(test_names: frozenset[str] = frozenset()) -> dict[str, types.ModuleType]:
    """Fresh stand-in modules keyed by import name. ``test_names``: the names a submission uses
    but never defines that look like platform tests; ``from public_tests import *`` gives them."""
    rnn_utils = types.ModuleType("rnn_utils")
    vars(rnn_utils).update(softmax=_softmax, sigmoid=_sigmoid, np=np,
                           __all__=["softmax", "sigmoid", "np"])
    modules: dict[str, types.ModuleType] = {"rnn_utils": rnn_utils, "utils": _dinosaur_utils()}
    for name in ("public_tests", "test_utils", "outputs"):
        module = _PlatformTestModule(name)
        vars(module)["__all__"] = sorted(test_names)
        modules[name] = module
    return modules


# The functions a stand-in supplies, with the module each comes from.
_ORIGINS = ((_softmax, "rnn_utils"), (_sigmoid, "rnn_utils"),
            *((function, "utils") for function in _DINOSAUR_UTILS.values()))


def standin_origin(value: object) -> str | None:
    """The stand-in module that supplied ``value`` (by identity), or None."""
    return next((origin for function, origin in _ORIGINS if function is value), None)


def looks_like_platform_test(name: str) -> bool:
    return name.endswith(("_test", "_tests")) or name.startswith("test_") or name in (
        "comparator", "summary", "multiple_test", "single_test")


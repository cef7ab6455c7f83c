"""Stand-ins for the helper modules that the classic course platform provided.

Classic notebooks do ``from rnn_utils import *``, ``from public_tests import *`` and
``from test_utils import ...`` and call those tests at top level. In the grader these imports get
these small modules: ``rnn_utils`` gives ``softmax`` (over axis 0) and ``sigmoid``; the test helpers
accept any call and do nothing. Scripts exported from notebooks call ``get_ipython()`` for their
magics; that gets a shell whose methods do nothing. A lab may add modules of its own (lab 12's
classic ``utils``: ``rnngrade.lab_helpers``), given to ``make_standins`` as source.
"""

from __future__ import annotations

import types

import numpy as np


def _softmax(x):
    e_x = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e_x / e_x.sum(axis=0, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


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


def make_standins(test_names: frozenset[str] = frozenset(),
                  lab_modules: dict[str, str] | None = None) -> dict[str, types.ModuleType]:
    """Fresh stand-in modules keyed by import name. ``test_names``: the names a submission uses
    but never defines that look like platform tests; ``from public_tests import *`` gives them.
    ``lab_modules``: a lab's own platform modules, import name → source (run here, each into a
    fresh module whose functions ``standin_origin`` then knows)."""
    rnn_utils = types.ModuleType("rnn_utils")
    vars(rnn_utils).update(softmax=_softmax, sigmoid=_sigmoid, np=np,
                           __all__=["softmax", "sigmoid", "np"])
    modules: dict[str, types.ModuleType] = {"rnn_utils": rnn_utils}
    for name, source in (lab_modules or {}).items():
        modules[name] = _lab_module(name, source)
    for name in ("public_tests", "test_utils", "outputs"):
        module = _PlatformTestModule(name)
        vars(module)["__all__"] = sorted(test_names)
        modules[name] = module
    return modules


_ORIGIN = "_rnngrade_platform_module"  # on a lab module's functions: the module's name


def _lab_module(name: str, source: str) -> types.ModuleType:
    """A lab's platform module from its source; ``__all__``: its public names and ``np``."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), vars(module))  # the course's own module
    public = [k for k, v in vars(module).items() if not k.startswith("_")
              and isinstance(v, types.FunctionType)]
    for key in public:
        setattr(vars(module)[key], _ORIGIN, name)
    vars(module)["__all__"] = [*public, *(["np"] if "np" in vars(module) else [])]
    return module


# The functions a stand-in supplies, with the module each comes from.
_ORIGINS = ((_softmax, "rnn_utils"), (_sigmoid, "rnn_utils"))


def standin_origin(value: object) -> str | None:
    """The stand-in module that supplied ``value`` (by identity, or a lab module's mark), or
    None."""
    found = next((origin for function, origin in _ORIGINS if function is value), None)
    if found is None and isinstance(value, types.FunctionType):
        mark = vars(value).get(_ORIGIN)
        return mark if isinstance(mark, str) else None
    return found


def looks_like_platform_test(name: str) -> bool:
    return name.endswith(("_test", "_tests")) or name.startswith("test_") or name in (
        "comparator", "summary", "multiple_test", "single_test")


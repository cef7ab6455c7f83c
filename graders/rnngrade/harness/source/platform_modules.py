"""The helper modules that the classic course platform provided.

Classic notebooks do ``from rnn_utils import *``, ``from public_tests import *`` and
``from test_utils import ...`` and call those tests at top level. In the grader the test helpers
get small modules that accept any call and do nothing. Scripts exported from notebooks call
``get_ipython()`` for their magics; that gets a shell whose methods do nothing. The helper
modules with functions (``rnn_utils``, lab 12's classic ``utils``) are the lab's platform modules
(``rnngrade.lab_helpers``), given to ``make_platform_modules`` as source: nothing here computes
anything a lab could grade.
"""

from __future__ import annotations

import types
from collections.abc import Callable

# ------------------------------------------------------------------ platform tests and IPython


class _DoNothing:
    """Any attribute is a function that accepts anything and returns None."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: object, **kwargs: object) -> None:
        return None


class _IPythonShell:
    """What ``get_ipython()`` returns in a script exported from a notebook: every method
    (``run_line_magic``, ``system``, ...) does nothing."""

    def __getattr__(self, name: str) -> _DoNothing:
        if name.startswith("__"):
            raise AttributeError(name)
        return _DoNothing(name)


def get_ipython() -> _IPythonShell:
    """Stand-in for IPython's ``get_ipython`` (nbconvert writes magics as calls to it)."""
    return _IPythonShell()


class _PlatformTestModule(types.ModuleType):
    def __getattr__(self, name: str) -> _DoNothing:
        if name.startswith("__"):
            raise AttributeError(name)
        return _DoNothing(name)


def make_platform_modules(test_names: frozenset[str] = frozenset(),
                  lab_modules: dict[str, str] | None = None) -> dict[str, types.ModuleType]:
    """Fresh platform modules keyed by import name. ``test_names``: the names a submission uses
    but never defines that look like platform tests; ``from public_tests import *`` gives them.
    ``lab_modules``: a lab's own platform modules, import name → source (run here, each into a
    fresh module whose functions ``platform_origin`` then knows)."""
    modules: dict[str, types.ModuleType] = {}
    for name, source in (lab_modules or {}).items():
        modules[name] = _lab_module(name, source)
    for name in ("public_tests", "test_utils", "outputs"):
        module = _PlatformTestModule(name)
        vars(module)["__all__"] = sorted(test_names)
        modules[name] = module
    return modules


_ORIGIN = "_rnngrade_platform_module"  # on a lab module's functions: the module's name


def _lab_module(name: str, source: str) -> types.ModuleType:
    """A lab's platform module from its source; ``__all__``: its public names and ``np``. Each
    name its ``__withheld__`` lists (a function the lab grades) is bound to ``_withheld``'s."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), vars(module))  # the course's own module
    for withheld in vars(module).pop("__withheld__", ()):
        vars(module)[withheld] = _withheld(name, withheld)
    public = [k for k, v in vars(module).items() if not k.startswith("_")
              and isinstance(v, types.FunctionType)]
    for key in public:
        setattr(vars(module)[key], _ORIGIN, name)
    vars(module)["__all__"] = [*public, *(["np"] if "np" in vars(module) else [])]
    return module


def _withheld(module: str, name: str) -> Callable[..., None]:
    """What a platform module gives for a function the lab grades: a call raises NameError
    saying the module gives none here."""

    def withheld(*args: object, **kwargs: object) -> None:
        raise NameError(f"name {name!r} is not defined: `{module}` gives no `{name}` in a lab "
                        f"that grades it (write your own)")

    withheld.__name__ = withheld.__qualname__ = name
    return withheld


def platform_origin(value: object) -> str | None:
    """The platform module that supplied ``value`` (by its mark), or None."""
    if isinstance(value, types.FunctionType):
        mark = vars(value).get(_ORIGIN)
        return mark if isinstance(mark, str) else None
    return None


def looks_like_platform_test(name: str) -> bool:
    return name.endswith(("_test", "_tests")) or name.startswith("test_") or name in (
        "comparator", "summary", "multiple_test", "single_test")


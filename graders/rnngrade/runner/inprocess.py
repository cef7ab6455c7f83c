"""Running student code in this process: for students debugging their own code (``pdb`` works)
and for ``rnngrade grade --inprocess``. It offers no protection at all."""

from __future__ import annotations

import contextlib
import copy
import io
import time
import types

from rnngrade.runner.base import (
    EXCEPTION,
    LOAD_ERROR,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    ArgRef,
    CallResult,
    FunctionRef,
    StudentError,
)
from rnngrade.submission.module_builder import build_module


class InProcessRunner:
    """Calls a module's functions directly, on deep copies of the arguments."""

    def __init__(self, module: types.ModuleType, notes: list[str] | None = None,
                 fatal: str | None = None, capture: bool = False) -> None:
        self.module = module
        self._notes = list(notes or [])
        self._fatal = fatal
        self._capture = capture

    @classmethod
    def from_source(cls, source: str, filename: str, capture: bool = True) -> InProcessRunner:
        built = build_module(source, filename)
        return cls(built.module, built.notes, built.fatal, capture=capture)

    def has_function(self, function: str) -> bool:
        return callable(getattr(self.module, function, None))

    def load_notes(self) -> list[str]:
        return list(self._notes)

    def protections(self) -> dict[str, bool]:
        return {"separate process": False}

    def close(self) -> None:
        pass

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None) -> CallResult:
        if self._fatal:
            raise StudentError(LOAD_ERROR, self._fatal, function=function)
        target = getattr(self.module, function, None)
        if not callable(target):
            raise StudentError(MISSING_FUNCTION, f"the submission does not define `{function}`",
                               function=function)
        return self._invoke(function, target, args, kwargs or {})

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        from rnngrade.worker_helpers import HELPERS

        if self._fatal:
            raise StudentError(LOAD_ERROR, self._fatal, function=helper)
        return self._invoke(helper, lambda *a, **k: HELPERS[helper](self.module, *a, **k),
                            args, kwargs or {})

    def _invoke(self, name: str, target, args: tuple, kwargs: dict) -> CallResult:
        call_args = copy.deepcopy(tuple(args))
        call_kwargs = copy.deepcopy(dict(kwargs))
        call_args = tuple(resolve_function_refs(a, call_args) for a in call_args)
        call_kwargs = {k: resolve_function_refs(v, call_args) for k, v in call_kwargs.items()}
        out, err = io.StringIO(), io.StringIO()
        redirect = (contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)) \
            if self._capture else (contextlib.nullcontext(), contextlib.nullcontext())
        start = time.perf_counter()
        try:
            with redirect[0], redirect[1]:
                value = target(*call_args, **call_kwargs)
        except NotImplementedError as exc:
            raise StudentError(NOT_IMPLEMENTED, str(exc) or f"{name}: not implemented yet",
                               function=name) from None
        except StudentError:
            raise
        except Exception as exc:  # noqa: BLE001 - any student exception fails the check
            raise StudentError(EXCEPTION, describe_exception(exc, self.module), function=name,
                               stdout=out.getvalue()) from exc
        return CallResult(value, call_args, call_kwargs, out.getvalue(), err.getvalue(),
                          time.perf_counter() - start)


def resolve_function_refs(value, call_args: tuple):
    """Replace FunctionRef arguments by the grader helper callables they name."""
    if isinstance(value, FunctionRef):
        from rnngrade.worker_helpers import FUNCTIONS

        bound = tuple(call_args[a.index] if isinstance(a, ArgRef) else a for a in value.args)
        return FUNCTIONS[value.name](*bound)
    return value


def describe_exception(exc: BaseException, module: types.ModuleType) -> str:
    """``Type: message`` and the student's own lines of the traceback (never grader lines)."""
    filename = getattr(module, "__file__", None)
    lines = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            lines.append(f"  line {tb.tb_lineno}, in {code.co_name}")
        tb = tb.tb_next
    text = f"{type(exc).__name__}: {exc}"
    hint = removed_alias_hint(exc) or unfinished_hint(exc)
    if hint:
        text += f" — {hint}"
    if lines:
        text += "\n" + "\n".join(lines[-5:])
    return text


REMOVED_NUMPY_ALIASES = {"float": "float", "int": "int", "bool": "bool", "complex": "complex",
                         "object": "object", "str": "str", "long": "int", "unicode": "str"}


def removed_alias_hint(exc: BaseException) -> str:
    """Name the replacement when a submission used a NumPy alias removed in NumPy 1.24."""
    if isinstance(exc, AttributeError) and "numpy" in str(exc):
        for alias, replacement in REMOVED_NUMPY_ALIASES.items():
            if f"attribute '{alias}'" in str(exc):
                return (f"`np.{alias}` was removed from NumPy in 1.24; "
                        f"use the builtin `{replacement}`")
    return ""


def unfinished_hint(exc: BaseException) -> str:
    """A crash on a value that is still None reads as unfinished work, not as a bug."""
    if isinstance(exc, TypeError | AttributeError) and "NoneType" in str(exc):
        return "a value is still None: looks unfinished (is a template placeholder left as None?)"
    return ""

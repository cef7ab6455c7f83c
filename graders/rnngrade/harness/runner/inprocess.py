"""Running student code in this process: for students debugging their own code (``pdb`` works)
and for ``rnngrade grade --inprocess``. It offers no protection at all."""

from __future__ import annotations

import contextlib
import dis
import io
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rnngrade.harness.copying import copy_tree
from rnngrade.harness.runner.base import (
    EXCEPTION,
    LOAD_ERROR,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    ArgRef,
    CallResult,
    FunctionRef,
    StudentError,
)
from rnngrade.harness.source.module_builder import Salvaged, build_module
from rnngrade.harness.source.platform_modules import platform_origin
from rnngrade.harness.worker_helpers import GENERIC, Registry


class InProcessRunner:
    """Calls a module's functions directly, on deep copies of the arguments (``copy_tree``)."""

    def __init__(self, module: types.ModuleType, notes: list[str] | None = None,
                 fatal: str | None = None, capture: bool = False,
                 helpers: Registry | None = None) -> None:
        self.module = module
        self._notes = list(notes or [])
        self._fatal = fatal
        self._capture = capture
        self.helpers = helpers or GENERIC  # the lab's grader helpers (see worker_helpers)

    @classmethod
    def from_source(cls, source: str, filename: str, capture: bool = True,
                    helpers: Registry | None = None,
                    salvaged: Salvaged | None = None) -> InProcessRunner:
        """Build the module; with ``capture``, what its top-level code prints is discarded
        (salvaged: ``salvage(source)``, when the caller has it)."""
        modules = helpers.modules if helpers is not None else None
        if not capture:
            built = build_module(source, filename, salvaged=salvaged, lab_modules=modules)
        else:
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                built = build_module(source, filename, salvaged=salvaged, lab_modules=modules)
        return cls(built.module, built.notes, built.fatal, capture=capture, helpers=helpers)

    def has_function(self, function: str) -> bool:
        return callable(getattr(self.module, function, None))

    def load_notes(self) -> list[str]:
        return list(self._notes)

    def protections(self) -> dict[str, bool]:
        return {"separate process": False}

    def close(self) -> None:
        pass

    def use_limits(self, limits: object) -> None:
        """Nothing to apply: this runner enforces no limit (see the module docstring)."""

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, head: int | None = None) -> CallResult:
        if self._fatal:
            raise StudentError(LOAD_ERROR, self._fatal, function=function)
        target = getattr(self.module, function, None)
        if not callable(target):
            raise StudentError(MISSING_FUNCTION, missing_message(self.module, function),
                               function=function)
        return self._invoke(function, target, args, kwargs or {})

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        if self._fatal:
            raise StudentError(LOAD_ERROR, self._fatal, function=helper)
        run = self.helpers.helpers.get(helper)
        if run is None:  # a suite asking for a helper its lab does not define
            raise LookupError(f"no grader helper {helper!r} for this lab")
        return self._invoke(helper, lambda *a, **k: run(self.module, *a, **k),
                            args, kwargs or {})

    def _invoke(self, name: str, target: Callable[..., Any], args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> CallResult:
        call_args, call_kwargs = copy_tree((tuple(args), dict(kwargs)))
        functions = self.helpers.functions
        call_args = tuple(resolve_function_refs(a, call_args, functions) for a in call_args)
        call_kwargs = {k: resolve_function_refs(v, call_args, functions)
                       for k, v in call_kwargs.items()}
        out, err = io.StringIO(), io.StringIO()
        redirect = (contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)) \
            if self._capture else (contextlib.nullcontext(), contextlib.nullcontext())
        start = time.perf_counter()
        try:
            with redirect[0], redirect[1]:
                value = target(*call_args, **call_kwargs)
        except NotImplementedError as exc:
            # with the student's traceback: `pytest --pdb` stops in the student's frame
            raise StudentError(NOT_IMPLEMENTED, not_implemented_message(exc, self.module, name),
                               function=name).with_traceback(exc.__traceback__) from None
        except StudentError:
            raise
        except Exception as exc:  # any student exception fails the check
            kind, message = student_failure(exc, self.module, name)
            raise StudentError(kind, message, function=name, stdout=out.getvalue()
                               ).with_traceback(exc.__traceback__) from exc
        return CallResult(value, call_args, call_kwargs, out.getvalue(), err.getvalue(),
                          time.perf_counter() - start)


def resolve_function_refs(value: Any, call_args: tuple,
                          functions: Mapping[str, Callable[..., Any]] | None = None) -> Any:
    """Replace a FunctionRef argument by the callable its factory (in ``functions``, by default
    the generic ones) builds."""
    if isinstance(value, FunctionRef):
        bound = tuple(call_args[a.index] if isinstance(a, ArgRef) else a for a in value.args)
        return (GENERIC.functions if functions is None else functions)[value.name](*bound)
    return value


def missing_message(module: types.ModuleType | None, name: str) -> str:
    """Why the grader finds no ``name`` in the submission: not defined at all, or defined only by
    a module standing for the course platform's helper module (``from rnn_utils import *``)."""
    found = getattr(module, "__dict__", {}).get("__builtins__")
    origin = platform_origin(found.get(name)) if isinstance(found, dict) else None
    if origin is None:
        return f"the submission does not define `{name}`"
    return (f"the submission does not define `{name}`: the `{name}` your file uses comes from "
            f"`{origin}` (the course platform's helper module, which the grader provides), so it "
            "scores as missing")


def student_failure(exc: BaseException, module: types.ModuleType,
                    function: str) -> tuple[str, str]:
    """(kind, message) for what ``function`` (a student function, or a grader helper calling
    one) raised: a function a helper could not find is missing, a crash on a template's None
    placeholder is unfinished, anything else is an exception. The sandbox worker uses it too."""
    missing = missing_function(exc, module)
    if missing:  # a grader helper looked the function up: say it is missing
        return MISSING_FUNCTION, missing_message(module, missing)
    unfinished = unfinished_message(exc, getattr(module, "__file__", None), function)
    if unfinished:  # a template's None placeholder: unfinished, not a crash
        return NOT_IMPLEMENTED, unfinished
    return EXCEPTION, describe_exception(exc, module)


def not_implemented_message(exc: NotImplementedError, module: types.ModuleType,
                            function: str) -> str:
    """The message of a NotImplementedError, or for a bare one "f: not implemented yet", where f
    is the student function the grader (or a grader helper) called: the outermost frame of the
    student's file, else ``function``."""
    text = str(exc)
    if text:
        return text
    frames = student_frames(exc, getattr(module, "__file__", None))
    return f"{frames[0][2] if frames else function}: not implemented yet"


def describe_exception(exc: BaseException, module: types.ModuleType) -> str:
    """``Type: message`` and the student's own lines of the traceback (never grader lines)."""
    filename = getattr(module, "__file__", None)
    lines = [f"  line {lineno}, in {function}"
             for _, lineno, function in student_frames(exc, filename)]
    text = exception_text(exc)
    hint = unfinished_hint(exc)
    if hint:
        text += f" — {hint}"
    if lines:
        text += "\n" + "\n".join(lines[-5:])
    return text


def student_frames(exc: BaseException,
                   filename: str | None) -> list[tuple[types.FrameType, int, str]]:
    """(frame, line, function) of the traceback entries in the student's file, outermost first."""
    found = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if filename is not None and code.co_filename == filename:
            found.append((tb.tb_frame, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return found


def exception_text(exc: BaseException) -> str:
    """``Type: message``; for a removed NumPy alias only the first line, with the replacement."""
    text = f"{type(exc).__name__}: {_safe_str(exc)}"
    hint = removed_alias_hint(exc) or in_place_leaf_hint(exc)
    if hint:
        text = f"{text.splitlines()[0].rstrip('.')} — {hint}"
    return text


def _safe_str(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a student exception whose __str__ fails
        return "<the exception could not be printed>"
    return text if type(text) is str else "<the exception could not be printed>"


REMOVED_NUMPY_ALIASES = {"float": "float", "int": "int", "bool": "bool", "complex": "complex",
                         "object": "object", "str": "str", "long": "int", "unicode": "str"}


def removed_alias_hint(exc: BaseException) -> str:
    """Name the replacement when a submission used a NumPy alias removed in NumPy 1.24."""
    if isinstance(exc, AttributeError):
        text = _safe_str(exc)
        if "numpy" in text:
            for alias, replacement in REMOVED_NUMPY_ALIASES.items():
                if f"attribute '{alias}'" in text:
                    return (f"`np.{alias}` was removed from NumPy in 1.24; "
                            f"use the builtin `{replacement}`")
    return ""


IN_PLACE_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"


def in_place_leaf_hint(exc: BaseException) -> str:
    """What to do instead when torch refuses an in-place write into a tensor that requires
    grad (a parameter updated with ``-=``, ``x[...] =`` or ``.add_()`` outside ``no_grad``)."""
    if type(exc) is RuntimeError and IN_PLACE_LEAF in _safe_str(exc):
        return ("a tensor that requires grad (a parameter) was changed in place (`-=`, `+=`, "
                "`x[...] = ...`, `.add_()`, ...) where autograd records: put a parameter update "
                "inside `with torch.no_grad():`, or build a new tensor instead (`h = h + dh`, "
                "not `h += dh`)")
    return ""


def unfinished_hint(exc: BaseException) -> str:
    """A crash on a value that is still None reads as unfinished work, not as a bug."""
    if isinstance(exc, TypeError | AttributeError) and "NoneType" in _safe_str(exc):
        return "a value is still None: looks unfinished (is a template placeholder left as None?)"
    return ""


def missing_function(exc: BaseException, module: types.ModuleType | None) -> str:
    """The name a grader helper failed to find on the student's module (``getattr(module,
    "lstm_cell")`` for a submission without it); "" for any other exception."""
    if type(exc) is not AttributeError or module is None or getattr(exc, "obj", None) is not module:
        return ""
    name = getattr(exc, "name", None)
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None and tb.tb_frame.f_code.co_filename == getattr(module, "__file__", None):
        return ""  # the student's own code asked for it
    return name if isinstance(name, str) else ""


UNFINISHED = "looks unfinished"
_NONE_SYMPTOMS = ("NoneType", "not None")  # what None in place of an array or a number causes
_NONE_EXCEPTIONS = (TypeError, AttributeError, ValueError, IndexError,
                    getattr(np, "exceptions", np).AxisError)
_LOADS = ("LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_FAST_CHECK",
          "LOAD_FAST_LOAD_FAST", "LOAD_FAST_AND_CLEAR")


def unfinished_message(exc: BaseException, filename: str | None, function: str) -> str:
    """What a template's ``None`` placeholder left in place causes (``dx = None`` and later
    ``dx[:, :, t] = ...``, ``range(None)``, unpacking ``None``): a message that reads as
    unfinished and names the variables still None; "" for any other exception."""
    if type(exc) not in _NONE_EXCEPTIONS:  # exact types: nothing of the student's runs here
        return ""
    frames = student_frames(exc, filename)
    names: list[str] = []
    where = ""
    if frames:
        frame, lineno, function = frames[-1]
        names = none_variables(frame, lineno)
        where = f" (line {lineno})"
    text = exception_text(exc).splitlines()[0]
    if not names and not any(symptom in text for symptom in _NONE_SYMPTOMS):
        return ""
    if names:
        listed = ", ".join(f"`{n}`" for n in names)
        what = f"{listed} {'is' if len(names) == 1 else 'are'} still None{where}"
    else:
        what = f"a value is None where an array or a number is needed{where}"
    return (f"`{function}` {UNFINISHED}: {what}, so it fails with {text}. "
            "Is there still a `None` placeholder from the template?")


def none_variables(frame: types.FrameType, lineno: int) -> list[str]:
    """The variables read on line ``lineno`` of ``frame``'s code whose value is None."""
    found: list[str] = []
    line = None
    try:
        instructions = list(dis.get_instructions(frame.f_code))
    except Exception:  # noqa: BLE001 - odd code objects: name nothing
        return found
    for instruction in instructions:
        positions = getattr(instruction, "positions", None)
        if positions is not None and positions.lineno is not None:
            line = positions.lineno
        elif isinstance(instruction.starts_line, int) and instruction.starts_line is not True:
            line = instruction.starts_line
        if line != lineno or instruction.opname not in _LOADS:
            continue
        argval = instruction.argval
        for name in argval if isinstance(argval, tuple) else (argval,):
            if not isinstance(name, str) or name in found:
                continue
            scope = frame.f_locals if name in frame.f_locals else frame.f_globals
            if name in scope and scope[name] is None:
                found.append(name)
    return found

"""The one interface every call into student code goes through.

The trusted side (hidden suites, reference, checks) talks to student code only through a
``StudentRunner``. Arguments and results are *plain data*: NumPy arrays (not subclasses, not
object dtype), torch tensors (dense, strided), Python numbers, bools, strings, bytes, None, lists,
tuples and dicts with string keys of those; plus three tokens defined here:

- ``Handle``: an object the student returned that is not plain data (a cache). It stays on the
  student side; passing the handle back as an argument passes the original object.
- ``FunctionRef``: a callable argument. The student side builds it by calling the factory
  ``name(*args)`` registered with ``@function`` (``rnngrade.harness.worker_helpers``, or the
  lab's own ``helpers.py``): grader code running beside the student's.
- ``ArgRef``: inside a ``FunctionRef``'s args, "the decoded positional argument number ``index``
  of this call", so a function can read the very array the student perturbs.

Every call returns a ``CallResult`` with the value, the arguments as they were after the call (to
see whether the student modified them) and the captured output; or raises ``StudentError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Handle:
    """An opaque reference to an object that stays on the student side."""

    id: int
    type_name: str

    def __repr__(self) -> str:
        return f"<student {self.type_name} #{self.id}>"


@dataclass(frozen=True)
class FunctionRef:
    """A callable argument built on the student side from a grader helper."""

    name: str
    args: tuple = ()


@dataclass(frozen=True)
class ArgRef:
    """Inside a FunctionRef: the call's decoded positional argument ``index``."""

    index: int


@dataclass(frozen=True)
class Usage:
    """What one call cost: ``cpu`` seconds of CPU time (None where the runner cannot tell), and
    ``waited`` seconds for its reply, the time its process waited for a busy CPU not counted."""

    cpu: float | None
    waited: float


@dataclass
class CallResult:
    """What one call into student code produced."""

    value: Any
    args_after: tuple = ()
    kwargs_after: dict = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    usage: Usage | None = None  # where the runner measures it (the sandbox does)


# Kinds of StudentError, each with a fixed meaning for the report.
EXCEPTION = "exception"  # the student code raised; message has type, text, student-side lines
NOT_IMPLEMENTED = "not_implemented"  # NotImplementedError: the stub is still there
MISSING_FUNCTION = "missing_function"  # the submission does not define the function
LOAD_ERROR = "load_error"  # the submission could not be loaded (syntax, import, top-level error)
TIMEOUT = "timeout"  # CPU time limit, or the wall-clock fallback
MEMORY = "memory"  # address-space limit
CRASH = "crash"  # killed by a signal (segfault, abort, ...)
EXIT = "exit"  # the student code exited the worker (os._exit, sys.exit, SystemExit ...)
PROTOCOL = "protocol"  # the result is not plain data or breaks a size/depth limit
OUTPUT_LIMIT = "output_limit"  # file-size limit hit


class StudentError(Exception):
    """A call into student code failed; ``kind`` is one of the constants above."""

    def __init__(self, kind: str, message: str, *, function: str = "", stdout: str = "",
                 stderr: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.function = function
        self.stdout = stdout
        self.stderr = stderr
        # set by the grader when a known mistake (mutant) fails in exactly the same way:
        # rnngrade.results.model.Diagnosis objects (the trusted side's type)
        self.diagnosis: list[Any] = []
        self.hint = ""
        self.usage: Usage | None = None  # what the failed call cost, where the runner measures it

    def __str__(self) -> str:
        return self.message

    def __copy__(self) -> StudentError:
        """The same failure (a memoised mutant's error is raised as a copy each time)."""
        clone = StudentError(self.kind, self.message, function=self.function,
                             stdout=self.stdout, stderr=self.stderr)
        clone.diagnosis, clone.hint, clone.usage = list(self.diagnosis), self.hint, self.usage
        return clone


class StudentRunner(Protocol):
    """Runs a submission's module and calls into it."""

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, head: int | None = None) -> CallResult:
        """Call the student's ``function(*args, **kwargs)``. ``head``: only the first
        ``head`` items of a tuple or list result are wanted (a runner may leave the rest out,
        e.g. caches a check never reads; ``ModuleProxy.head`` slices either way)."""
        ...

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        """Call the grader helper ``helper(student_module, *args, **kwargs)`` (generic, or the
        lab's own) on the student side (e.g. autograd through a student function)."""
        ...

    def use_limits(self, limits: Any) -> None:
        """Apply ``limits`` (a ``rnngrade.limits.Limits``) to the calls that follow, as
        far as this runner enforces limits at all."""
        ...

    def has_function(self, function: str) -> bool:
        """Whether the loaded submission defines ``function`` (a callable)."""
        ...

    def load_notes(self) -> list[str]:
        """Messages from loading the submission (skipped lines, stand-ins used, ...)."""
        ...

    def protections(self) -> dict[str, bool]:
        """Which isolation measures are active, e.g. {"network namespace": True, ...}."""
        ...

    def close(self) -> None:
        ...

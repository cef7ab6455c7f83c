"""A module-like view of a runner: ``student.rnn_forward(x, a0, p)`` calls through the runner.

Hidden suites and public tests use the same test bodies whether the module is the student's
(in-process or in a sandboxed worker), the reference, or a mutant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from rnngrade.harness.runner.base import TIMEOUT, CallResult, StudentError, StudentRunner


@dataclass
class CallRecord:
    function: str
    args_before: tuple
    kwargs_before: dict
    result: CallResult


@dataclass(eq=False)
class ModuleProxy:
    """Calls into a runner by attribute; keeps a log of the calls for argument checks.

    A function that timed out once is not run again for the same submission under the same or a
    shorter time limit: its later calls fail at once with the first timeout's reason, so one
    endless loop costs one time limit, not one per test case. ``use_limits`` sets the limits of
    the calls that follow (the grader does so per hidden test: the lab's, or a test's own).
    """

    runner: StudentRunner
    label: str = "student"
    calls: list[CallRecord] = field(default_factory=list)
    timed_out: dict[str, tuple[str, tuple[float, float, float]]] = field(default_factory=dict)
    limits: Any = None  # a ``Limits`` set by ``use_limits``; None: the runner's own

    @property
    def call_seconds(self) -> float | None:
        """CPU time per call passed with every call; None: the runner's default."""
        return None if self.limits is None else float(self.limits.call_seconds)

    def use_limits(self, limits: Any) -> None:
        """Run the calls that follow under ``limits`` (a ``Limits``): its ``call_seconds`` is
        passed with every call; the runner applies the rest to its worker."""
        self.limits = limits
        self.runner.use_limits(limits)

    def _time_limits(self) -> tuple[float, float, float]:
        """(CPU per call, its wall-clock fallback, CPU per worker) now; infinite: the runner's
        default."""
        if self.limits is None:
            return math.inf, math.inf, math.inf
        return (float(self.limits.call_seconds), float(self.limits.wall_limit()),
                float(self.limits.cpu_seconds))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._guarded(name, lambda: self.runner.call(
                name, args, kwargs, timeout=self.call_seconds))
            self.calls.append(CallRecord(name, args, kwargs, result))
            return result.value

        call.__name__ = name
        return call

    def head(self, name: str, n: int, *args: Any, **kwargs: Any) -> Any:
        """``name(*args, **kwargs)[:n]``, without sending what follows the first ``n`` items of
        a tuple result (a check that reads outputs only need not ship the caches)."""
        result = self._guarded(name, lambda: self.runner.call(
            name, args, kwargs, head=n, timeout=self.call_seconds))
        self.calls.append(CallRecord(name, args, kwargs, result))
        return result.value[:n]

    def helper(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run grader helper ``name`` beside this module (``rnngrade.harness.worker_helpers``,
        or the lab's own ``helpers.py``)."""
        key = f"{name}:{args[0]}" if args and isinstance(args[0], str) else name
        result = self._guarded(key, lambda: self.runner.call_helper(
            name, args, kwargs, timeout=self.call_seconds))
        self.calls.append(CallRecord(f"helper:{name}", args, kwargs, result))
        return result.value

    def on_cache(self, function: str, before: tuple, producer: str, producer_args: tuple,
                 index: int) -> Any:
        """``function(*before, producer(*producer_args)[index])`` in one call beside the module
        (helper ``on_cache``): a backward pass on the cache of the module's own forward pass,
        without the cache travelling to the grader and back. Both calls are logged as if made
        one by one, so a changed argument is named as usual."""
        args = (function, before, producer, producer_args, index)
        result = self._guarded(f"on_cache:{producer}:{function}",
                               lambda: self.runner.call_helper("on_cache", args, {},
                                                               timeout=self.call_seconds),
                               also=(producer, function))
        after = result.args_after
        self.calls.append(CallRecord(producer, producer_args, {},
                                     replace(result, args_after=tuple(after[3]))))
        self.calls.append(CallRecord(function, before, {},
                                     replace(result, args_after=tuple(after[1]))))
        return result.value

    def _guarded(self, key: str, run: Any, also: tuple[str, ...] = ()) -> CallResult:
        limit = self._time_limits()
        for known in (key, *also):
            if known in self.timed_out and all(
                    now <= then for now, then in zip(limit, self.timed_out[known][1])):
                raise StudentError(TIMEOUT, f"{self.timed_out[known][0]} in an earlier case; "
                                   "not run again", function=known.split(":")[-1])
        try:
            return run()
        except StudentError as exc:
            if exc.kind == TIMEOUT:
                self.timed_out[key] = (exc.message, limit)
            raise

    def has(self, function: str) -> bool:
        return self.runner.has_function(function)

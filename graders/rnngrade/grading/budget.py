"""The whole-submission time budget: CPU seconds for all of one submission's calls.

The grader wraps the submission's runner in a ``BudgetedRunner``. Every call is given at most the
CPU time left (the runner's per-call limit still applies when it is shorter), and once the budget
is spent no further call is made: each raises a ``StudentError`` of kind ``budget`` at once, so the
remaining tests finish in moments and are recorded as not run, with their points kept as maximum.

CPU time is what a submission's work costs whatever else runs on the machine, so a busy machine
does not spend the budget. Code that uses little CPU (sleeping, blocked) spends it through the
fallback instead: ``WALL_FACTOR`` times the budget in seconds waited for replies, the time the
worker waited for a busy CPU not counted (``Usage.waited``). A runner that does not measure a
call's cost (the in-process one) is charged the call's wall clock for both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rnngrade.harness.runner.base import TIMEOUT, CallResult, StudentError, StudentRunner, Usage
from rnngrade.results.model import BUDGET_MESSAGE, FailureKind

WALL_FACTOR = 2.0


@dataclass
class Budget:
    """``seconds`` of CPU time for one submission's calls (see the module docstring)."""

    seconds: float
    cpu: float = 0.0  # CPU seconds charged so far
    waited: float = 0.0  # seconds waited for replies so far, busy machine excepted
    spent: bool = False  # set once a call was refused or cut short by the budget

    def left(self) -> float:
        """CPU seconds left; 0 once the wall-clock fallback is used up too."""
        if self.waited >= WALL_FACTOR * self.seconds:
            return 0.0
        return self.seconds - self.cpu

    def charge(self, usage: Usage | None, wall: float) -> None:
        """Count one call: its measured ``usage``, or ``wall`` seconds for both clocks."""
        if usage is None:
            usage = Usage(wall, wall)
        self.cpu += wall if usage.cpu is None else usage.cpu
        self.waited += usage.waited


@dataclass(eq=False)
class BudgetedRunner:
    """A ``StudentRunner`` that stops calling into the submission when ``budget`` is spent."""

    runner: StudentRunner
    budget: Budget
    call_limit: float | None = None  # the runner's own limit for a call given no timeout

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, head: int | None = None) -> CallResult:
        return self._within(lambda limit: self.runner.call(function, args, kwargs,
                                                           timeout=limit, head=head), timeout)

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        return self._within(lambda limit: self.runner.call_helper(helper, args, kwargs,
                                                                  timeout=limit), timeout)

    def _within(self, call: Any, timeout: float | None) -> CallResult:
        left = self.budget.left()
        if self.budget.spent or left <= 0:
            self.budget.spent = True
            raise StudentError(FailureKind.BUDGET, BUDGET_MESSAGE)
        own = timeout if timeout is not None else self.call_limit
        capped = own is not None and left < own
        started = time.monotonic()
        try:
            result: CallResult = call(left if capped else timeout)
        except StudentError as exc:
            self.budget.charge(exc.usage, time.monotonic() - started)
            if exc.kind == TIMEOUT and capped and self.budget.left() <= 0:
                self.budget.spent = True
                raise StudentError(FailureKind.BUDGET, BUDGET_MESSAGE) from exc
            raise
        self.budget.charge(result.usage, time.monotonic() - started)
        return result

    def use_limits(self, limits: Any) -> None:
        """The limits of the calls that follow (a hidden test's own): passed on to the runner."""
        self.call_limit = limits.call_seconds
        self.runner.use_limits(limits)

    def has_function(self, function: str) -> bool:
        return self.runner.has_function(function)

    def load_notes(self) -> list[str]:
        return self.runner.load_notes()

    def protections(self) -> dict[str, bool]:
        return self.runner.protections()

    def close(self) -> None:
        self.runner.close()

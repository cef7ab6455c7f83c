"""The whole-submission time budget: wall-clock seconds for all of one submission's calls.

The grader wraps the submission's runner in a ``BudgetedRunner``. Every call is given at most the
time left (the runner's per-call limit still applies when it is shorter), and once the budget is
spent no further call is made: each raises a ``StudentError`` of kind ``budget`` at once, so the
remaining tests finish in moments and are recorded as not run, with their points kept as maximum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rnngrade.harness.runner.base import TIMEOUT, CallResult, StudentError, StudentRunner
from rnngrade.results.model import BUDGET_MESSAGE, FailureKind


@dataclass
class Budget:
    """``seconds`` of wall clock from ``started`` (``time.monotonic()``)."""

    seconds: float
    started: float = field(default_factory=time.monotonic)
    spent: bool = False  # set once a call was refused or cut short by the budget

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)


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
        try:
            return call(left if capped else timeout)
        except StudentError as exc:
            if exc.kind == TIMEOUT and capped and self.budget.left() <= 0:
                self.budget.spent = True
                raise StudentError(FailureKind.BUDGET, BUDGET_MESSAGE) from exc
            raise

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

"""The two time budgets of one submission: the submission's own, and the grader's.

**The submission's budget** (``--budget``, default the lab's ``budget_seconds``): CPU seconds for
all of the calls the tests make into the submission, and nothing else: what the grader does
between calls (computing the reference's values, naming a mistake, retrying a check with
stand-ins, building the report) is never charged to it, so a student's score does not depend on
how long the grader took. The grader wraps the submission's runner in a ``BudgetedRunner``.
Every call is given at most the CPU time left (the runner's per-call limit still applies when it
is shorter), and once the budget is spent no further call is made: each raises a
``StudentError`` of kind ``budget`` at once, so the remaining tests finish in moments and are
recorded as not run, with their points kept as maximum.

CPU time is what a submission's work costs whatever else runs on the machine, so a busy machine
does not spend the budget. Code that uses little CPU (sleeping, blocked) spends it through the
fallback instead: ``WALL_FACTOR`` times the budget in seconds waited for replies, the time the
worker waited for a busy CPU not counted (``Usage.waited``). A runner that does not measure a
call's cost (the in-process one) is charged the call's wall clock for both.

**The grader's budget** (``grader_seconds``, by default ``GRADER_FACTOR`` times the submission's)
bounds the rest of the wall clock: the grader's own work on this submission, the calls it makes
into the submission for its own purposes (``Budget.grader_work``: the retry of a check with
stand-ins) included. Once it is spent the grader stops *explaining* failures (``diagnose``):
each check keeps its verdict and message, its diagnosis and hint are left out with
``DIAGNOSIS_SKIPPED``, and no point changes. Work that decides points (a reference value, a retry
with stand-ins) always runs.

The engine makes a submission's budget the current one (``Budget.active``) while its suite runs;
the ``check`` fixture finds it with ``current()`` (None when a suite runs outside the grader: no
limit, nothing recorded).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rnngrade.harness.runner.base import TIMEOUT, CallResult, StudentError, StudentRunner, Usage
from rnngrade.results.model import BUDGET_MESSAGE, FailureKind

WALL_FACTOR = 2.0
GRADER_FACTOR = 2.0  # the grader's own seconds (wall clock) per second of the submission's budget
DIAGNOSIS_SKIPPED = "diagnosis skipped: the grader's time for this submission ran out"
DIAGNOSIS_SKIPPED_NOTE = (f"{DIAGNOSIS_SKIPPED}, so some failures are not explained; "
                          "the scores do not depend on it")

_CURRENT: ContextVar[Budget | None] = ContextVar("rnngrade_budget", default=None)


class _GraderTimeUp(Exception):
    """The grader's budget ran out while it was explaining a failure."""


def _now() -> float:
    return time.monotonic()


@dataclass
class Budget:
    """``seconds`` of CPU time for one submission's calls, and ``grader_seconds`` of wall clock
    for everything else from ``started`` (see the module docstring)."""

    seconds: float
    grader_seconds: float | None = None  # None: GRADER_FACTOR × seconds
    cpu: float = 0.0  # CPU seconds charged so far
    waited: float = 0.0  # seconds waited for replies so far, busy machine excepted
    spent: bool = False  # set once a call was refused or cut short by the budget
    started: float = field(default_factory=_now)
    calls: float = 0.0  # wall clock of the calls charged to the submission
    skipped: int = 0  # diagnoses left out because the grader's budget was spent
    _grader_depth: int = 0  # nesting of ``grader_work``

    def __post_init__(self) -> None:
        if self.grader_seconds is None:
            self.grader_seconds = GRADER_FACTOR * self.seconds

    def left(self) -> float:
        """CPU seconds left; 0 once the wall-clock fallback is used up too."""
        if self.waited >= WALL_FACTOR * self.seconds:
            return 0.0
        return self.seconds - self.cpu

    def charge(self, usage: Usage | None, wall: float) -> None:
        """Count one call: its measured ``usage``, or ``wall`` seconds for both clocks."""
        self.calls += wall
        if usage is None:
            usage = Usage(wall, wall)
        self.cpu += wall if usage.cpu is None else usage.cpu
        self.waited += usage.waited

    # ------------------------------------------------------------------ the grader's budget
    def grader_used(self) -> float:
        """Seconds of the grader's own so far: the wall clock not spent in charged calls."""
        return max(0.0, time.monotonic() - self.started - self.calls)

    def grader_left(self) -> float:
        assert self.grader_seconds is not None
        return self.grader_seconds - self.grader_used()

    @property
    def on_grader(self) -> bool:
        """Whether the calls made now are the grader's own (``grader_work``)."""
        return self._grader_depth > 0

    @contextmanager
    def grader_work(self) -> Iterator[None]:
        """Calls into the submission made inside are the grader's: they are not charged to the
        submission, nor refused when its budget is spent (each keeps its per-call limit)."""
        self._grader_depth += 1
        try:
            yield
        finally:
            self._grader_depth -= 1

    def diagnose(self, explain: Callable[[], Any]) -> bool:
        """Run ``explain`` (a diagnosis: work that changes no point) while the grader's budget
        lasts; False, counted in ``skipped``, when the budget is spent before it or during it
        (``explain`` checks between its steps with ``check_time``)."""
        try:
            self.check_time()
            explain()
        except _GraderTimeUp:
            self.skipped += 1
            return False
        return True

    def check_time(self) -> None:
        """Raise ``_GraderTimeUp`` when the grader's budget is spent."""
        if self.grader_left() <= 0:
            raise _GraderTimeUp

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """This budget as the current one (``current()``) inside."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def timings(self) -> dict[str, float]:
        """Both budgets and what was used of them, in seconds, for the instructor."""
        return {"submission_cpu_seconds": round(self.cpu, 3),
                "submission_waited_seconds": round(self.waited, 3),
                "submission_budget": self.seconds,
                "grader_seconds": round(self.grader_used(), 3),
                "grader_budget": float(self.grader_seconds or 0.0),
                "diagnoses_skipped": self.skipped}


def current() -> Budget | None:
    """The budget of the submission being graded in this context (None outside the grader)."""
    return _CURRENT.get()


@contextmanager
def grader_work() -> Iterator[None]:
    """``current().grader_work()``, or nothing outside the grader."""
    budget = current()
    if budget is None:
        yield
        return
    with budget.grader_work():
        yield


@dataclass(eq=False)
class BudgetedRunner:
    """A ``StudentRunner`` that charges each call to ``budget`` and stops calling into the
    submission when it is spent; the grader's own calls (``Budget.grader_work``) pass through."""

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
        if self.budget.on_grader:
            return call(timeout)  # the grader's own call: its time is the grader's
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

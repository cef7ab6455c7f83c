"""Feeding a backward pass in the public tests by the grader's rule: a test of one function never
loses points for a mistake in another (assignments/lab2/README.md).

A backward pass reads the cache of a forward pass. The public vectors hold, beside each backward
case, the course's forward pass on the same inputs: its outputs and its cache in the classic layout.
When the student's own forward pass reproduces those outputs, the backward pass is checked on the
student's own cache (and, should that fail while the classic cache passes, on the classic one: the
student's pair then disagrees on the cache's layout only). Otherwise it is checked on the classic
cache, and a failure says why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rnngrade.harness.checks.compare import CheckFailure
from rnngrade.harness.checks.structure import compare_tree
from rnngrade.harness.checks.tolerance import tolerance_for
from rnngrade.harness.runner.base import MISSING_FUNCTION, NOT_IMPLEMENTED, StudentError


def forward_problem(student: Any, forward: str, args: tuple, expected: tuple,
                    outputs: int) -> tuple[str | None, Any]:
    """(why the student's ``forward(*args)`` cannot feed a backward pass, or None; its cache when
    it can). ``expected``: the course's result on ``args``, its first ``outputs`` items the
    outputs, the next one the cache."""
    try:
        got = getattr(student, forward)(*args)
    except StudentError as error:
        if error.kind == MISSING_FUNCTION:
            return "is missing", None
        if error.kind == NOT_IMPLEMENTED:
            return "looks unfinished", None
        return "raised an error", None
    if not isinstance(got, tuple | list) or len(got) <= outputs:
        return "does not return its outputs and a cache", None
    try:
        compared = compare_tree(tuple(got[:outputs]), tuple(expected[:outputs]),
                                tolerance_for(*args), forward, None, None)
    except Exception:  # noqa: BLE001 - whatever came back cannot be compared
        return "returns something its checks cannot compare", None
    if any(not c.ok for c in compared):
        return "fails its own checks on these inputs", None
    return None, got[outputs]


def check_on_caches(student: Any, forward: str, args: tuple, expected: tuple, outputs: int,
                    check: Callable[[Any], None]) -> None:
    """Run ``check(cache)`` (the backward pass on ``cache`` and its assertions) on the cache the
    rule in the module docstring picks."""
    classic = expected[outputs]
    problem, own = forward_problem(student, forward, args, expected, outputs)
    if problem is None:
        try:
            check(own)
            return
        except (CheckFailure, StudentError) as first:
            try:
                check(classic)
            except (CheckFailure, StudentError):
                raise first from None
            return
    try:
        check(classic)
    except (CheckFailure, StudentError) as failure:
        if isinstance(failure, StudentError) and failure.kind in (NOT_IMPLEMENTED,
                                                                   MISSING_FUNCTION):
            raise  # the backward pass itself is unfinished: the cache is beside the point
        failure.message = (f"(checked on the course's cache in the classic layout: your "
                           f"`{forward}` {problem})\n{failure.message}")
        failure.args = (failure.message, *failure.args[1:])
        raise

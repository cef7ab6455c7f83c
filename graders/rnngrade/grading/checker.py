"""The ``check`` fixture of hidden suites: compare the student with the reference, name mistakes.

``check.expect(name, probe, args)`` runs ``probe(student, *args)`` and ``probe(reference,
*promote(args))`` — a probe is any function of a module proxy, such as
``lambda m, x, a0, p: m.rnn_forward(x, a0, p)[:2]`` — and compares the two leaf by leaf. When they
differ it runs the same probe on every mutant of the lab and, if one matches the student's result,
names that mistake; otherwise it looks for shapes of wrongness (a constant factor, a transpose, a
time shift, NaN). Every comparison is recorded so ``rnngrade validate`` can report the margin of
each tolerance over the reference's own error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnngrade.checks.compare import CheckFailure, Comparison, expected_dtype_of, to_numpy
from rnngrade.checks.structure import compare_tree, flatten
from rnngrade.checks.tolerance import Tolerance, tolerance_for
from rnngrade.diagnosis.heuristics import describe_wrongness
from rnngrade.diagnosis.mutants import Mutant
from rnngrade.grading.precision import promote as promote_args
from rnngrade.runner.proxy import ModuleProxy

Probe = Callable[..., Any]


@dataclass
class CheckRecord:
    """One comparison, kept for self-validation (never shown to students)."""

    check: str
    tolerance: str
    ratio: float  # worst |a−e| / allowed over the leaves; ≤ 1 passes
    passed: bool


@dataclass
class Checker:
    student: ModuleProxy
    reference: ModuleProxy
    mutants: list[tuple[Mutant, ModuleProxy]] = field(default_factory=list)
    record: Callable[[CheckRecord], None] = lambda record: None

    def expect(self, name: str, probe: Probe, args: tuple = (), *, tol: Tolerance | None = None,
               names: tuple[str, ...] | None = None, oracle: Callable[..., Any] | None = None,
               promote: bool = True, may_modify: bool = False, time_axis: int | None = None,
               dtype: Any = "auto") -> Any:
        """Check ``probe(student, *args)`` against the expected value; return the student's.

        oracle: computes the expected value from ``args`` instead of the reference (an independent
            implementation such as ``torch.nn.RNN``); then nothing is promoted.
        names: names of the top-level items when the probe returns a tuple.
        may_modify: the contract allows the student function to change its arguments.
        dtype: the precision the result must have ("auto": the least precise float input).
        """
        tol = tol or tolerance_for(*args)
        required = expected_dtype_of(*args) if dtype == "auto" else dtype
        self.student.calls.clear()
        got = probe(self.student, *args)
        calls = list(self.student.calls)
        if oracle is not None:
            want = oracle(*args)
        else:
            want = probe(self.reference, *(promote_args(args) if promote else args))
        comparisons = compare_tree(got, want, tol, name, names, required)
        worst = max((c.ratio for c in comparisons), default=0.0)
        failed = [c for c in comparisons if not c.ok]
        self.record(CheckRecord(name, str(tol), worst, not failed))
        if failed:
            raise self._failure(name, probe, args, got, want, comparisons, failed, tol, names,
                                time_axis)
        if not may_modify:
            check_arguments_unchanged(calls)
        return got

    def _failure(self, name: str, probe: Probe, args: tuple, got: Any, want: Any,
                 comparisons: list[Comparison], failed: list[Comparison], tol: Tolerance,
                 names: tuple[str, ...] | None, time_axis: int | None) -> CheckFailure:
        message = f"check `{name}`:\n" + "\n".join(c.message() for c in failed)
        matched = self.matching_mutants(name, probe, args, got, tol, names,
                                        {c.name for c in failed})
        if matched:
            diagnosis = [f"{m.name}: {m.description}" for m in matched]
            return CheckFailure(message, comparisons, diagnosis, matched[0].hint)
        notes: list[str] = []
        leaves_got = dict(flatten(got, name, names))
        for leaf_name, leaf_want in flatten(want, name, names):
            if leaf_name in {c.name for c in failed} and leaf_name in leaves_got:
                g, w = to_numpy(leaves_got[leaf_name]), to_numpy(leaf_want)
                if g is not None and w is not None and g.dtype.kind != "O":
                    notes += [f"{leaf_name}: {n}" for n in
                              describe_wrongness(g, w, tol.atol, tol.rtol, time_axis)]
        return CheckFailure(message, comparisons, notes)

    def matching_mutants(self, name: str, probe: Probe, args: tuple, got: Any, tol: Tolerance,
                         names: tuple[str, ...] | None, failing: set[str]) -> list[Mutant]:
        """The mutants whose result on the same inputs matches the student's failing values."""
        matched = []
        for mutant, proxy in self.mutants:
            try:
                theirs = probe(proxy, *args)
            except Exception:  # noqa: BLE001 - a mutant that raises matches nothing
                continue
            comparisons = compare_tree(got, theirs, tol, name, names, None)
            by_name = {c.name: c for c in comparisons}
            relevant = [by_name[n] for n in failing if n in by_name]
            if relevant and all(c.ok for c in relevant):
                matched.append(mutant)
        return matched


def check_arguments_unchanged(calls: list) -> None:
    """Fail when a student function changed an argument in place."""
    for record in calls:
        for position, (before, after) in enumerate(zip(record.args_before,
                                                       record.result.args_after)):
            path = first_difference(before, after, f"argument {position + 1}")
            if path:
                raise CheckFailure(
                    f"{record.function} modified its input ({path}) in place; work on a copy "
                    "or build new arrays instead")


def first_difference(before: Any, after: Any, path: str) -> str:
    """The path of the first entry where ``after`` differs from ``before``; '' when identical."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                return f"{path}[{key!r}] removed"
            found = first_difference(before[key], after[key], f"{path}[{key!r}]")
            if found:
                return found
        return ""
    if isinstance(before, tuple | list) and isinstance(after, tuple | list):
        for i, (b, a) in enumerate(zip(before, after)):
            found = first_difference(b, a, f"{path}[{i}]")
            if found:
                return found
        return "" if len(before) == len(after) else f"{path} changed length"
    b, a = to_numpy(before), to_numpy(after)
    if b is not None and a is not None:
        if b.shape != a.shape or not np.array_equal(b, a, equal_nan=b.dtype.kind in "fc"):
            return path
    return ""

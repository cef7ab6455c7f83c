"""The ``check`` fixture of hidden suites: compare the student with the reference, name mistakes.

``check.expect(name, probe, args)`` runs ``probe(student, *args)`` and ``probe(reference,
*promote(args))`` — a probe is any function of a module proxy, such as
``lambda m, x, a0, p: m.rnn_forward(x, a0, p)[:2]`` — and compares the two leaf by leaf. When they
differ it runs the same probe on every mutant of the lab and, if one matches the student's result,
names that mistake; otherwise it looks for shapes of wrongness (a constant factor, a transpose, a
time shift, NaN). Every comparison is recorded so ``rnngrade validate`` can report the margin of
each tolerance over the reference's own error.

Naming a mistake is the grader's own work (``grading/budget.py``): it stops when the grader's
time for the submission runs out, and the failure then says its diagnosis was skipped. The retry
with stand-ins decides points: it always runs, on the grader's time, never the student's.
"""

from __future__ import annotations

import ast
import functools
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rnngrade.diagnosis.aliasing import in_place_diagnosis, parameter_names
from rnngrade.diagnosis.carried import CarriedSlip, carried_slips_of, explain_carried
from rnngrade.diagnosis.localise import localise_check
from rnngrade.diagnosis.mutants import Mutant
from rnngrade.diagnosis.reach import AttemptLog, Reach, called_names
from rnngrade.diagnosis.rewrites import Rewrite, explain_rewrites, rewrites_of
from rnngrade.diagnosis.rewriting import definition_of
from rnngrade.diagnosis.slips import Slip, explain_slips, slips_of
from rnngrade.diagnosis.structural import explain_unmatched
from rnngrade.errors import SuiteError
from rnngrade.grading import budget as budgets
from rnngrade.grading.budget import (
    DIAGNOSIS_SKIPPED,
    DIAGNOSIS_SKIPPED_NOTE,
    Budget,
    grader_work,
)
from rnngrade.grading.chained import add_note
from rnngrade.grading.memo import ExpectationMemo
from rnngrade.grading.precision import promote as promote_args
from rnngrade.harness.checks.arguments import changed_entry
from rnngrade.harness.checks.compare import (
    UNFINISHED,
    CheckFailure,
    Comparison,
    expected_dtype_of,
    to_numpy,
)
from rnngrade.harness.checks.contract import explain_contract
from rnngrade.harness.checks.structure import compare_tree, flatten
from rnngrade.harness.checks.tolerance import Tolerance, tolerance_for
from rnngrade.harness.runner.base import EXCEPTION, NOT_IMPLEMENTED, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.lab_contract import Gate
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value  # the source of a contract slip's diagnosis

Probe = Callable[..., Any]


class _Unchanged(Exception):
    """A retry with stand-ins replaced nothing: the first attempt's failure stands, and the
    retry's result is neither compared nor diagnosed."""


@dataclass
class CheckRecord:
    """One comparison, kept for self-validation (never shown to students)."""

    check: str
    tolerance: str
    ratio: float  # worst |a−e| / allowed over the leaves; ≤ 1 passes
    passed: bool
    timed: bool = False  # the check compares sequences along a time axis


@dataclass
class Checker:
    student: ModuleProxy
    reference: ModuleProxy
    # the lab's mutants, each behind its proxy: built on first use (most checks pass)
    mutant_proxies: Callable[[], list[tuple[Mutant, ModuleProxy]]] = list
    record: Callable[[CheckRecord], None] = lambda record: None
    memo: ExpectationMemo | None = None  # a long-lived grader's memo of trusted values
    # the retry of a failed check with stand-ins for failing callees (``stand_ins.py``): a
    # function of the student proxy, and the graded functions that call another one
    stand_ins: Callable[[ModuleProxy], Any] | None = None
    callers: frozenset[str] = frozenset()
    graded: frozenset[str] = frozenset()  # the lab's functions: a failed call of another name
    # is a helper's (such as ``autograd``), which may have run any of them
    reach: Reach | None = None  # None: every mutant is run for every diagnosis
    gates: tuple[Gate, ...] = ()  # the lab's gates, for the structural diagnosis
    # the submission's budgets while the grader runs the suite (None: no limit on diagnosis)
    budget: Budget | None = field(default_factory=budgets.current)
    # the results of the mutants that matched the last failure (by name)
    _matched_results: dict[str, Any] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def mutants(self) -> list[tuple[Mutant, ModuleProxy]]:
        return self.mutant_proxies()

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
        attempt = functools.partial(self._attempt, name, probe, args, tol, names, oracle,
                                    promote, may_modify, time_axis, required)
        self.student.calls.clear()
        try:
            return attempt(self.student)
        except (CheckFailure, StudentError) as first:
            if self.stand_ins is None or not self._may_retry(first):
                raise
            fair = self.stand_ins(self.student)
            try:
                with budgets.grader_work():  # the grader's retry: never the student's time
                    got = attempt(fair, unchanged=lambda: not fair.used)
            except _Unchanged:
                raise first from None
            except (CheckFailure, StudentError) as second:
                if not fair.used or (isinstance(second, StudentError)
                                     and second.kind == NOT_IMPLEMENTED):
                    raise first from None  # nothing replaced, or the function itself unfinished
                second.message = fair.prefix() + second.message
                raise second from None
            if not fair.used or not fair.complete:
                raise first from None
            add_note(fair.note(_function_of(name)))
            return got

    def _may_retry(self, failure: CheckFailure | StudentError) -> bool:
        """Whether a failure may be another function's fault: the check ran a function that
        calls another graded function (``stand_ins.py``)."""
        if isinstance(failure, StudentError):
            if failure.kind not in (EXCEPTION, NOT_IMPLEMENTED):
                return False  # a time or memory limit would only be hit again
            helper = bool(self.graded) and failure.function not in self.graded
            ran = {f"helper:{failure.function}" if helper else failure.function,
                   *(r.function for r in self.student.calls)}
        else:
            ran = {r.function for r in self.student.calls}
        callers = set(self.callers)
        return any(name in callers or name.startswith("helper:") for name in ran)

    def _attempt(self, name: str, probe: Probe, args: tuple, tol: Tolerance,
                 names: tuple[str, ...] | None, oracle: Callable[..., Any] | None,
                 promote: bool, may_modify: bool, time_axis: int | None, required: Any,
                 student: Any, unchanged: Callable[[], bool] | None = None) -> Any:
        """One run of the check on ``student`` (the submission, or the submission with stand-ins
        for failing callees). unchanged: for a retry, whether it has replaced nothing; once the
        probe has run, such a retry ends (``_Unchanged``): it ran as the first attempt did."""
        student.calls.clear()
        try:
            got = probe(student, *args)
        except StudentError as exc:
            if unchanged is not None and unchanged():
                raise _Unchanged from None
            if exc.kind == EXCEPTION and self.mutants and not self._explained(
                    functools.partial(self._diagnose_error, probe, args, exc)):
                exc.message += f"\n{DIAGNOSIS_SKIPPED}"
            raise
        if unchanged is not None and unchanged():
            raise _Unchanged
        calls = list(student.calls)
        try:
            if oracle is not None:
                want = self._trusted("oracle", self._key(name, oracle, args),
                                     lambda: oracle(*args))
            else:
                want = self._trusted(
                    "reference", self._key(name, probe, args, promote),
                    lambda: probe(self.reference, *(promote_args(args) if promote else args)))
        except Exception as exc:
            role = "oracle" if oracle is not None else "reference"
            raise SuiteError(f"check `{name}`: the {role} failed: {type(exc).__name__}: {exc}"
                             ) from exc
        comparisons = compare_tree(got, want, tol, name, names, required)
        worst = max((c.ratio for c in comparisons), default=0.0)
        failed = [c for c in comparisons if not c.ok]
        self.record(CheckRecord(name, str(tol), worst, not failed, time_axis is not None))
        if failed:
            raise self._failure(name, probe, args, got, want, comparisons, failed, tol, names,
                                time_axis, functools.partial(
                                    self._localised, student, name, probe, args, promote,
                                    oracle, comparisons, tol, names))
        if not may_modify:
            check_arguments_unchanged(calls, getattr(self.reference.runner, "module", None),
                                      names)
        return got

    def _key(self, name: str, fn: Callable[..., Any], args: tuple, extra: Any = None
             ) -> str | None:
        return None if self.memo is None else self.memo.key(name, fn, args, extra)

    def _trusted(self, role: str, key: str | None, run: Callable[[], Any], *,
                 read_only: bool = False) -> Any:
        """A value computed on the trusted side (reference, oracle, mutant), memoised across
        submissions when the grader keeps a memo (read_only: the caller never changes it, so a
        memoised value need not be copied)."""
        if self.memo is None:
            return run()
        return self.memo.compute(key, role, run, shared=read_only)

    def _failure(self, name: str, probe: Probe, args: tuple, got: Any, want: Any,
                 comparisons: list[Comparison], failed: list[Comparison], tol: Tolerance,
                 names: tuple[str, ...] | None, time_axis: int | None,
                 localised: Callable[[], list[Any]] = list) -> CheckFailure:
        message = f"check `{name}`:\n" + "\n".join(failure_lines(name, failed))
        found: list[CheckFailure] = []

        def explain() -> None:
            matched = self.matching_mutants(name, probe, args, got, tol, names,
                                            {c.name for c in failed})
            # a mistake reproduces the student's values only if it also leaves right what the
            # student has right: one that changes an output the student got right is told
            # apart by it (its match on the failing outputs rests on a coincidence, such as a
            # term at zero that every explanation dropping it shares)
            matched = [m for m in matched if self._whole_match(m, name, got, tol, names)]
            if matched:
                evidence = f"your result equals this mistake's on the same inputs (check `{name}`)"
                found.append(CheckFailure(message, comparisons,
                                          [m.diagnosis(evidence) for m in matched],
                                          matched[0].hint))
                return
            function = _function_of(name)
            slips = [Diagnosis(s.name, s.text, function, s.hint, s.evidence, STRUCTURAL)
                     for s in explain_contract(got, want, failed, tol, name, names, function)]
            if slips:
                found.append(CheckFailure(message, comparisons, slips, slips[0].hint))
                return
            slips = self._sequence_slips(name, probe, args, got, want, failed, tol, names)
            if slips:
                found.append(CheckFailure(message, comparisons, slips, slips[0].hint))
                return
            found.append(CheckFailure(message, comparisons, explain_unmatched(
                got, want, [c.name for c in failed], tol, name, names, args, time_axis,
                lambda a: self._trusted("reference", self._key(f"{name} fresh step", probe, a),
                                        lambda: probe(self.reference, *promote_args(a))),
                self.gates)
                + localised()))

        if self._explained(explain):
            return found[0]
        return CheckFailure(f"{message}\n{DIAGNOSIS_SKIPPED}", comparisons)

    def _whole_match(self, mutant: Mutant, name: str, got: Any, tol: Tolerance,
                     names: tuple[str, ...] | None) -> bool:
        """Whether ``mutant``'s result (kept when it matched) equals the student's on every
        leaf."""
        if mutant.name not in self._matched_results:
            return True
        theirs = self._matched_results[mutant.name]
        compared = compare_tree(got, theirs, tol, name, names, None, stop_at_failure=True,
                                verdicts=True)
        return all(c.ok for c in compared)

    def _sequence_slips(self, name: str, probe: Probe, args: tuple, got: Any, want: Any,
                        failed: list[Comparison], tol: Tolerance,
                        names: tuple[str, ...] | None) -> list[Diagnosis]:
        """A state not carried or a sum not accumulated in the checked function's time loop
        (``diagnosis/slips.py``): the reference rewritten so, run on the trusted side."""
        module = getattr(self.reference.runner, "module", None)
        if not isinstance(module, types.ModuleType):
            return []
        slips = slips_of(module, _function_of(name))
        carried = carried_slips_of(module, _function_of(name))
        rewrites = rewrites_of(module, _function_of(name))
        if not slips and not carried and not rewrites:
            return []
        helpers = getattr(self.reference.runner, "helpers", None)

        def run(slip: Slip | CarriedSlip | Rewrite) -> Any:
            self._check_time()  # outside the try: the grader's time running out ends it
            proxy = ModuleProxy(InProcessRunner(slip.module, helpers=helpers), "reference")
            index = (f"slip {slips.index(slip)}" if isinstance(slip, Slip)
                     else f"carried slip {carried.index(slip)}"
                     if isinstance(slip, CarriedSlip) else f"rewrite {rewrites.index(slip)}")
            try:
                return self._trusted(index, self._key(f"{name} {index}", probe, args),
                                     lambda: probe(proxy, *promote_args(args)), read_only=True)
            except Exception:  # noqa: BLE001 - a slip that fails on these inputs: none
                return None

        return (explain_slips(slips, run, got, want, [c.name for c in failed], tol, name, names)
                or explain_carried(carried, run, got, want, [c.name for c in failed], tol,
                                   name, names)
                or explain_rewrites(rewrites, run, got, want, [c.name for c in failed], tol,
                                    name, names))

    def _localised(self, student: Any, name: str, probe: Probe, args: tuple, promote: bool,
                   oracle: Callable[..., Any] | None, comparisons: list[Comparison],
                   tol: Tolerance, names: tuple[str, ...] | None) -> list[Any]:
        """Where inside the checked function its values go wrong (``diagnosis/localise.py``):
        only for the submission itself, checked against the reference, in a function that
        calls no other graded function, or calls one outside any loop (a cell that calls
        softmax once: what the callee returns is one of its values, compared as any other;
        a loop's values at return are its last step's only)."""
        function = _function_of(name)
        if student is not self.student or oracle is not None or (
                function in self.callers and not self._straight(function)):
            return []
        self._check_time()
        return localise_check(
            student, self.reference, function, name, probe, args,
            promote_args(args) if promote else args, comparisons, names, tol.atol, tol.rtol,
            lambda run: self._trusted("reference", self._key(f"{name} locals", probe, args,
                                                              promote), run),
            guard=grader_work)

    def _straight(self, function: str) -> bool:
        """Whether the reference's ``function`` runs without a loop (read off its source)."""
        module = getattr(self.reference.runner, "module", None)
        definition = definition_of(module, function) if isinstance(module, types.ModuleType) \
            else None
        return definition is not None and not any(
            isinstance(n, ast.For | ast.While | ast.AsyncFor | ast.comprehension)
            for n in ast.walk(definition))

    def _explained(self, explain: Callable[[], None]) -> bool:
        """Run ``explain`` (a diagnosis) on the grader's time: False when that ran out first,
        with a note for the report (``grading/budget.py``)."""
        if self.budget is None:
            explain()
            return True
        if self.budget.diagnose(explain):
            return True
        add_note(DIAGNOSIS_SKIPPED_NOTE)
        return False

    def _check_time(self) -> None:
        """Between two steps of a diagnosis: stop when the grader's time has run out."""
        if self.budget is not None:
            self.budget.check_time()

    def _diagnose_error(self, probe: Probe, args: tuple, exc: StudentError) -> None:
        """A student exception that a mutant raises too, on the same inputs and with the same
        type and message (a shape mismatch two steps after the mistake, say), names the mistake
        like a wrong value would."""
        if exc.kind != EXCEPTION or not self.mutants:
            return
        signature = _error_signature(exc.message)
        matched = []
        for mutant, proxy in self._telling(probe, args):
            self._check_time()
            try:
                probe(proxy, *args)
            except StudentError as theirs:
                if theirs.kind == EXCEPTION and _error_signature(theirs.message) == signature:
                    matched.append(mutant)
            except Exception:  # noqa: BLE001 - a mutant failing otherwise matches nothing
                continue
        if matched:
            exc.diagnosis = [m.diagnosis("your code raises the same error as this mistake on "
                                         "the same inputs") for m in matched]
            exc.hint = matched[0].hint

    def matching_mutants(self, name: str, probe: Probe, args: tuple, got: Any, tol: Tolerance,
                         names: tuple[str, ...] | None, failing: set[str]) -> list[Mutant]:
        """The mutants whose result on the same inputs matches the student's failing values."""
        matched = []
        self._matched_results.clear()
        key = self._key(name, probe, args) if self.mutants else None
        for mutant, proxy in self._telling(probe, args):
            self._check_time()

            def run_mutant(proxy: Any = proxy) -> Any:
                return probe(proxy, *args)

            try:
                theirs = self._trusted(f"mutant {mutant.name}", key, run_mutant, read_only=True)
            except Exception:  # noqa: BLE001 - a mutant that raises matches nothing
                continue
            if _agrees_on(got, theirs, tol, name, names, failing):
                matched.append(mutant)
                self._matched_results[mutant.name] = theirs
        return matched


    def _telling(self, probe: Probe, args: tuple) -> list[tuple[Mutant, ModuleProxy]]:
        """The mutants whose edits ``probe(·, *args)`` may run into (``reach.py``): the others
        give the reference's result on these arguments, so they match nothing the reference
        does not. What the probe runs is read off the reference's own calls (memoised)."""
        if self.reach is None or not self.mutants:
            return self.mutants
        reach, reference = self.reach, self.reference

        def calls() -> tuple[str, ...] | None:
            log = AttemptLog(reference.runner)
            try:
                probe(ModuleProxy(log, reference.label), *args)
            except Exception:  # noqa: BLE001 - a run that fails: whatever it ran is unknown
                return None
            found = called_names(log.calls, reach.graph)
            return None if found is None else tuple(sorted(found))

        called = self._trusted("reference calls", self._key("calls", probe, args), calls,
                               read_only=True)
        names = None if called is None else frozenset(called)
        return [(m, proxy) for m, proxy in self.mutants if reach.may_differ(m.name, names)]


def _agrees_on(got: Any, theirs: Any, tol: Tolerance, name: str,
               names: tuple[str, ...] | None, failing: set[str]) -> bool:
    """Whether ``theirs`` matches ``got`` on every failing leaf it has (and has at least one).
    A mutant is dismissed at its first differing leaf."""
    compared = [c for c in compare_tree(got, theirs, tol, name, names, None, only=failing,
                                        stop_at_failure=True, verdicts=True)
                if c.name in failing]
    return bool(compared) and all(c.ok for c in compared) and _same_precision(
        got, theirs, name, names, failing)


def _same_precision(got: Any, theirs: Any, name: str, names: tuple[str, ...] | None,
                    failing: set[str]) -> bool:
    """Whether no failing float leaf is less precise than the mistake's: a float32 result is
    not a float64 mistake's, however close its values (the precision is the slip); a float64
    result may be a float32 mistake's (computing in more precision is no slip)."""
    mine = dict(flatten(got, name, names))
    other = dict(flatten(theirs, name, names))
    for leaf in failing:
        a, b = to_numpy(mine.get(leaf)), to_numpy(other.get(leaf))
        if a is not None and b is not None and a.dtype.kind in "fc" and b.dtype.kind in "fc" \
                and a.dtype.itemsize < b.dtype.itemsize:
            return False
    return True


def _error_signature(message: str) -> str:
    """``Type: text`` of an exception message, without the module of the type (a sandboxed
    worker qualifies non-builtin types) and without the student's traceback lines."""
    first = message.splitlines()[0] if message else ""
    kind, _, text = first.partition(": ")
    return f"{kind.rsplit('.', 1)[-1]}: {text}"


def failure_lines(name: str, failed: list[Comparison]) -> list[str]:
    """One line per failed leaf; leaves that are None (template placeholders) share one line."""
    nones = [c for c in failed if c.problem == "none"]
    if len(nones) < 2:
        return [c.message() for c in failed]
    parts = [c.name[len(name):] if c.name.startswith(name) and len(c.name) > len(name)
             else c.name for c in nones]
    together = f"{name}: {', '.join(parts)} are None — {UNFINISHED.removeprefix('returns None — ')}"
    return [together] + [c.message() for c in failed if c.problem != "none"]


def check_arguments_unchanged(calls: list, reference: Any = None,
                              names: tuple[str, ...] | None = None) -> None:
    """Fail when a student function changed an argument in place; with the ``reference``
    module, the failure names the argument by its parameter name, and the returned entry
    written into it when one is (``diagnosis/aliasing.py``; ``names``: the check's names of
    the returned entries)."""
    for record in calls:
        for position, (before, after) in enumerate(zip(record.args_before,
                                                       record.result.args_after)):
            path = changed_entry(before, after, f"argument {position + 1}")
            if path:
                message = (f"{record.function} modified its input ({path}) in place; work on "
                           "a copy or build new arrays instead")
                found = None
                if reference is not None:
                    try:
                        found = in_place_diagnosis(
                            record.function, path, parameter_names(reference, record.function),
                            tuple(record.args_before), tuple(record.result.args_after),
                            record.result.value, names)
                    except Exception:  # noqa: BLE001 - no name: the failure says what changed
                        found = None
                if found is None:
                    raise CheckFailure(message)
                raise CheckFailure(message, diagnosis=[found], hint=found.hint)


def _function_of(check: str) -> str:
    """The function a check's name starts with (``rnn_forward with a0 = 0`` → ``rnn_forward``,
    ``clip(gradients, 3.0)`` → ``clip``)."""
    found = re.match(r"[`\s]*([A-Za-z_]\w*)", check)
    return found.group(1) if found else check.split(" ", 1)[0].strip("`:(),")

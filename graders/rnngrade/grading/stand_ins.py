"""Grading a function that calls another lab function, without charging it for that function's
mistakes (the lab2 README: "a test of one function never loses points for a mistake in another").

When a check of ``F`` fails and ``F`` calls another graded function ``G`` of the lab (the course's
``rnn_forward`` calls ``rnn_cell_forward``), the check is run once more with a stand-in for the
submission's ``G``, provided the submission's ``G`` fails on the very calls a correct ``F`` makes:

1. the trusted side runs the same call on the reference and records every call the reference's
   own code makes to ``G`` (arguments and results, plain data; memoised across submissions);
2. the submission's ``G`` is run on those arguments; if it agrees with the recorded results (its
   outputs, a trailing cache aside) it is not the cause and nothing is replaced;
3. otherwise, while ``F`` runs, ``G`` is replaced in the submission's module by a stand-in
   (``rnngrade.harness.worker_helpers.install_stand_in``) that answers the calls the
   submission's own code makes with the recorded results when their arguments agree, and hands
   any other call to the submission's ``G``. A lab may register a differentiable stand-in
   ``stand_in_<G>`` in its helpers (built on torch's own layers, for checks through autograd).

The reference never enters the worker: only its results on the test's inputs do, and only for a
``G`` the submission has already got wrong. A retried check passes only when every recorded call
was answered (the submission's ``F`` really makes those calls); when it still fails, the failure
is ``F``'s own, and its message says ``G`` was replaced.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnngrade.grading.memo import ExpectationMemo
from rnngrade.harness.checks.structure import compare_tree
from rnngrade.harness.checks.tolerance import tolerance_for
from rnngrade.harness.copying import copy_tree
from rnngrade.harness.runner.base import MISSING_FUNCTION, FunctionRef, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import CallRecord, ModuleProxy

Recorded = dict[str, list[list[Any]]]  # callee → [[args, result], ...]


def callees_of(source: str, functions: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """For each graded function of a reference source, the other graded functions it calls by
    name (``{"rnn_forward": {"rnn_cell_forward"}, ...}``; functions that call none are left out).
    """
    tree = ast.parse(source)
    graph = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            called = frozenset(c.func.id for c in ast.walk(node)
                               if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                               and c.func.id in functions and c.func.id != node.name)
            if called:
                graph[node.name] = called
    return graph


class _Snapshots:
    """Copies of the reference's arguments and results as a recording goes, every tensor
    detached from autograd. An array seen before, and unchanged since, gets the same copy: the
    calls of a loop then share their parameters and the previous step's state, and a replay
    sends each of them once (codec references)."""

    def __init__(self) -> None:
        self._arrays: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id → (original, copy)

    def take(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.take(v) for k, v in value.items()}
        if isinstance(value, tuple | list):
            return type(value)(self.take(v) for v in value)
        if type(value) is np.ndarray and not value.dtype.hasobject:
            seen = self._arrays.get(id(value))
            if seen is not None and seen[0] is value and _same_bits(seen[1], value):
                return seen[1]
            copied = value.copy(order="K")
            self._arrays[id(value)] = (value, copied)  # holds ``value``: its id stays its own
            return copied
        if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
            return value.detach().clone()
        return copy_tree(value)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bytes (-0.0 and 0.0 differ, a NaN equals itself)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _outputs(value: Any) -> int | None:
    """How many leading items of a result its checks read: all but a trailing cache (a tuple,
    list or dict after the outputs); None: the whole result."""
    if isinstance(value, tuple) and len(value) > 1 and isinstance(value[-1], tuple | list | dict):
        return len(value) - 1
    return None


def involved(record: CallRecord, graded: frozenset[str]) -> set[str]:
    """The graded functions a logged call ran: the function itself, or those a helper names;
    every graded function for a helper that names none (a lab's own helper)."""
    name = record.function
    if not name.startswith("helper:"):
        return {name} & graded
    named = {a for a in record.args_before if isinstance(a, str)} & graded
    return named or set(graded)


@dataclass
class Use:
    """One callee replaced during a retried check."""

    callee: str
    recorded: int  # calls a correct caller makes
    answered: int = 0  # of those, how many the submission's code made
    reason: str = "gives wrong results"  # what the submission's own callee does on them


@dataclass(eq=False)
class StandIns:
    """A module proxy for the retry of one check: every call through it runs with stand-ins for
    the callees that fail (see the module docstring). ``used``: what was replaced."""

    student: ModuleProxy
    reference: ModuleProxy  # in-process: its runner's module is the reference module
    graph: dict[str, frozenset[str]]
    builtins: frozenset[str] = frozenset()  # callees with a lab stand-in ``stand_in_<name>``
    memo: ExpectationMemo | None = None
    used: dict[str, Use] = field(default_factory=dict)

    # ---------------------------------------------------------------- the proxy's interface
    @property
    def calls(self) -> list[CallRecord]:
        return self.student.calls

    @property
    def runner(self) -> Any:
        return self.student.runner

    @property
    def label(self) -> str:
        return self.student.label

    def has(self, function: str) -> bool:
        return self.student.has(function)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._run(("call", name, args, kwargs),
                             lambda m: getattr(m, name)(*args, **kwargs))

        return call

    def head(self, name: str, n: int, *args: Any, **kwargs: Any) -> Any:
        return self._run(("call", name, args, kwargs), lambda m: m.head(name, n, *args, **kwargs))

    def helper(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._run(("helper", name, args, kwargs), lambda m: m.helper(name, *args, **kwargs))

    def on_cache(self, function: str, before: tuple, producer: str, producer_args: tuple,
                 index: int) -> Any:
        args = (function, before, producer, producer_args, index)
        return self._run(("helper", "on_cache", args, {}), lambda m: m.on_cache(*args))

    # ---------------------------------------------------------------- stand-ins
    @property
    def callees(self) -> frozenset[str]:
        return frozenset().union(*self.graph.values()) if self.graph else frozenset()

    @property
    def complete(self) -> bool:
        """Every call a correct caller makes to a replaced function was answered."""
        return all(use.answered >= use.recorded for use in self.used.values())

    def _run(self, call: tuple, run: Callable[[Any], Any]) -> Any:
        try:
            recorded = self._recorded(call)
        except Exception:  # noqa: BLE001 - a call the reference cannot make (an argument that
            # came from the submission, such as a handle to its cache): nothing to replay
            return run(self.student)
        reasons = {callee: self._fails(callee, calls) for callee, calls in recorded.items()
                   if calls}
        failing = {callee: recorded[callee] for callee, reason in reasons.items() if reason}
        if not failing:
            return run(self.student)
        with self._installed(failing, reasons):
            return run(self.student)

    @contextmanager
    def _installed(self, failing: Recorded, reasons: dict[str, str]) -> Iterator[None]:
        runner = self.student.runner
        try:
            for callee, calls in failing.items():
                if callee in self.builtins:
                    answers = FunctionRef(f"stand_in_{callee}")
                else:
                    tol = tolerance_for(*calls[0][0])
                    answers = FunctionRef("replay", (calls, tol.atol, tol.rtol))
                self.used.setdefault(callee, Use(callee, 0, reason=reasons[callee]))
                runner.call_helper("install_stand_in", (callee, answers))
            yield
        finally:
            try:
                answered = runner.call_helper("remove_stand_ins", ()).value
            except StudentError:  # the worker is gone, and its stand-ins with it
                answered = {}
            for callee, calls in failing.items():
                use = self.used[callee]
                use.recorded += len(calls)
                count = answered.get(callee, 0) if isinstance(answered, dict) else 0
                use.answered += min(int(count), len(calls)) if isinstance(count, int) else 0

    def _recorded(self, call: tuple) -> Recorded:
        """The calls the reference's own code makes to each callee during ``call``."""
        kind, name, args, kwargs = call
        key = None if self.memo is None else self.memo.key(f"stand-in calls {kind} {name}",
                                                           None, args, kwargs)

        def record() -> Recorded:
            return record_calls(self.reference, self.callees, call)

        if self.memo is None:
            return record()
        return self.memo.compute(key, "reference", record, shared=True)  # only read

    def _fails(self, callee: str, calls: list[list[Any]]) -> str:
        """What is wrong with the submission's ``callee`` on the recorded arguments ("" when it
        gives every recorded result)."""
        # The first call on its own: a wrong callee is nearly always wrong on it, and then the
        # others (up to T_x calls of a cell, each maybe a huge result) are never made.
        head = _outputs(calls[0][1])
        for batch in (calls[:1], calls[1:]):
            if batch:
                reason = self._fails_on(callee, batch, head)
                if reason:
                    return reason
        return ""

    def _fails_on(self, callee: str, calls: list[list[Any]], head: int | None) -> str:
        """``_fails`` on a batch of recorded calls, run in the worker in one request."""
        try:
            answered = self.student.runner.call_helper(
                "call_each", (callee, [c[0] for c in calls], head, True)).value
        except StudentError as error:
            return "is missing" if error.kind == MISSING_FUNCTION else "raises an error"
        if not isinstance(answered, list) or len(answered) != len(calls) or not all(
                isinstance(a, list) and len(a) == 2 for a in answered):
            return "gives wrong results"
        got = [value for value, _ in answered]
        for (_, changed), (args, *_) in zip(answered, calls):
            if changed is True and not self._reference_writes(callee, args):
                return "writes into its arguments"
        for value, (args, result, *_) in zip(got, calls):
            want = result[:head] if head is not None else result
            try:
                compared = compare_tree(tuple(value) if isinstance(value, list) and
                                        isinstance(want, tuple) else value, want,
                                        tolerance_for(*args), callee, None, None,
                                        verdicts=True)
            except Exception:  # noqa: BLE001 - whatever came back cannot be compared
                return "gives wrong results"
            if any(not c.ok for c in compared):
                return "gives wrong results"
        return ""

    def _reference_writes(self, callee: str, args: Any) -> bool:
        """Whether the reference's ``callee`` itself writes into its arguments on ``args`` (a
        contract that allows it, such as clipping in place): then the submission's may too."""
        from rnngrade.harness.worker_helpers import arrays_differ

        target = getattr(getattr(self.reference.runner, "module", None), callee, None)
        if target is None or not isinstance(args, tuple | list):
            return True  # cannot tell: an argument write is no reason to replace it
        copied = copy_tree(args)
        try:
            target(*copied)
        except Exception:  # noqa: BLE001 - cannot tell, as above
            return True
        return arrays_differ(args, copied)

    def prefix(self) -> str:
        return f"(checked with {self._replaced('this check')})\n"

    def note(self, caller: str) -> str:
        return (f"`{caller}` was graded with {self._replaced(f'`{caller}`')}: `{caller}` loses "
                "no points for that mistake")

    def _replaced(self, caller: str) -> str:
        """``a correct `G` in place of yours, which gives wrong results on the calls X makes``."""
        uses = list(self.used.values())
        names = ", ".join(f"`{use.callee}`" for use in uses)
        reasons = {use.reason for use in uses}
        why = (f"which {reasons.pop()}" if len(reasons) == 1 else "which " + ", ".join(
            f"`{use.callee}` {use.reason}" for use in uses).replace("which `", "where `", 1))
        return f"a correct {names} in place of yours, {why} on the calls {caller} makes"


def record_calls(reference: ModuleProxy, callees: frozenset[str], call: tuple) -> Recorded:
    """Run ``call`` on the reference and return the calls its own code made to each callee
    (outside the callees themselves: the calls a callee makes are part of its answer)."""
    kind, name, args, kwargs = call
    runner = reference.runner
    if not isinstance(runner, InProcessRunner):
        raise TypeError("calls are recorded on the reference in this process")
    module = runner.module
    found: Recorded = {callee: [] for callee in callees}
    snapshots = _Snapshots()
    inside: list[str] = []  # the recorded call running now: the calls it makes are its own
    originals = {callee: module.__dict__[callee] for callee in callees
                 if callee in module.__dict__}

    def recorder(callee: str, original: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(original)

        def record(*a: Any, **k: Any) -> Any:
            if inside or sys._getframe(1).f_globals is not module.__dict__:
                return original(*a, **k)  # a call of the test's own, or one a callee makes
            bound = snapshots.take(tuple(signature.bind(*a, **k).arguments.values()) if k
                                   else a)
            inside.append(callee)
            try:
                value = original(*a, **k)
            finally:
                inside.pop()
            entry = [bound, snapshots.take(value)]
            slopes = jacobians(original, a, k)
            if slopes is not None:
                entry.append(slopes)
            found[callee].append(entry)
            return value

        return record

    for callee, original in originals.items():
        setattr(module, callee, recorder(callee, original))
    try:
        if kind == "call":
            getattr(reference, name)(*args, **kwargs)
        else:
            reference.helper(name, *args, **kwargs)
    finally:
        for callee, original in originals.items():
            setattr(module, callee, original)
        reference.calls.clear()
    return found


MAX_JACOBIAN_ENTRIES = 2_000_000  # per recorded call; a larger one is left out (values only)


def _real_view(t: Any) -> Any:
    import torch

    return torch.view_as_real(t) if t.is_complex() else t


def jacobians(function: Callable[..., Any], args: tuple, kwargs: dict) -> dict | None:
    """For a call whose tensor arguments take part in autograd: the Jacobian of each output
    tensor with respect to each of those arguments, complex tensors as pairs of reals
    (``{"wrt": [i, ...], "blocks": [[J(out_k, arg_i) for i in wrt] for k]}``), so a replayed
    result can carry the exact derivatives (``worker_helpers._Replay``). None when no argument
    requires a gradient, or when the Jacobians would be too large."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    wrt = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    if not wrt:
        return None
    fixed = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    complex_in = [args[i].is_complex() for i in wrt]

    def real_function(*reals: Any) -> tuple:
        call = list(fixed)
        for i, r, is_complex in zip(wrt, reals, complex_in):
            call[i] = torch.view_as_complex(r) if is_complex else r
        out = function(*call, **kwargs)
        leaves = [out] if isinstance(out, torch.Tensor) else list(out)
        return tuple(_real_view(leaf) for leaf in leaves)

    inputs = tuple(_real_view(args[i].detach()).clone() for i in wrt)
    with torch.no_grad():
        sizes = [leaf.numel() for leaf in real_function(*inputs)]
    if sum(sizes) * sum(x.numel() for x in inputs) > MAX_JACOBIAN_ENTRIES:
        return None
    with torch.enable_grad():
        blocks = torch.autograd.functional.jacobian(real_function, inputs)
    return {"wrt": wrt, "blocks": [[b.detach().clone() for b in row] for row in blocks]}

"""Where inside a function its values go wrong: the student's locals matched with the reference's.

When a check fails, the grader runs the same probe again with the checked function's locals
captured at its return (``rnngrade.harness.capture``, beside the student's code), and runs the
reference the same way on the trusted side. The student's values are matched with the reference's
*by value* (same shape up to squeezing or a transpose, within the check's tolerance), in the order
the reference computes them (``dataflow``). The first reference value that no student value
matches while every value it is computed from is right is where the function goes wrong: named by
the student's own variable of its shape computed at that point when there is one, else in words.
A value the student never stored is taken as right when a value computed from it is right.
With it the diagnosis says which of the function's outputs are still right, and, when one small
edit of the reference's formula for that value gives the student's value (``edits``), what the
mistake is.

Nothing captured is shown as it is: the diagnosis names variables and outputs, never numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rnngrade.diagnosis.dataflow import Flow, flow_of
from rnngrade.diagnosis.edits import edit_diagnosis
from rnngrade.harness.capture import MAX_ELEMENTS, MAX_NAMES, MAX_TOTAL, RETURN
from rnngrade.harness.checks.outputs import listed as _listed
from rnngrade.harness.checks.outputs import output_name, outputs_sentence
from rnngrade.harness.runner.base import CallResult, FunctionRef
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.results.model import Diagnosis, DiagnosisSource

LOCALISED = DiagnosisSource.LOCALISED.value
EVIDENCE = ("your function's own intermediate values, compared with the course's on the same "
            "inputs (check `{check}`)")
_LABEL = re.compile(r"^[A-Za-z_]\w{0,59}(\[(\d{1,3}|'[A-Za-z_]\w{0,39}')\])?$")
_PLAIN = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class CapturingRunner:
    """A runner whose calls run through the ``capture_locals`` helper: each returns as usual,
    and the first capture of ``target``'s locals is kept in ``taken``."""

    runner: Any
    target: str
    taken: dict[str, np.ndarray] | None = None

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, head: int | None = None) -> CallResult:
        return self._through(function, False, args, kwargs or {}, head, timeout)

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None, *,
                    timeout: float | None = None) -> CallResult:
        return self._through(helper, True, args, kwargs or {}, None, timeout)

    def _through(self, name: str, is_helper: bool, args: tuple, kwargs: dict,
                 head: int | None, timeout: float | None) -> CallResult:
        if _has_function_refs((args, kwargs)):
            raise _NotCaptured  # a callable argument: its references would point elsewhere
        result = self.runner.call_helper(
            "capture_locals", (self.target, name, is_helper, tuple(args), dict(kwargs), head),
            {}, timeout=timeout)
        if type(result.value) is not tuple or len(result.value) != 2:
            raise _NotCaptured
        value, taken = result.value
        if self.taken is None:
            self.taken = checked_capture(taken)
        after = result.args_after
        inner = after[3] if type(after) is tuple and len(after) > 3 else None
        return replace(result, value=value,
                       args_after=inner if type(inner) is tuple else tuple(args))

    def has_function(self, function: str) -> bool:
        return bool(self.runner.has_function(function))

    def use_limits(self, limits: Any) -> None:
        """Limits stay as the wrapped runner has them."""

    def load_notes(self) -> list[str]:
        return list(self.runner.load_notes())

    def protections(self) -> dict[str, bool]:
        return dict(self.runner.protections())

    def close(self) -> None:
        """The wrapped runner stays open: it is the check's own."""


class _NotCaptured(Exception):
    """The capture could not run (a callable argument, a malformed answer)."""


def _has_function_refs(value: Any, depth: int = 0) -> bool:
    if isinstance(value, FunctionRef):
        return True
    if depth > 4:
        return False
    if isinstance(value, dict):
        return any(_has_function_refs(v, depth + 1) for v in value.values())
    if isinstance(value, tuple | list):
        return any(_has_function_refs(v, depth + 1) for v in value)
    return False


def checked_capture(taken: Any) -> dict[str, np.ndarray]:
    """What a worker sent as captured locals, kept only as the capture makes them: at most
    ``MAX_NAMES`` float64 arrays under plain labels, within the size caps."""
    kept: dict[str, np.ndarray] = {}
    if type(taken) is not dict:
        return kept
    total = 0
    for label, value in list(taken.items())[:MAX_NAMES]:
        if type(label) is not str or type(value) is not np.ndarray:
            continue
        if not (label == RETURN or _LABEL.match(label)) or value.dtype != np.float64:
            continue
        if value.size > MAX_ELEMENTS or total + value.size > MAX_TOTAL:
            continue
        total += max(1, value.size)
        kept[label] = value
    return kept


def capture(proxy: ModuleProxy, target: str, probe: Callable[..., Any], args: tuple
            ) -> dict[str, np.ndarray]:
    """``probe(proxy, *args)`` again, with ``target``'s locals captured at its return ({}: none
    captured; a failure of the call is no capture either)."""
    runner = CapturingRunner(proxy.runner, target)
    capturing = ModuleProxy(runner, proxy.label)
    capturing.limits = proxy.limits
    try:
        probe(capturing, *args)
    except Exception:  # noqa: BLE001 - the run failed: whatever was captured before stands
        pass
    return runner.taken or {}


# ------------------------------------------------------------------ matching

def _fits(student: np.ndarray, want: np.ndarray) -> np.ndarray | None:
    """``student`` in ``want``'s shape, when equal up to squeezing or a transpose."""
    if student.size != want.size:
        return None
    if student.shape == want.shape:
        return student
    if student.ndim == 2 and student.T.shape == want.shape and want.ndim == 2:
        return student.T
    if np.squeeze(student).shape == np.squeeze(want).shape:
        return student.reshape(want.shape)
    return None


def _matches(student: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> bool:
    fitted = _fits(student, want)
    if fitted is None:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(fitted)) and np.all(np.isfinite(want))
                    and np.all(np.abs(fitted - want) <= atol + rtol * np.abs(want)))


def _distance(student: np.ndarray, want: np.ndarray) -> float:
    fitted = _fits(student, want)
    if fitted is None:
        return float("inf")
    with np.errstate(all="ignore"):
        scale = float(np.linalg.norm(want)) or 1.0
        distance = float(np.linalg.norm(fitted - want)) / scale
    return distance if np.isfinite(distance) else float("inf")


@dataclass
class Located:
    """The first reference value that goes wrong (``node``), its student name (``student``,
    "" when none; ``unsure``: several fit) and the right values it is computed from."""

    node: str
    student: str
    unsure: bool
    deps: list[str]


def first_wrong(flow: Flow, reference: Mapping[str, np.ndarray],
                student: Mapping[str, np.ndarray], outputs_ok: Mapping[str, bool],
                atol: float, rtol: float) -> Located | None:
    """The first value of ``flow`` that goes wrong (see the module docstring), or None."""
    values = {n: reference[n] for n in flow.order if n in reference and n not in flow.params}
    for label in flow.outputs:
        key = RETURN + label
        if key in reference:
            values[label] = reference[key]
    inputs = [v for k, v in reference.items() if k.split("[")[0] in flow.params]
    mine = list(student.items())
    nodes = [n for n in (*flow.order, *flow.outputs) if n in values or n in outputs_ok]
    trivial = {n for n in nodes if n in values and values[n].size < 2 and n not in outputs_ok}
    matched: dict[str, str | None] = {}  # node -> the student label matching it (None: input)
    for n in nodes:
        if n in values and n not in trivial:
            hit = next((label for label, s in mine if _matches(s, values[n], atol, rtol)), None)
            if hit is not None:
                matched[n] = hit
            elif any(_matches(v, values[n], atol, rtol) for v in inputs):
                matched[n] = None
    right = {n for n in nodes if outputs_ok.get(n, n in matched)}
    for n in reversed(nodes):  # a value the student never stored is right if what uses it is
        if n not in right and n not in outputs_ok and any(
                c in right and c not in trivial for c in flow.consumers(n)):
            right.add(n)
    failing = {n for n in nodes if outputs_ok.get(n) is False}
    upstream = set(failing)
    for n in reversed(nodes):
        if any(c in upstream for c in flow.consumers(n)):
            upstream.add(n)
    for n in nodes:
        if n in right or n in trivial or n not in upstream:
            continue
        deps = [d for d in (*flow.params, *flow.order) if d in flow.deps.get(n, set())]
        if not all(d in flow.params or d in right or d in trivial or d not in values
                   for d in deps):
            continue
        if n in flow.outputs:
            return Located(n, "", False, deps)
        name, unsure = _student_name(n, values[n], deps, matched, mine,
                                     values, reference, atol, rtol)
        return Located(n, name, unsure, deps)
    return None


def _student_name(node: str, want: np.ndarray, deps: list[str], matched: dict[str, str | None],
                  mine: list[tuple[str, np.ndarray]], values: Mapping[str, np.ndarray],
                  reference: Mapping[str, np.ndarray], atol: float, rtol: float
                  ) -> tuple[str, bool]:
    """The student's variable for ``node``: one of its shape that matches no reference value
    (nor the reference's value of the same name: ``parameters['ba']`` holding the course's
    ``parameters['ba']`` is an input, right, never what went wrong), computed after the values
    it depends on (by the order of the student's locals)."""

    def right(label: str, s: np.ndarray) -> bool:
        return any(_matches(s, v, atol, rtol) for v in values.values()) or (
            label in reference and _matches(s, reference[label], atol, rtol))

    order = {label: i for i, (label, _) in enumerate(mine)}
    after = max((order[m] for d in deps if (m := matched.get(d)) is not None), default=-1)
    candidates = [(label, s) for label, s in mine
                  if not label.startswith(RETURN) and _fits(s, want) is not None
                  and not right(label, s)]
    later = [(label, s) for label, s in candidates if order[label] > after]
    candidates = later or candidates
    if not candidates:
        # the student's variable of the course's name, in another shape (a sum over the other
        # axis): named, its shape is part of what went wrong
        own = next((s for label, s in mine if label == node), None)
        if own is not None and not right(node, own):
            return node, False
        return "", False
    for label, _ in candidates:
        if label == node:
            return label, False
    best = min(candidates, key=lambda item: _distance(item[1], want))
    return best[0], len(candidates) > 1


# ------------------------------------------------------------------ the sentence

def outputs_status(comparisons: list[Any], check: str, names: tuple[str, ...] | None
                   ) -> dict[str, bool]:
    """{output label: right} from the check's comparisons (labels as the flow's outputs)."""
    status: dict[str, bool] = {}
    for c in comparisons:
        label = c.name
        if names and label in names:
            label = f"[{names.index(label)}]"
        elif label.startswith(check):
            label = label[len(check):]
        else:
            continue
        status[label] = status.get(label, True) and bool(c.ok)
    return status


def diagnosis(function: str, check: str, flow: Flow | None, located: Located | None,
              status: Mapping[str, bool], names: tuple[str, ...] | None,
              student_names: Mapping[str, str]) -> Diagnosis | None:
    """The localisation as a Diagnosis (None: nothing to say)."""
    outputs = outputs_sentence(status, names)
    evidence = EVIDENCE.format(check=check)
    if located is None or flow is None:
        if not outputs:
            return None
        return Diagnosis(f"localised:{function}:outputs", outputs[0].upper() + outputs[1:],
                         function, evidence=evidence, source=LOCALISED)
    deps = [student_names.get(d, d) for d in located.deps]
    because = (f"everything it is computed from ({_listed(deps)}) is right" if deps
               else "it depends on nothing that is wrong")
    if located.node in flow.outputs:
        what = f"`{output_name(located.node, names)}`"
        text = f"{what} is the first value in `{function}` that goes wrong: {because}"
    elif located.student:
        what = f"`{located.student}`"
        if located.unsure:
            what = f"probably {what} (several of your values have its shape)"
        text = f"the first of your values in `{function}` that goes wrong is {what}: {because}"
    else:
        described = flow.words.get(located.node)
        what = (f"the {described}" if described else
                f"the value the course's solution calls `{located.node}`")
        text = (f"the first value in `{function}` that goes wrong is {what} (you keep no "
                f"variable for it): {because}")
    if outputs:
        text += f". {outputs[0].upper() + outputs[1:]}"
    return Diagnosis(f"localised:{function}:{located.node}", text, function, evidence=evidence,
                     source=LOCALISED)


def localise(function: str, check: str, reference_function: Any,
             student: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray],
             comparisons: list[Any], names: tuple[str, ...] | None, atol: float, rtol: float
             ) -> list[Diagnosis]:
    """The localisation of a failed check of ``function`` from both captures, after the one
    edit of the reference's formula for the first wrong value that explains it, if any
    (``diagnosis/edits.py``)."""
    status = outputs_status(comparisons, check, names)
    flow = flow_of(reference_function) if reference_function is not None else None
    located = None
    if flow is not None and student and reference:
        located = first_wrong(flow, reference, student, status, atol, rtol)

    def student_name(label: str) -> str | None:
        """The student's variable holding the reference's value ``label`` (None: none)."""
        want = reference.get(label)
        if want is None or label.startswith(RETURN):
            return None
        return next((mine for mine, s in student.items() if mine == label
                     and _matches(s, want, atol, rtol)), None) or next(
            (mine for mine, s in student.items() if not mine.startswith(RETURN)
             and _PLAIN.match(mine) and _matches(s, want, atol, rtol)), None)

    student_names: dict[str, str] = {}
    if located is not None and flow is not None:
        for d in located.deps:
            if d not in flow.params and (hit := student_name(d)):
                student_names[d] = hit
    found = [diagnosis(function, check, flow, located, status, names, student_names)]
    if located is not None and flow is not None:
        found.insert(0, _edit(function, check, flow, located, student, reference, names,
                              student_name, atol, rtol))
    return [d for d in found if d is not None]


def _edit(function: str, check: str, flow: Flow, located: Located,
          student: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray],
          names: tuple[str, ...] | None, student_name: Callable[[str], str | None],
          atol: float, rtol: float) -> Diagnosis | None:
    """The edit diagnosis of the first wrong value, when the student's value of it is known:
    a returned output, or the one variable localisation names for it."""
    if located.node in flow.outputs:
        mine, shown = student.get(RETURN + located.node), output_name(located.node, names)
    elif located.student and not located.unsure:
        mine, shown = student.get(located.student), located.student
    else:
        return None
    if mine is None:
        return None
    return edit_diagnosis(function, check, flow, located.node, shown, reference, mine,
                          student_name, atol, rtol)


def localise_check(student: ModuleProxy, reference: ModuleProxy, function: str, check: str,
                   probe: Callable[..., Any], args: tuple, reference_args: tuple,
                   comparisons: list[Any], names: tuple[str, ...] | None, atol: float,
                   rtol: float, trusted: Callable[[Callable[[], Any]], Any] | None = None,
                   guard: Callable[[], AbstractContextManager[Any]] = nullcontext
                   ) -> list[Diagnosis]:
    """The localisation of a failed check (``[]`` when there is nothing to say): the probe run
    again on the student with ``function``'s locals captured (inside ``guard``: the caller
    charges that to the grader's time, never the student's), and on the reference (``trusted``:
    how the caller memoises a trusted value)."""
    try:
        with guard():
            mine = capture(student, function, probe, args)
        if not mine:
            theirs: dict[str, np.ndarray] = {}
        else:
            def run() -> dict[str, np.ndarray]:
                return capture(reference, function, probe, reference_args)
            theirs = run() if trusted is None else trusted(run)
        module = getattr(reference.runner, "module", None)
        return localise(function, check, getattr(module, function, None), mine, theirs,
                        comparisons, names, atol, rtol)
    except Exception:  # noqa: BLE001 - a localisation that fails says nothing
        return []

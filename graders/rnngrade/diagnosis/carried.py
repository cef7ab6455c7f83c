"""Carried-value slips: a loop over time that carries its state, but carries the wrong value.

Like ``slips.py``, the slips are made from the reference's own function: its time loop is read
off its source and rewritten one way at a time, on the trusted side. A *carried* variable is one
set before the loop, read by the loop before the loop sets it again (``da_prevt``, ``dc_prevt``
in a backward pass). Where the loop sets it with ``state = value``:

- **Added up instead of replaced.** ``state = value + state``: each step adds to what the step
  before carried, so the carried value sums every step so far.
- **A term added twice.** Where the loop passes ``term + state`` to a step (``da[:, :, t] +
  da_prevt``), ``state = value + term``: the term reaches the step before a second time.

A slip names the student's mistake only when the rewritten reference reproduces every output
the student returns on the case, and differs from the correct value on every failing output
with enough distinct entries to tell (so a case where the slip and the correct code coincide, a
sequence of one step, is no evidence; an output of one entry need only agree).
"""

from __future__ import annotations

import ast
import copy
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rnngrade.diagnosis.rewriting import (
    PerReference,
    definition_of,
    load_rewritten,
    loads,
    reproducing,
)
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

SUMMED = "carried_value_added_up"
TWICE = "term_carried_twice"


@dataclass(frozen=True)
class CarriedSlip:
    """One rewriting of the reference's ``function``: the carried ``state`` set to its new
    value plus ``added`` (``added == state``: added up over the steps)."""

    function: str
    module: types.ModuleType
    state: str
    added: str


def carried_slips_of(reference: types.ModuleType, function: str) -> tuple[CarriedSlip, ...]:
    """The carried-value slips of ``reference``'s ``function`` (none when it has no loop that
    carries a state), kept with the reference module they were built from."""
    return _BUILT.get(reference, function, _slips)


_BUILT: PerReference[CarriedSlip] = PerReference()


def _slips(reference: types.ModuleType, function: str) -> tuple[CarriedSlip, ...]:
    definition = definition_of(reference, function)
    if definition is None:
        return ()
    slips: list[CarriedSlip] = []
    for position, loop in enumerate(definition.body):
        if not isinstance(loop, ast.For):
            continue
        before = {t.id for s in definition.body[:position] if isinstance(s, ast.Assign)
                  for t in s.targets if isinstance(t, ast.Name)}
        for index, statement in enumerate(loop.body):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                continue
            state = statement.targets[0].id
            if state not in before or not _read_before(loop, index, state):
                continue
            for added in [ast.Name(state, ast.Load()), *_fed_with(loop, state)]:
                module = load_rewritten(
                    reference, _added_to(definition, position, index, added), "carried slip")
                if module is not None:
                    slips.append(CarriedSlip(function, module, state, ast.unparse(added)))
    return tuple(slips)


def _read_before(loop: ast.For, index: int, state: str) -> bool:
    """Whether the loop reads ``state`` before its statement ``index`` sets it (a state
    carried from one step to the next), and sets it nowhere else."""
    others = [s for i, s in enumerate(loop.body) if i != index]
    if any(isinstance(n, ast.Name) and n.id == state and isinstance(n.ctx, ast.Store)
           for s in others for n in ast.walk(s)):
        return False
    return any(loads(s, state) for s in loop.body[:index])


def _fed_with(loop: ast.For, state: str) -> list[ast.expr]:
    """The terms the loop adds to ``state`` where it passes it to a call (``term + state``)."""
    terms: list[ast.expr] = []
    for call in (n for n in ast.walk(loop) if isinstance(n, ast.Call)):
        for argument in call.args:
            if not (isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add)):
                continue
            for mine, other in ((argument.right, argument.left),
                                (argument.left, argument.right)):
                if isinstance(mine, ast.Name) and mine.id == state and not loads(other, state) \
                        and ast.unparse(other) not in {ast.unparse(t) for t in terms}:
                    terms.append(other)
    return terms


def _added_to(definition: ast.FunctionDef, position: int, index: int, added: ast.expr
              ) -> ast.FunctionDef:
    rewritten = copy.deepcopy(definition)
    loop = rewritten.body[position]
    assert isinstance(loop, ast.For)
    statement = loop.body[index]
    assert isinstance(statement, ast.Assign)
    statement.value = ast.BinOp(statement.value, ast.Add(), copy.deepcopy(added))
    return rewritten


def explain_carried(slips: tuple[CarriedSlip, ...], run: Callable[[CarriedSlip], Any],
                    got: Any, want: Any, failing: list[str], tol: Tolerance, name: str,
                    names: tuple[str, ...] | None) -> list[Diagnosis]:
    """The slip that reproduces the student's values on this case (see the module docstring):
    ``run(slip)`` is the check's result with the slipped reference (None: it failed)."""
    slip = next(reproducing(slips, run, got, want, failing, tol, name, names), None)
    return [] if slip is None else [_diagnosis(slip)]


def _diagnosis(slip: CarriedSlip) -> Diagnosis:
    if slip.added == slip.state:
        return Diagnosis(
            SUMMED, f"in `{slip.function}`, the value the course's solution calls "
            f"`{slip.state}` is added up over the steps: each step adds its new value to the "
            "one carried from the step before instead of replacing it", slip.function,
            hint=f"Each step must pass on only the `{slip.state}` it computed: assign it (=) "
            "instead of adding it to the value it received.",
            evidence=f"your results equal the course's solution's with `{slip.state} = ... + "
            f"{slip.state}` in its loop", source=STRUCTURAL)
    return Diagnosis(
        TWICE, f"in `{slip.function}`, `{slip.added}` is added twice: once to what each step "
        f"receives, and again to the `{slip.state}` it passes on", slip.function,
        hint=f"`{slip.added}` enters each step once, where the step receives it; the value a "
        "step passes on must be only what the step computed.",
        evidence=f"your results equal the course's solution's with `{slip.added}` added to "
        f"`{slip.state}` as well", source=STRUCTURAL)

"""Sequence slips: a loop over time that forgets to carry a state, or to add up a gradient.

The slips are made from the reference's own function, never from a list of known mistakes: its
time loop is read off its source and rewritten one way at a time, on the trusted side.

- **A state not carried.** A variable set before the loop and read by the loop before the loop
  sets it again (``c_next`` in ``lstm_forward``, ``da_prevt`` in ``rnn_backward``) is read as its
  initial value at every step instead (``np.zeros_like(a0)``), while the other states are carried.
  A state that starts from a parameter (``a_prev = a0``) is left out: "every step starts from
  a0" is the structural note ``fed_a0_every_step`` and the lab's known mistakes.
- **A final state one step early.** A state the function returns after the loop is returned as
  it was when the last step began (``lstm_layer``'s ``(h, c)``), or the list the loop appends
  each step's state to is read one entry early (``hs[-2]`` for ``hs[-1]``).
- **A sum not accumulated.** Every ``total += term`` inside the loop becomes ``total = term``:
  only the step processed last is left in the total.
- **A sum never added to.** Every ``total += term`` inside the loop is left out: the totals are
  returned as they were initialised (the zeros ``np.zeros`` made), though the loop computes
  every step's contribution.
- **An update left out.** An in-place update of the loop other than a sum (``dlogits *=
  scale``) is left out.
- **Another value collected.** What the loop appends at each step (``outputs.append(h)``) is
  another of the names the loop sets (``c``).
- **Two arguments swapped.** A call of another of the module's functions inside the loop gets
  two of its positional arguments in each other's place (``lstm_cell_backward(dc, da, cache)``).

A slip names the student's mistake only when the rewritten reference reproduces the student's
values on the case: for a state, an update left out, another value collected or swapped
arguments, every output it returns; for a sum, every
failing output (the sums are independent of one another, so a student may overwrite some and
add up the rest), each of them informative (a sum never added to: each correct one informative
and the student's the initial value exactly) and different from the correct value, so a case
where the slip and the correct code coincide (a sequence of one step, a contribution that is
zero) is no evidence.
"""

from __future__ import annotations

import ast
import copy
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnngrade.diagnosis.rewriting import (
    PerReference,
    close,
    definition_of,
    load_rewritten,
    loads,
)
from rnngrade.diagnosis.structural import LAST_STEP_EARLY, float_leaves
from rnngrade.harness.checks.evidence import informative
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

NOT_CARRIED = "state_not_carried"
NOT_ACCUMULATED = "sum_not_accumulated"
NEVER_ADDED = "sum_never_added_to"
SWAPPED = "arguments_swapped"
UPDATE_LEFT_OUT = "update_left_out"
COLLECTS_ANOTHER = "collects_another_value"


@dataclass(frozen=True)
class Slip:
    """One rewriting of the reference's ``function``: ``state`` is the variable not carried
    (with ``initial``, its value before the loop, and ``carried``, the states still carried);
    "" for the sums not accumulated (``totals``: their variables) and for the final states
    returned one step early (``early``: those states)."""

    function: str
    module: types.ModuleType
    state: str = ""
    initial: str = ""
    carried: tuple[str, ...] = ()
    totals: tuple[str, ...] = ()
    early: tuple[str, ...] = ()  # states returned as they were before the last step
    never_added: bool = False  # ``totals`` are never added to (else: overwritten)
    swapped: tuple[str, str, str] = ("", "", "")  # (callee, its two parameters swapped)
    dropped: str = ""  # an in-place update of the loop left out (``dlogits *= scale``)
    collected: tuple[str, str] = ("", "")  # (what the loop appends, what is appended instead)
    listed: str = ""  # a list the loop appends to, whose last entry is returned one step early


def slips_of(reference: types.ModuleType, function: str) -> tuple[Slip, ...]:
    """The slips of ``reference``'s ``function``: of each loop in its body that carries a
    state or adds to a sum (none when it has no such loop). Kept with the reference module
    they were built from (a lab's assets hold it; new assets, new module, built anew)."""
    return _BUILT.get(reference, function, _slips)


_BUILT: PerReference[Slip] = PerReference()


def _slips(reference: types.ModuleType, function: str) -> tuple[Slip, ...]:
    definition = definition_of(reference, function)
    if definition is None:
        return ()
    parameters = {a.arg for a in (*definition.args.posonlyargs, *definition.args.args,
                                  *definition.args.kwonlyargs)}
    slips: list[Slip] = []
    for position, statement in enumerate(definition.body):
        if not isinstance(statement, ast.For):
            continue
        initial = _initial_values(definition.body[:position])
        states = [v for v in initial if _carried(statement, v)]
        for state in states:
            start = initial[state]
            if isinstance(start, ast.Name) and start.id in parameters:
                continue  # a state that starts from a parameter: "fed a0"
            rewritten = _not_carried(definition, position, state, initial[state])
            module = load_rewritten(reference, rewritten, "slip")
            if module is not None:
                slips.append(Slip(function, module, state, ast.unparse(initial[state]),
                                  tuple(s for s in states if s != state)))
        returned = [v for v in states if any(
            loads(r, v) for r in definition.body[position + 1:] if isinstance(r, ast.Return))]
        if returned:
            module = load_rewritten(
                reference, _returned_early(definition, position, returned), "slip")
            if module is not None:
                slips.append(Slip(function, module, early=tuple(returned)))
        for listed in _last_entries_returned(definition, position):
            module = load_rewritten(reference, _entry_early(definition, position, listed), "slip")
            if module is not None:
                slips.append(Slip(function, module, listed=listed))
        slips += _sums_and_calls(reference, definition, position)
    return tuple(slips)


def _sums_and_calls(reference: types.ModuleType, definition: ast.FunctionDef,
                    position: int) -> list[Slip]:
    """The slips of the loop at ``position``: its sums overwritten and never added to, and
    each pair of arguments of its calls swapped."""
    loop = definition.body[position]
    assert isinstance(loop, ast.For)
    slips: list[Slip] = []
    totals = _accumulated(loop)
    if totals:
        for never in (False, True):
            module = load_rewritten(
                reference, _not_accumulated(definition, position, never), "slip")
            if module is not None:
                slips.append(Slip(definition.name, module, totals=totals, never_added=never))
    passed = {a.arg for a in (*definition.args.posonlyargs, *definition.args.args,
                              *definition.args.kwonlyargs)}
    for index, update in enumerate(_updates(loop)):
        module = load_rewritten(reference, _without_update(definition, position, index), "slip")
        if module is not None:
            slips.append(Slip(definition.name, module, dropped=ast.unparse(update)))
    for index, kept, other in _collected(loop):
        module = load_rewritten(reference, _collecting(definition, position, index, other), "slip")
        if module is not None:
            slips.append(Slip(definition.name, module, collected=(kept, other)))
    for call, i, j in _swappable(loop, reference, passed):
        module = load_rewritten(reference, _swapped(definition, position, call, i, j), "slip")
        callee = _parameters(reference, call)
        if module is not None and callee is not None:
            slips.append(Slip(definition.name, module, swapped=(call, callee[i], callee[j])))
    return slips


def _updates(loop: ast.For) -> list[ast.AugAssign]:
    """The loop's in-place updates other than sums (``x *= k``, ``x -= y``, ``x /= k``)."""
    return [n for n in ast.walk(loop)
            if isinstance(n, ast.AugAssign) and not isinstance(n.op, ast.Add)]


class _Drop(ast.NodeTransformer):
    def __init__(self, index: int) -> None:
        self.index, self.seen = index, -1

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.op, ast.Add):
            return node
        self.seen += 1
        return ast.copy_location(ast.Pass(), node) if self.seen == self.index else node


def _without_update(definition: ast.FunctionDef, position: int, index: int
                    ) -> ast.FunctionDef:
    """``definition`` whose loop leaves out its ``index``-th update (``_updates``' order)."""
    rewritten = copy.deepcopy(definition)
    rewritten.body[position] = _Drop(index).visit(rewritten.body[position])
    return rewritten


def _appends(loop: ast.For) -> list[ast.Call]:
    """The loop's ``xs.append(name)`` calls, in source order."""
    return [n for n in ast.walk(loop) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
            and len(n.args) == 1 and isinstance(n.args[0], ast.Name)]


def _collected(loop: ast.For) -> list[tuple[int, str, str]]:
    """(index, name, other) for each value the loop appends and each other name the loop sets
    (the cell state collected where the hidden state belongs)."""
    found = []
    stored = sorted({n.id for n in ast.walk(loop) if isinstance(n, ast.Name)
                     and isinstance(n.ctx, ast.Store)} - {_target(loop)})
    for index, call in enumerate(_appends(loop)):
        kept = call.args[0]
        assert isinstance(kept, ast.Name)
        found += [(index, kept.id, other) for other in stored if other != kept.id]
    return found


def _target(loop: ast.For) -> str:
    return loop.target.id if isinstance(loop.target, ast.Name) else ""


def _collecting(definition: ast.FunctionDef, position: int, index: int, other: str
                ) -> ast.FunctionDef:
    """``definition`` whose loop appends ``other`` in its ``index``-th append."""
    rewritten = copy.deepcopy(definition)
    loop = rewritten.body[position]
    assert isinstance(loop, ast.For)
    _appends(loop)[index].args[0] = ast.Name(other, ast.Load())
    return rewritten


def _calls(loop: ast.For) -> list[ast.Call]:
    """The calls by plain name in the loop, in source order."""
    return [n for n in ast.walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _parameters(reference: types.ModuleType, name: str) -> list[str] | None:
    """The positional parameter names of the module's own function ``name`` (read off the
    reference's source; None when it is not one of its functions)."""
    definition = definition_of(reference, name)
    if definition is None:
        return None
    return [a.arg for a in (*definition.args.posonlyargs, *definition.args.args)]


def _swappable(loop: ast.For, reference: types.ModuleType, passed: set[str]
               ) -> list[tuple[str, int, int]]:
    """(callee, i, j) for each pair of positional arguments of a call of the module's own
    functions in the loop (the first such call of each callee), less the arguments the loop
    passes on as it received them (``passed``: the function's parameters, such as the weights,
    the same at every step)."""
    found: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    for call in _calls(loop):
        assert isinstance(call.func, ast.Name)
        name = call.func.id
        if name in seen or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        seen.add(name)
        parameters = _parameters(reference, name)
        if parameters is None or len(call.args) > len(parameters):
            continue
        moving = [i for i, a in enumerate(call.args)
                  if not (isinstance(a, ast.Name) and a.id in passed)]
        found += [(name, i, j) for k, i in enumerate(moving) for j in moving[k + 1:]]
    return found


def _swapped(definition: ast.FunctionDef, position: int, callee: str, i: int, j: int
             ) -> ast.FunctionDef:
    """``definition`` whose loop calls ``callee`` with its arguments ``i`` and ``j`` swapped."""
    rewritten = copy.deepcopy(definition)
    loop = rewritten.body[position]
    assert isinstance(loop, ast.For)
    for call in _calls(loop):
        assert isinstance(call.func, ast.Name)
        if call.func.id == callee:
            call.args[i], call.args[j] = call.args[j], call.args[i]
            break
    return rewritten


def _initial_values(statements: list[ast.stmt]) -> dict[str, ast.expr]:
    """``name = value`` set by the statements before the loop (the last one wins)."""
    values: dict[str, ast.expr] = {}
    for statement in statements:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Name):
            values[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(target.elts) == len(value.elts):  # h, c = h0, c0
            for name, item in zip(target.elts, value.elts):
                if isinstance(name, ast.Name):
                    values[name.id] = item
    return values


def _stores(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(node))


def _carried(loop: ast.For, name: str) -> bool:
    """Whether the loop reads ``name`` before it sets it, and sets it (a state)."""
    for statement in loop.body:
        if _stores(statement, name):
            return loads(statement, name)
        if loads(statement, name):
            return any(_stores(s, name) for s in loop.body)
    return False


class _Replace(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.value)
        return node


def _not_carried(definition: ast.FunctionDef, position: int, state: str,
                 initial: ast.expr) -> ast.FunctionDef:
    """``definition`` whose loop reads ``state``'s initial value where it reads ``state``
    before setting it."""
    rewritten = copy.deepcopy(definition)
    loop = rewritten.body[position]
    assert isinstance(loop, ast.For)
    body = []
    reading = True
    for statement in loop.body:
        if reading:
            sets = _stores(statement, state)
            statement = _Replace(state, initial).visit(statement)
            reading = not sets
        body.append(statement)
    loop.body = body
    return rewritten


def _returned_early(definition: ast.FunctionDef, position: int, states: list[str]
                    ) -> ast.FunctionDef:
    """``definition`` that returns ``states`` as they were when the last step began."""
    rewritten = copy.deepcopy(definition)
    loop = rewritten.body[position]
    assert isinstance(loop, ast.For)
    kept = {v: f"_rnngrade_before_{v}" for v in states}
    loop.body = [ast.Assign(targets=[ast.Name(kept[v], ast.Store())], value=ast.Name(v, ast.Load()))
                 for v in states] + loop.body
    for i in range(position + 1, len(rewritten.body)):
        if isinstance(rewritten.body[i], ast.Return):
            statement = rewritten.body[i]
            for v in states:
                statement = _Replace(v, ast.Name(kept[v], ast.Load())).visit(statement)
            rewritten.body[i] = statement
    return rewritten


def _is_last(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is ``name[-1]``."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == name and isinstance(node.slice, ast.UnaryOp)
            and isinstance(node.slice.op, ast.USub) and isinstance(node.slice.operand, ast.Constant)
            and node.slice.operand.value == 1)


def _last_entries_returned(definition: ast.FunctionDef, position: int) -> list[str]:
    """The lists the loop at ``position`` appends to whose last entry (``hs[-1]``) a return
    after the loop returns: the final state kept as the list's last entry."""
    loop = definition.body[position]
    assert isinstance(loop, ast.For)
    appended = {n.func.value.id for n in ast.walk(loop) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
                and isinstance(n.func.value, ast.Name)}
    returns = [r for r in definition.body[position + 1:] if isinstance(r, ast.Return)]
    return sorted(name for name in appended
                  if any(_is_last(n, name) for r in returns for n in ast.walk(r)))


class _EntryEarly(ast.NodeTransformer):
    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if _is_last(node, self.name):
            return ast.copy_location(ast.Subscript(
                ast.Name(self.name, ast.Load()),
                ast.UnaryOp(ast.USub(), ast.Constant(2)), ast.Load()), node)
        return self.generic_visit(node)


def _entry_early(definition: ast.FunctionDef, position: int, name: str) -> ast.FunctionDef:
    """``definition`` whose returns after the loop at ``position`` return ``name[-2]`` where
    they return ``name[-1]``."""
    rewritten = copy.deepcopy(definition)
    for i in range(position + 1, len(rewritten.body)):
        if isinstance(rewritten.body[i], ast.Return):
            rewritten.body[i] = _EntryEarly(name).visit(rewritten.body[i])
    return rewritten


def _accumulated(loop: ast.For) -> tuple[str, ...]:
    """The variables the loop adds to with ``+=`` (``totals[name]`` as ``totals``)."""
    names = []
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            target = node.target
            while isinstance(target, ast.Subscript):
                target = target.value  # type: ignore[assignment]
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    return tuple(names)


class _Overwrite(ast.NodeTransformer):
    def __init__(self, never: bool) -> None:
        self.never = never

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.op, ast.Add):
            if self.never:
                return ast.copy_location(ast.Pass(), node)
            return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
        return node


def _not_accumulated(definition: ast.FunctionDef, position: int, never: bool = False
                     ) -> ast.FunctionDef:
    """``definition`` whose loop assigns each step's term to its total (``never``: adds
    nothing to it)."""
    rewritten = copy.deepcopy(definition)
    rewritten.body[position] = _Overwrite(never).visit(rewritten.body[position])
    return rewritten


# ------------------------------------------------------------------ naming

def _short(leaf: str) -> str:
    match = re.search(r"\['([^']+)'\]$", leaf)
    return match.group(1) if match else leaf


def explain_slips(slips: tuple[Slip, ...], run: Callable[[Slip], Any], got: Any, want: Any,
                  failing: list[str], tol: Tolerance, name: str,
                  names: tuple[str, ...] | None) -> list[Diagnosis]:
    """The slip that reproduces the student's values on this case (see the module docstring):
    ``run(slip)`` is the check's result with the slipped reference (None: it failed)."""
    if not slips or not failing:
        return []
    leaves_want = float_leaves(want, name, names)
    leaves_got = float_leaves(got, name, names, {k: v.shape for k, v in leaves_want.items()})
    if any(leaf not in leaves_got or leaf not in leaves_want for leaf in failing):
        return []
    telling = [leaf for leaf in failing if informative(leaves_want[leaf], tol.atol)]
    if not telling:
        return []
    overwritten: dict[tuple[str, ...], dict[str, np.ndarray]] = {}
    for slip in slips:
        whole = bool(slip.state or slip.early or slip.swapped[0] or slip.dropped
                     or slip.collected[0] or slip.listed)
        if not whole and len(telling) < len(failing):
            continue  # a sum's slip speaks of each failing sum: each must be informative
        result = run(slip)
        if result is None:
            continue  # the slip fails on these inputs: it explains nothing
        theirs = float_leaves(result, name, names)
        if slip.totals and not slip.never_added:
            overwritten[slip.totals] = theirs
        if not all(leaf in theirs and close(leaves_got[leaf], theirs[leaf], tol)
                   and not close(theirs[leaf], leaves_want[leaf], tol) for leaf in failing):
            continue
        last = overwritten.get(slip.totals) if slip.never_added else None
        if last is not None and all(leaf in last and close(leaves_got[leaf], last[leaf], tol)
                                    for leaf in failing):
            continue  # the last step's contribution is zero here: overwritten or never added?
        if not all(slip.never_added or informative(theirs[leaf], tol.atol)
                   for leaf in telling):
            continue
        if whole and not all(k in theirs and close(g, theirs[k], tol)
                             for k, g in leaves_got.items()):
            continue  # a state not carried changes what it changes: all of it must agree
        return [_diagnosis(slip, [_short(leaf) for leaf in failing])]
    return []


def _listed(items: list[str]) -> str:
    quoted = [f"`{i}`" for i in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _diagnosis(slip: Slip, wrong: list[str]) -> Diagnosis:
    if slip.state:
        carried = (f", while {_listed(list(slip.carried))} "
                   f"{'is' if len(slip.carried) == 1 else 'are'} carried" if slip.carried else "")
        gradient = slip.state.startswith("d")
        what = "passed back from one step to the one before" if gradient else \
            "carried from one step to the next"
        return Diagnosis(
            NOT_CARRIED, f"in `{slip.function}`, the state the course's solution calls "
            f"`{slip.state}` is not {what}: every step starts it again from `{slip.initial}`"
            f"{carried}", slip.function,
            hint=f"Each step must receive the `{slip.state}` the previous step produced. Check "
            "what your loop passes to each step and whether it keeps what the step returns "
            "(a fresh array built inside the loop, or a result assigned to another name).",
            evidence=f"your {_listed(wrong)} equal{'s' if len(wrong) == 1 else ''} the course's "
            f"solution's with `{slip.state}` reset to `{slip.initial}` at every step",
            source=STRUCTURAL)
    if slip.early:
        states = _listed(list(slip.early))
        return Diagnosis(
            LAST_STEP_EARLY, f"`{slip.function}` returns the final {states} as they were before "
            "the last step", slip.function,
            hint="The state to return is the one the last step produced: check what you keep "
            "after the loop (a copy taken at the start of each step, or an index such as "
            "[-2]).",
            evidence=f"your results equal the course's solution's with {states} returned as "
            "they were when the last step began", source=STRUCTURAL)
    if slip.listed:
        return Diagnosis(
            LAST_STEP_EARLY, f"in `{slip.function}`, the state after the last step but one is "
            f"returned (the entry before the last of the list the course's "
            f"solution calls `{slip.listed}`)", slip.function,
            hint="Your final state is the one before the last step: check which step's state "
            "you return after the loop (the loop's last entry is [-1]).",
            evidence=f"your results equal the course's solution's returning `{slip.listed}[-2]` "
            f"where it returns `{slip.listed}[-1]`", source=STRUCTURAL)
    verb = "is" if len(wrong) == 1 else "are"
    if slip.collected[0]:
        kept, other = slip.collected
        return Diagnosis(
            COLLECTS_ANOTHER, f"in `{slip.function}`, the loop collects `{other}` at each step "
            f"where the course's solution collects `{kept}`", slip.function,
            hint="Check which of the step's values you keep for the result: the function "
            "promises one of them, and the other has the same shape.",
            evidence=f"your results equal the course's solution's collecting `{other}` instead "
            f"of `{kept}`", source=STRUCTURAL)
    if slip.dropped:
        return Diagnosis(
            UPDATE_LEFT_OUT, f"in `{slip.function}`, the loop leaves out the step the course's "
            f"solution writes `{slip.dropped}`", slip.function,
            hint="Compare each step of your loop with the formulas: one update of a value at "
            "every step is missing (a scaling or a correction applied in place).",
            evidence=f"your results equal the course's solution's without `{slip.dropped}`",
            source=STRUCTURAL)
    if slip.swapped[0]:
        callee, first, second = slip.swapped
        return Diagnosis(
            SWAPPED, f"in `{slip.function}`, `{callee}` is called with its arguments "
            f"`{first}` and `{second}` in each other's place", slip.function,
            hint=f"Compare the order of the arguments you pass to `{callee}` with the order of "
            "its parameters: two of them have the same shape, so nothing fails, but each "
            "receives the other's value.",
            evidence=f"your results equal the course's solution's with `{first}` and "
            f"`{second}` swapped in its call of `{callee}`", source=STRUCTURAL)
    if slip.never_added:
        return Diagnosis(
            NEVER_ADDED, f"in `{slip.function}`, {_listed(wrong)} {verb} never added to: "
            f"{'it is' if len(wrong) == 1 else 'they are'} returned as initialised, and no "
            "step's contribution reaches the total", slip.function,
            hint="The weights are shared by every time step, so their gradient is the sum of "
            "every step's contribution: inside the loop, add each step's gradient to the total "
            "(+=) that you return.",
            evidence=f"your {_listed(wrong)} equal{'s' if len(wrong) == 1 else ''} "
            f"{'its' if len(wrong) == 1 else 'their'} value before the loop, where the "
            "course's solution adds every step's contribution", source=STRUCTURAL)
    return Diagnosis(
        NOT_ACCUMULATED, f"in `{slip.function}`, {_listed(wrong)} {verb} not summed over the "
        "time steps: each step's contribution replaces the total, so only the step processed "
        "last remains", slip.function,
        hint="The weights are shared by every time step, so their gradient is the sum of every "
        "step's contribution: add each step's gradient to the total (+=) rather than assigning "
        "it (=).",
        evidence=f"your {_listed(wrong)} equal{'s' if len(wrong) == 1 else ''} the contribution "
        "of the last step processed alone", source=STRUCTURAL)

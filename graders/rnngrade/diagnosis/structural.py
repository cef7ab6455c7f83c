"""Structural localisation: where a mistake sits, from which outputs, steps and cases fail.

Used when no known mistake matches. Each rule states its evidence, and speaks only when the
pattern is clean (every step before some point right and every step after it wrong, say); a
mixed picture says nothing. The names a rule reads (the cases that zero the initial or previous
state, a gated cell's gates) are the lab's own, declared in its ``lab.yaml`` (``structure``,
``lab_contract.STRUCTURE``); without them those rules say nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rnngrade.diagnosis.heuristics import describe_wrongness, time_shift
from rnngrade.harness.checks.compare import to_numpy
from rnngrade.harness.checks.evidence import informative
from rnngrade.harness.checks.mistakes import step_agreement
from rnngrade.harness.checks.structure import flatten
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.lab_contract import KEYED_LEAF, NO_STRUCTURE, SINGLE_STEP_CASE, Gate, Structure
from rnngrade.results.model import PASSED, SKIPPED, CaseResult, Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

NOT_CARRIED = "not_carried_across_time"
NOT_CARRIED_BACK = "gradient_not_carried_back"
FED_A0 = "fed_a0_every_step"
OFF_BY_ONE = "off_by_one_step"
RECURRENT_TERM = "recurrent_term"
INITIAL_STATE = "initial_state_unused"
LAST_STEP_EARLY = "last_state_one_step_early"
REVERSED = "time_steps_in_reverse_order"

# A fresh start at step t: the expected leaves of one step run from the initial state on step t's
# input alone, or None when that cannot be computed for this check.
FreshStart = Callable[[int], Mapping[str, np.ndarray] | None]



def _close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def explain_unmatched(got: Any, want: Any, failing: list[str], tol: Tolerance, name: str,
                      names: tuple[str, ...] | None, args: tuple, time_axis: int | None,
                      run_reference: Callable[[tuple], Any], gates: Sequence[Gate] = ()
                      ) -> list[Diagnosis]:
    """The diagnoses of a failed check that no known mistake matches: a structural one when the
    pattern of failures locates the mistake, else the heuristics' shapes of wrongness.

    run_reference(args): the reference's result of the same check on other arguments (memoised
    by the caller), for the fresh-start probe. gates: the lab's declared gates."""
    leaves_want = float_leaves(want, name, names)
    # only the student's leaves that can be compared: a leaf of another shape locates nothing,
    # and converting it could cost as much memory as the student chose to return
    leaves_got = float_leaves(got, name, names, {k: v.shape for k, v in leaves_want.items()})
    located = localise_check(leaves_got, leaves_want, failing, tol.atol, tol.rtol, time_axis,
                             fresh_start(args, time_axis, run_reference,
                                         lambda out: float_leaves(out, name, names)),
                             initial_state_zero(args, leaves_want, failing, time_axis), gates)
    if located is not None:
        return [located]
    early = last_state_early(leaves_got, leaves_want, failing, tol.atol, tol.rtol, args,
                             time_axis, run_reference, lambda out: float_leaves(out, name, names))
    if early is not None:
        return [early]
    return [note for leaf in failing if leaf in leaves_got and leaf in leaves_want
            for note in describe_wrongness(leaves_got[leaf], leaves_want[leaf], tol.atol,
                                           tol.rtol, time_axis, leaf)]


def float_leaves(value: Any, name: str, names: tuple[str, ...] | None,
                 shapes: dict[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    """The numeric leaves of a result by name, as float (or complex) arrays; with ``shapes``,
    only the leaves named there that have that shape (checked before any conversion)."""
    leaves = {}
    for label, leaf in flatten(value, name, names):
        if shapes is not None and (label not in shapes
                                   or tuple(getattr(leaf, "shape", ())) != shapes[label]):
            continue
        array = to_numpy(leaf)
        if array is not None and array.dtype.kind in "biufc":
            leaves[label] = array.astype(np.complex128 if array.dtype.kind == "c"
                                         else np.float64)
    return leaves


def fresh_start(args: tuple, time_axis: int | None, run_reference: Callable[[tuple], Any],
                leaves: Callable[[Any], dict[str, np.ndarray]]) -> FreshStart | None:
    """The reference's outputs for one step started afresh from the initial state, on the input
    of step t: for checks of a sequence whose one argument is indexed by time along
    ``time_axis``; None otherwise."""
    if time_axis is None:
        return None
    sequences = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim > time_axis]
    if len(sequences) != 1 or args[sequences[0]].shape[time_axis] == 1:
        return None
    position = sequences[0]

    def fresh(t: int) -> dict[str, np.ndarray] | None:
        step = np.take(args[position], [t], axis=time_axis)
        try:
            return leaves(run_reference((*args[:position], step, *args[position + 1:])))
        except Exception:  # noqa: BLE001 - no fresh start for this check: no pattern
            return None

    return fresh


def last_state_early(leaves_got: Mapping[str, np.ndarray], leaves_want: Mapping[str, np.ndarray],
                     failing: Sequence[str], atol: float, rtol: float, args: tuple,
                     time_axis: int | None, run_reference: Callable[[tuple], Any],
                     leaves: Callable[[Any], dict[str, np.ndarray]]) -> Diagnosis | None:
    """Every failing output equals the reference's on the sequence without its last step (a
    final state returned one step early), where that differs from the expected value."""
    if time_axis is None or not failing:
        return None
    lengths = sorted({a.shape[time_axis] for a in args
                      if isinstance(a, np.ndarray) and a.ndim > time_axis} - {0, 1, 2})
    for leaf in failing:
        got, want = leaves_got.get(leaf), leaves_want.get(leaf)
        if got is None or want is None or got.shape != want.shape \
                or not informative(want, atol):
            return None
    # the sequence length is the time axis of some argument: each candidate, shortened by one
    for steps in lengths[:2]:
        shorter = tuple(np.take(a, range(steps - 1), axis=time_axis)
                        if isinstance(a, np.ndarray) and a.ndim > time_axis
                        and a.shape[time_axis] == steps else a for a in args)
        try:
            early = leaves(run_reference(shorter))
        except Exception:  # noqa: BLE001 - no shorter run for this check: no pattern
            continue
        if all(leaf in early and _close(leaves_got[leaf], early[leaf], atol, rtol)
               and not _close(early[leaf], leaves_want[leaf], atol, rtol) for leaf in failing):
            break
    else:
        return None
    wrong = ", ".join(_short(leaf) for leaf in failing)
    return Diagnosis(
        LAST_STEP_EARLY, f"{wrong}: the state after the last step but one is returned",
        hint="Your final state is the one before the last step: check which step's state you "
        "return after the loop (the loop's last iteration, or an index such as [-1]).",
        evidence=f"{wrong} equals the expected value for the same sequence without its last "
        "step", source=STRUCTURAL)


def initial_state_zero(args: tuple, leaves: Mapping[str, np.ndarray], failing: Sequence[str],
                       time_axis: int | None) -> bool | None:
    """Whether the initial state of a sequence check is zero: the argument shaped like one step
    of the first failing time-indexed output (None when there is no such argument)."""
    if time_axis is None:
        return None
    for leaf in failing:
        if leaf in leaves and leaves[leaf].ndim > time_axis:
            step = tuple(np.delete(leaves[leaf].shape, time_axis))
            for arg in args:
                array = None if isinstance(arg, dict | list | tuple) else to_numpy(arg)
                if array is not None and array.shape == step:
                    return not np.any(array)
            return None
    return None


def localise_check(leaves_got: Mapping[str, np.ndarray], leaves_want: Mapping[str, np.ndarray],
                   failing: Sequence[str], atol: float, rtol: float,
                   time_axis: int | None, fresh_start: FreshStart | None = None,
                   initial_state_zero: bool | None = None, gates: Sequence[Gate] = ()
                   ) -> Diagnosis | None:
    """A structural diagnosis of one failed check, or None.

    leaves_got / leaves_want: every output leaf (``"a"``, ``"grads['dWf']"``) as arrays;
    failing: the leaves that differ. time_axis: the time axis of the time-indexed leaves.
    initial_state_zero: whether the sequence starts from a zero state (None: unknown). A forward
    claim ("not carried across time", "fed a0") needs a known non-zero initial state: from zero,
    a first step is right whatever the recurrence does. Gradients are the leaves named ``d…``.
    gates: the lab's gates (``structure.gates`` of its lab.yaml), for a gate's path.
    """
    gate = _gate_path(leaves_want, failing, gates)
    if gate is not None:
        return gate
    if time_axis is None:
        return None
    timed = {leaf: (leaves_got[leaf], leaves_want[leaf]) for leaf in failing
             if leaf in leaves_got and leaf in leaves_want
             and leaves_got[leaf].shape == leaves_want[leaf].shape
             and leaves_got[leaf].ndim > time_axis and leaves_got[leaf].shape[time_axis] >= 2}
    ok = {leaf: step_agreement(g, w, time_axis, atol, rtol) for leaf, (g, w) in timed.items()}
    # A claim about carrying across time needs every time-indexed output that fails to fail
    # only from the second step on (forward) or only before the last step (gradients): a wrong
    # first step means the step itself is wrong, wherever the mistake lies.
    forward = [leaf for leaf in timed if not _short(leaf).startswith("d")]
    backward = [leaf for leaf in timed if _short(leaf).startswith("d")]
    carried = initial_state_zero is False and all(ok[leaf][0] is True for leaf in forward)
    carried_back = all(ok[leaf][-1] is True for leaf in backward)
    for leaf, (got, want) in timed.items():
        found = _time_pattern(leaf, got, want, ok[leaf], atol, rtol, time_axis, fresh_start,
                              carried if leaf in forward else carried_back)
        if found is not None:
            return found
    return None


def _gate_path(leaves_want: Mapping[str, np.ndarray], failing: Sequence[str],
               gates: Sequence[Gate]) -> Diagnosis | None:
    """Only the gradients of one gate's parameters fail (keyed leaves such as
    ``grads['dWf']``), with at least three other outputs right."""
    owner = {parameter: gate for gate in gates for parameter in gate.parameters}
    found = {owner.get(m.group(1)) if (m := KEYED_LEAF.search(leaf)) else None
             for leaf in failing}
    if len(found) != 1 or None in found:
        return None
    right = [leaf for leaf in leaves_want if leaf not in failing]
    if len(right) < 3:
        return None
    gate = found.pop()
    assert gate is not None
    wrong = ", ".join(_short(leaf) for leaf in failing)
    return Diagnosis(
        f"{gate.name.split()[0]}_gate_path",
        f"the mistake is on the {gate.name} gate's path",
        hint=f"Only the {gate.name} gate's weight gradients are wrong. Follow that gate "
        f"backwards: its gate gradient {gate.gradient}, and the derivative of its activation.",
        evidence=f"only {wrong} differ; {', '.join(_short(leaf) for leaf in right[:4])}"
        f"{' and the rest' if len(right) > 4 else ''} are right",
        source=STRUCTURAL)


def _short(leaf: str) -> str:
    match = KEYED_LEAF.search(leaf)
    return match.group(1) if match else leaf


def _time_pattern(leaf: str, got: np.ndarray, want: np.ndarray, ok: list[bool | None], atol: float,
                  rtol: float, axis: int, fresh_start: FreshStart | None, clean: bool
                  ) -> Diagnosis | None:
    """clean: the other failing outputs allow a claim about time (see localise_check)."""
    steps = got.shape[axis]
    if not informative(want, atol):
        return None
    shift = time_shift(got, want, atol, rtol, axis)
    if shift:
        return Diagnosis(
            OFF_BY_ONE, f"{_short(leaf)} is off by one time step",
            hint="Check the time index you read from and the one you write to inside your loop.",
            evidence=f"step t of your {_short(leaf)} equals the expected step "
            f"t{'-' if shift == 1 else '+'}1 at every step", source=STRUCTURAL)
    if _reversed(got, want, atol, rtol, axis):
        return Diagnosis(
            REVERSED, f"{_short(leaf)} holds its time steps in reverse order",
            hint="Each step's value is right but stored at the mirrored time index: check the "
            "index you write to inside your loop (a backward loop still writes step t at t).",
            evidence=f"step t of your {_short(leaf)} equals the expected step T-1-t at every "
            "step", source=STRUCTURAL)
    if not clean:
        return None
    if not _short(leaf).startswith("d") and ok[0] and all(s is False for s in ok[1:]):
        if fresh_start is not None and _fed_initial_state(leaf, got, axis, atol, rtol,
                                                          fresh_start, steps):
            return Diagnosis(
                FED_A0, "every step starts from the initial state a0 instead of the previous "
                "step's state",
                hint="Each step must start from the state the previous step produced. Check "
                "which state you pass to the cell inside your loop.",
                evidence=f"the first step of {_short(leaf)} is right, and every later step "
                "equals a fresh start from a0 on that step's input", source=STRUCTURAL)
        return Diagnosis(
            NOT_CARRIED, "the state is not carried correctly from one time step to the next",
            hint="The first step is right, so the cell itself works: check what each step of "
            "your loop receives from the step before it, and what it stores.",
            evidence=f"{_short(leaf)} is right for the first step, wrong from the second "
            "step on", source=STRUCTURAL)
    if _short(leaf).startswith("d") and ok[-1] and all(s is False for s in ok[:-1]):
        return Diagnosis(
            NOT_CARRIED_BACK, "the gradient is not carried back correctly from one time step to "
            "the one before",
            hint="The last step is right, so the cell's backward pass works: check what your "
            "loop passes back from step t+1 to step t (the hidden-state and, in an LSTM, the "
            "cell-state gradient).",
            evidence=f"{_short(leaf)} is right for the last step, wrong for every earlier "
            "one", source=STRUCTURAL)
    return None


def _reversed(got: np.ndarray, want: np.ndarray, atol: float, rtol: float, axis: int) -> bool:
    """``got`` is ``want`` with its steps along ``axis`` in reverse order, where that differs
    from ``want`` at every step but a middle one (a sequence symmetric in time proves
    nothing)."""
    if got.shape != want.shape or got.shape[axis] < 2:
        return False
    flipped = np.flip(want, axis=axis)
    if not _close(got, flipped, atol, rtol):
        return False
    steps = want.shape[axis]
    middle = {steps // 2} if steps % 2 else set()
    return all(not _close(np.take(flipped, t, axis=axis), np.take(want, t, axis=axis), atol, rtol)
               for t in range(steps) if t not in middle)


def _fed_initial_state(leaf: str, got: np.ndarray, axis: int, atol: float, rtol: float,
                       fresh_start: FreshStart, steps: int) -> bool:
    for t in range(1, steps):
        fresh = fresh_start(t)
        if fresh is None or leaf not in fresh:
            return False
        expected = np.take(np.asarray(fresh[leaf], dtype=np.float64), 0, axis=axis)
        if not _close(np.take(got, t, axis=axis), expected, atol, rtol):
            return False
    return True


# ------------------------------------------------------------------ from the cases of one test

def localise_cases(cases: Sequence[CaseResult], timed: bool = True,
                   structure: Structure = NO_STRUCTURE) -> Diagnosis | None:
    """A structural diagnosis from which cases of one test pass: right at T = 1 only (for a
    test whose checks compare sequences along time, ``timed``: elsewhere ``T`` may name a
    temperature; ``lab_contract.SINGLE_STEP_CASE``), or right only in the cases the lab's
    ``structure`` says zero the previous or initial state."""
    no_initial_state = set(structure.initial_state_zeroed)
    no_recurrence = set(structure.previous_state_zeroed)
    ran = [c for c in cases if c.outcome != SKIPPED]
    passed = {c.case for c in ran if c.outcome == PASSED}
    failed = [c for c in ran if c.outcome != PASSED]
    if not passed or not failed or any(c.kind != "check" for c in failed):
        return None
    if timed and all(SINGLE_STEP_CASE.search(case) for case in passed) \
            and not any(SINGLE_STEP_CASE.search(c.case) for c in failed):
        return Diagnosis(
            NOT_CARRIED, "the state or gradient is not carried correctly across time steps",
            hint="A sequence of one step is right, so the cell itself works: check what your "
            "loop carries from one step to the next.",
            evidence="right for T = 1, wrong for every longer sequence", source=STRUCTURAL)
    if passed <= no_initial_state and not any(c.case in no_initial_state for c in failed):
        zero = " or ".join(f"{c.case} = 0" for c in ran if c.outcome == PASSED)
        return Diagnosis(
            INITIAL_STATE, "the initial state is not used correctly",
            hint="Your result is right when the initial state is zero. Check where your loop "
            "starts from: the initial state is given to you as an argument.",
            evidence=f"right with {zero}, wrong in every other case", source=STRUCTURAL)
    if passed <= no_recurrence and not any(c.case in no_recurrence for c in failed):
        zero = " or ".join(f"{c.case} = 0" for c in ran if c.outcome == PASSED)
        return Diagnosis(
            RECURRENT_TERM, "the recurrent term (the previous state's contribution) is wrong",
            hint="Your result is right when the previous state cannot contribute. Look at how "
            "the previous hidden state enters your computation.",
            evidence=f"right with {zero}, wrong in every other case", source=STRUCTURAL)
    return None

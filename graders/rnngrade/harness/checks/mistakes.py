"""Naming a mistake in the public tests, without any code of the reference or of the mistakes.

``fixtures/public/labN_mistakes.npz`` (generated beside the public vectors) holds, per public case,
the outputs that each known mistake produces on that case's inputs. When a public check fails,
the student's result is compared with them; a match names the mistake. Failing that, the pattern
of right and wrong time steps can still locate it ("right for the first step, wrong from the
second on"). Every line states its evidence.

When no known mistake matches, the case's table of edits (``edit_prints``) may: a slip in a formula
that the grader names by one small edit of the reference's formula gets the same sentence here,
read from a sealed row that opens only for outputs equal to that edit's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from rnngrade.harness.checks import edit_prints
from rnngrade.harness.checks.compare import compare, to_numpy
from rnngrade.harness.checks.contract import explain_contract
from rnngrade.harness.checks.structure import compare_tree, flatten
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.harness.checks.vectors import PublicVectors


def fingerprints_path(vectors: Path) -> Path:
    """Where the mistakes' fingerprints of the vectors file ``vectors`` live."""
    return vectors.with_name(f"{vectors.stem}_mistakes.npz")


def _leaves(value: Any, name: str, names: tuple[str, ...] | None) -> list[np.ndarray | None]:
    return [to_numpy(v) for _, v in flatten(value, name, names)]


def _same_leaf(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is not None and b is not None and a.shape == b.shape and a.dtype == b.dtype \
        and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def find_case(vectors: PublicVectors, want: Any, name: str,
              names: tuple[str, ...] | None) -> tuple[str, list[int]] | None:
    """The public case whose stored outputs hold ``want`` (all of it, or some of its outputs),
    and for each leaf of ``want`` the index of the case's leaf it is: the leaf after the previous
    one's when that holds it (a correct output can hold equal leaves, such as one step's
    ``a_next`` and the next step's ``a_prev`` in the caches, which a mistake's output need not),
    else the first that does."""
    wanted = _leaves(want, name, names)
    for case_name in vectors.names():
        stored = _leaves(vectors.case(case_name).outputs, name, None)
        positions: list[int] = []
        for leaf in wanted:
            after = positions[-1] + 1 if positions else 0
            found = after if after < len(stored) and _same_leaf(leaf, stored[after]) else next(
                (i for i, s in enumerate(stored) if _same_leaf(leaf, s)), None)
            if found is None:
                break
            positions.append(found)
        else:
            if positions:
                return case_name, positions
    return None


def known_mistakes(got: Any, want: Any, tol: Tolerance, name: str,
                   names: tuple[str, ...] | None, vectors_path: Path) -> list[str]:
    """Lines naming each known mistake whose outputs on this public case equal ``got`` on
    every leaf (those that fail and those that pass); [] when there are no fingerprints or none
    matches."""
    path = fingerprints_path(vectors_path)
    if not path.exists() or not vectors_path.exists():
        return []
    # read on each failure (a few ms): nothing derived from course files is kept in a module
    vectors, prints = PublicVectors(vectors_path), PublicVectors(path)
    located = find_case(vectors, want, name, names)
    if located is None:
        return []
    case_name, positions = located
    wanted = flatten(want, name, names)
    mine = dict(flatten(got, name, names))
    failing = [(i, label) for i, (label, w) in enumerate(wanted)
               if label not in mine or not compare(mine[label], w, tol, label).ok]
    lines = []
    for entry in prints.names():
        if not entry.startswith(f"{case_name}::") or entry.endswith(f"::{edit_prints.EDITS}"):
            continue
        mistake = prints.case(entry).outputs
        theirs = [v for _, v in flatten(mistake["value"], name, None)]
        # every output, the right ones too: a mistake that changes an output the student has
        # right does not reproduce the student's result (its match on the failing outputs is
        # a coincidence, such as a gradient at zero that several mistakes share)
        if failing and (_equal_throughout(list(mine.items()), theirs, tol) or all(
                label in mine and positions[i] < len(theirs)
                and compare(mine[label], theirs[positions[i]], tol, label).ok
                for i, (label, _) in enumerate(wanted))):
            lines.append(f"{mistake['text']} (your result equals that mistake's on this "
                         f"test's inputs)\nhint: {mistake['hint']}")
    if not lines and failing:
        lines = _edit_lines(prints, vectors, case_name, positions, [i for i, _ in failing],
                            [to_numpy(mine.get(label)) for label, _ in wanted])
    return lines


def _edit_lines(prints: PublicVectors, vectors: PublicVectors, case_name: str,
                positions: list[int], failing: list[int], mine: list[np.ndarray | None]
                ) -> list[str]:
    """The sentence of the one stored edit of this case whose outputs are the student's on
    exactly the failing outputs (``failing``: indices into ``mine``, the student's leaves in
    the order of the expected result; ``positions``: where each is in the case's outputs);
    [] when none, or when rows of different sentences match."""
    entry = f"{case_name}::{edit_prints.EDITS}"
    if entry not in prints.names():
        return []
    want = _leaves(vectors.case(case_name).outputs, "", None)
    failing_leaves = {positions[i] for i in failing}
    by_leaf: dict[int, np.ndarray] = {}
    for i in failing:  # only what the edits can change: numbers (a row checks their size)
        value, expected = mine[i], want[positions[i]] if positions[i] < len(want) else None
        if value is not None and expected is not None and value.dtype.kind in "fiu" \
                and value.size <= edit_prints.MAX_SIZE:
            by_leaf[positions[i]] = value.astype(np.float64)
    texts = {text for row in edit_prints.rows(prints.case(entry).outputs, want)
             if set(row.leaves) == failing_leaves
             and (text := edit_prints.opened(case_name, row, by_leaf, want)) is not None}
    if len(texts) != 1:
        return []
    # a row of a slip of the loop carries its hint after its sentence; a formula's edit none
    text, _, hint = texts.pop().partition("\n")
    if hint:
        return [f"{text} (your result equals the course's solution with this one change to its "
                f"loop, on this test's inputs)\nhint: {hint}"]
    return [f"{text} (your result equals the course's formula with this one change, on this "
            "test's inputs)"]


def _equal_throughout(mine: list[tuple[str, Any]], theirs: list[Any], tol: Tolerance) -> bool:
    """Whether the student's whole result is the mistake's, leaf for leaf in order: how a
    mistake that changes the result's structure (a loop that skips a step returns one cache
    fewer) is recognised, where matching the expected result's leaves cannot be."""
    return len(mine) == len(theirs) and all(
        compare(value, other, tol, label).ok for (label, value), other in zip(mine, theirs))


def step_agreement(got: np.ndarray, want: np.ndarray, axis: int, atol: float,
                   rtol: float) -> list[bool | None]:
    """Per time step along ``axis``: True when the student's step matches the expected one,
    False when most of its entries differ, None in between (a few wrong entries, such as
    padded positions, say nothing about what the loop carries)."""
    agreement: list[bool | None] = []
    for t in range(got.shape[axis]):
        g, w = np.take(got, t, axis=axis), np.take(want, t, axis=axis)
        wrong = np.abs(g - w) > atol + rtol * np.abs(w)
        agreement.append(True if not wrong.any() else (False if wrong.mean() > 0.5 else None))
    return agreement


def time_steps(got: Any, want: Any, tol: Tolerance, name: str,
               names: tuple[str, ...] | None, time_axis: int) -> list[str]:
    """Where along time a sequence output goes wrong: right for the first step and wrong from
    the second on (every failing output alike), or, for a gradient (named ``d…``), right for the
    last step only, locates a mistake in what the loop carries from step to step."""
    steps: dict[str, list[bool | None]] = {}
    mine = dict(flatten(got, name, names))
    for label, w in flatten(want, name, names):
        g, w = to_numpy(mine.get(label)), to_numpy(w)
        if g is None or w is None or g.shape != w.shape or g.ndim <= time_axis \
                or g.shape[time_axis] < 2 or g.dtype.kind not in "fc":
            continue
        ok = step_agreement(g, w, time_axis, tol.atol, tol.rtol)
        if not all(ok):
            steps[label] = ok
    forward = {k: v for k, v in steps.items() if not _short(k).startswith("d")}
    backward = {k: v for k, v in steps.items() if _short(k).startswith("d")}
    if forward and all(ok[0] and all(s is False for s in ok[1:]) for ok in forward.values()):
        label = next(iter(forward))
        return [f"the state is not carried correctly from one time step to the next ({label} "
                "is right for the first step, wrong from the second step on)"]
    if backward and all(ok[-1] and all(s is False for s in ok[:-1]) for ok in backward.values()):
        label = next(iter(backward))
        return [f"the gradient is not carried back correctly from one time step to the one "
                f"before ({label} is right for the last step, wrong for every earlier one)"]
    return []


def _short(label: str) -> str:
    """``grads['dx']`` → ``dx``."""
    return label.rsplit("['", 1)[-1].rstrip("']")


def contract_slips(got: Any, want: Any, tol: Tolerance, name: str,
                   names: tuple[str, ...] | None) -> list[str]:
    """The contract slips (``checks.contract``) that explain every failed output of the check,
    as the grader words them: the function is the first word of the check's name, and outputs
    the check names ``"<check> a_next"`` are called ``a_next``."""
    function = re.match(r"[A-Za-z_]\w*", name)
    if function is None:
        return []
    if names:
        name, names = function.group(0), tuple(n.removeprefix(f"{name} ") for n in names)
    failed = [c for c in compare_tree(got, want, tol, name, names, None) if not c.ok]
    return [slip.public_line() for slip in
            explain_contract(got, want, failed, tol, name, names, function.group(0))]


def explain(got: Any, want: Any, tol: Tolerance, name: str, names: tuple[str, ...] | None,
            vectors_path: Path | None, time_axis: int = -1) -> list[str]:
    """What the public harness says about a failed public check: known mistakes first (those
    the lab's mutants describe, then the slips the grader names by one edit or one rewriting
    of the course's solution), then the contract slips, else where along time the result goes
    wrong. Never raises: a public test must report the student's failure, whatever happens
    here."""
    try:
        lines = known_mistakes(got, want, tol, name, names, vectors_path) if vectors_path else []
        if not lines:
            lines = contract_slips(got, want, tol, name, names)
        if not lines:
            axis = time_axis if time_axis >= 0 else _last_axis(want, name, names)
            lines = time_steps(got, want, tol, name, names, axis) if axis >= 0 else []
        return lines
    except Exception:  # noqa: BLE001 - an explanation is optional, the failure stands
        return []


def _last_axis(want: Any, name: str, names: tuple[str, ...] | None) -> int:
    """The classic layout keeps time last: the last axis of 3-D outputs, else none."""
    leaves = [v for _, v in flatten(want, name, names)]
    if any(type(v).__module__.startswith("torch") for v in leaves):
        return 1  # PyTorch layout: batch first, then time
    dims = {a.ndim for a in _leaves(want, name, names) if a is not None}
    return 2 if 3 in dims else -1

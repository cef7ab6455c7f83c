"""The public tests' table of formula slips: every edit the grader could name, run on the public
inputs, sealed (``rnngrade.harness.checks.edit_prints`` says what is stored and why).

For each function of the reference with formulas (``diagnosis.dataflow``) and each float64 public
case about it (the case runs the function itself, or a chain named ``<function>_of_...``), the
reference's locals are captured on the case; for each value with a formula, every edit the grader's
edit diagnosis tries (``diagnosis.edits.tried_edits``) is compiled into the function in place of
that formula, and the case is run. The rows keep the outputs the edit changes and the grader's
sentence for it, written with the reference's names (the grader writes the student's, which are
the same where the student keeps the course's names); items of a returned tuple, which the grader
names as each check does, get none. An edit whose outputs equal the expected
ones, or another edit's with a different sentence, gets no row: the public side then names
neither, as the grader names no edit when two explain a value.

The same table holds the sequence slips of the case's function (``diagnosis.slips``: its time
loop rewritten one way at a time: a state not carried, a sum never added to, an update left
out, another value collected, two arguments of a call swapped), run on the case: a slip gets a
row only when the grader's own ``explain_slips`` names it on the slip's outputs, and its
sentence carries the grader's hint after a newline (an edit's has none), so the public tests
say what the grader says without shipping the loop.

Float32 cases get no rows: the stored bytes would change from one machine to the next. A table
stores, per element, which of two grids puts the value mid-cell (``halves``); another machine's
float32 result flips that bit when it lands across a quarter-cell boundary, with a probability of
about 4·|δ|/q per element. Measured on the public float32 cases (δ: the float32 result against the
same case computed in float64, a bound for another order of float32 sums; q: the grid a FLOAT32
table would use), δ/q reaches 3.4e-4 and the expected flips per row are 1e-3 to 2.4e-2: times the
rows of the float64 sibling (lab3 cell_backward_small: 1000, lab4 gru_cell_backward_small: 535),
about 10 and 7 changed bits per regeneration, so ``generate --check`` would fail on other
machines. A grid coarse enough to make that rare (q a thousand times larger, about 1 on O(1)
outputs) would let different edits share a cell. Instead each public test checks its float64
case first (``tests/test_public_edits.py`` checks the order): a slip fails there and is named
there, before the float32 case is reached.
"""

from __future__ import annotations

import ast
import copy
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from rnngrade.diagnosis.dataflow import Flow, flow_of
from rnngrade.diagnosis.edits import Edit, quantities, sentence, tried_edits
from rnngrade.diagnosis.localise import output_name
from rnngrade.diagnosis.mutants import SOURCE
from rnngrade.diagnosis.slips import Slip, explain_slips, slips_of
from rnngrade.harness.capture import RETURN, capture_call
from rnngrade.harness.checks import edit_prints
from rnngrade.harness.checks.compare import to_numpy
from rnngrade.harness.checks.structure import flatten
from rnngrade.harness.checks.tolerance import FLOAT64, tolerance_for
from rnngrade.harness.checks.vectors import PublicVectors

Runner = Callable[[Any, tuple], Any]  # (module, case spec) -> the case's outputs


def edit_tables(module: Any, functions: tuple[str, ...], vectors: PublicVectors,
                cases: dict[str, tuple], run: Runner) -> dict[str, dict[str, Any]]:
    """``{"<case>::(edits)": entry}`` for every float64 public case with rows (see the module
    docstring); ``module`` is the reference loaded from its source, restored on return."""
    stored: dict[str, dict[str, Any]] = {}
    for name, spec in cases.items():
        function = _about(spec, functions)
        case = vectors.case(name)
        if function is None or tolerance_for(*case.args) != FLOAT64:
            continue
        labelled = [(label, to_numpy(v)) for label, v in flatten(case.outputs, "", None)]
        want = [w for _, w in labelled if w is not None and w.dtype.kind == "f"]
        if len(want) != len(labelled):
            continue
        labels = [label for label, _ in labelled]
        found = _unique([*_rows(module, function, spec, labels, want, run),
                         *_slip_rows(module, function, spec, labels, want, run)])
        table = edit_prints.pack(name, found, want, FLOAT64.atol, FLOAT64.rtol)
        if table is not None:
            stored[f"{name}::{edit_prints.EDITS}"] = {"function": function, "args": (name,),
                                                      "outputs": table}
    return stored


def _about(spec: tuple, functions: tuple[str, ...]) -> str | None:
    """The lab function a public case is about: the one it calls, or ``f`` of a chain
    ``f_of_…``."""
    called = spec[0] if isinstance(spec[0], str) else getattr(spec[0], "__name__", "")
    return next((f for f in functions if called == f or called.startswith(f"{f}_of_")), None)


Row = tuple[list[int], list[np.ndarray], str]  # (changed leaves, their values, sentence)


def _unique(candidates: list[Row]) -> list[Row]:
    """One row per distinct outputs, and none for outputs that rows of different sentences
    share (the case cannot tell those mistakes apart)."""
    sentences: dict[bytes, set[str]] = {}
    found: dict[bytes, Row] = {}
    for changed, values, text in candidates:
        key = _key(changed, values)
        sentences.setdefault(key, set()).add(text)
        found.setdefault(key, (changed, values, text))
    return [row for key, row in found.items() if len(sentences[key]) == 1]


def _changed(outputs: list[np.ndarray], want: list[np.ndarray]) -> list[int] | None:
    """The leaves ``outputs`` changes (in its own shape and size: a sum over the wrong axis
    with ``keepdims`` is a row too); None when none."""
    changed = [i for i, (g, w) in enumerate(zip(outputs, want)) if not _close(g, w)]
    return changed or None


def _slip_rows(module: Any, function: str, spec: tuple, labels: list[str],
               want: list[np.ndarray], run: Runner) -> list[Row]:
    """The rows of the sequence slips of ``function`` (``diagnosis.slips``: the reference's
    loop rewritten one way at a time) on one case: a slip gets a row only when the grader's
    own rule of evidence names it on the slip's outputs (``explain_slips``: each changed sum
    informative, a state's rewriting reproduced on every output), with the grader's sentence
    and hint (``sentence\nhint``)."""
    rows: list[Row] = []
    slips = slips_of(module, function)
    if not slips:
        return rows
    # the failing outputs in the order the grader's check meets them: the reference's own
    # (the stored case keeps a dict's keys sorted); the sentence lists them so
    reference = run(module, spec)
    order = {label: i for i, (label, _) in enumerate(flatten(reference, "", None))}
    for slip in slips:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outputs = run(slip.module, spec)
        except Exception:  # noqa: BLE001 - a slip that cannot run on this case has no row
            continue
        leaves = {label: to_numpy(v) for label, v in flatten(outputs, "", None)}
        if sorted(leaves) != sorted(labels) or any(
                v is None or v.dtype.kind not in "fiu" or not np.all(np.isfinite(v))
                for v in leaves.values()):
            continue
        values = [np.asarray(leaves[label], dtype=np.float64) for label in labels]
        changed = _changed(values, want)
        if changed is None:
            continue
        failing = sorted((labels[i] for i in changed), key=lambda label: order.get(label, 0))
        named = explain_slips((slip,), _returning(outputs), outputs, reference, failing,
                              FLOAT64, "", None)
        if len(named) == 1:
            rows.append((changed, [values[i] for i in changed],
                         f"{named[0].text}\n{named[0].hint}"))
    return rows


def _returning(outputs: Any) -> Callable[[Slip], Any]:
    """The ``run`` of ``explain_slips`` for a slip already run: its outputs."""
    return lambda _: outputs


def _rows(module: Any, function: str, spec: tuple, labels: list[str], want: list[np.ndarray],
          run: Runner) -> list[Row]:
    """The candidate rows of one case: per edit whose outputs differ from the expected ones,
    the leaves changed (indices in the case's stored order, ``labels``), their values and the
    sentence."""
    original = getattr(module, function, None)
    flow = flow_of(original) if original is not None else None
    source = module.__dict__.get(SOURCE)
    if flow is None or type(source) is not str:
        return []
    definition = next((n for n in ast.parse(source).body
                       if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if definition is None:
        return []
    _, reference = capture_call(original, lambda: run(module, spec))
    if not reference:
        return []

    def names(label: str) -> str | None:
        """The name a student keeping the course's names has for ``label``."""
        return label if label in reference and not label.startswith(RETURN) else None

    found: list[Row] = []
    try:
        for node, edit, pool_text in _edits(flow, reference, names):
            result = _edited_outputs(module, function, definition, flow.formulas[node], edit,
                                     spec, run)
            if result is None or sorted(result) != sorted(labels):
                continue
            outputs = [result[label] for label in labels]
            changed = _changed(outputs, want)
            if changed is not None:
                found.append((changed, [outputs[i] for i in changed], pool_text))
    finally:
        module.__dict__[function] = original
    return found


def _edits(flow: Flow, reference: dict[str, np.ndarray], names: Callable[[str], str | None]
           ) -> Iterator[tuple[str, Edit, str]]:
    """``(node, edit, sentence)`` for each edit the grader would try, node by node."""
    for node in (*flow.order, *flow.outputs):
        formula = flow.formulas.get(node)
        correct = reference.get(RETURN + node) if node in flow.outputs else reference.get(node)
        if formula is None or correct is None or (node in flow.outputs and not node.startswith(
                "['")):
            continue  # a tuple's item: the grader names it as the check does, unknown here
        pool = quantities(flow, node, reference)
        shown = output_name(node, None) if node in flow.outputs else node
        for edit, _ in tried_edits(formula, pool, correct, FLOAT64.atol, FLOAT64.rtol):
            yield node, edit, sentence(edit, shown, names, pool)


def _edited_outputs(module: Any, function: str, definition: ast.FunctionDef,
                    formula: ast.expr, edit: Edit, spec: tuple, run: Runner
                    ) -> dict[str, np.ndarray] | None:
    """The case's outputs, by label, with ``formula`` replaced by the edit's in ``function``
    (compiled into the module's own namespace, so its callers use it too); None when it cannot
    run."""
    edited = _Swap(formula, edit.formula).visit(copy.deepcopy(definition))
    tree = ast.fix_missing_locations(ast.Module([edited], []))
    try:
        code = compile(tree, f"<edit of {function}>", "exec")
        exec(code, module.__dict__)  # the course's own reference, edited
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs = run(module, spec)
    except Exception:  # noqa: BLE001 - an edit that cannot run here has no row
        return None
    leaves = {label: to_numpy(v) for label, v in flatten(outputs, "", None)}
    found = {label: np.asarray(v, dtype=np.float64) for label, v in leaves.items()
             if v is not None and v.dtype.kind in "fiu"}
    if len(found) != len(leaves) or not all(np.all(np.isfinite(v)) for v in found.values()):
        return None
    return found


class _Swap(ast.NodeTransformer):
    """The node at ``target``'s place in the source replaced by ``new``."""

    def __init__(self, target: ast.expr, new: ast.expr) -> None:
        self.place = _place(target)
        self.new = new

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.expr) and _place(node) == self.place:
            return copy.deepcopy(self.new)
        return super().visit(node)


def _place(node: ast.AST) -> tuple[str, int, int, int | None, int | None]:
    return (type(node).__name__, getattr(node, "lineno", -1), getattr(node, "col_offset", -1),
            getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.shape != want.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got - want) <= FLOAT64.atol + FLOAT64.rtol * np.abs(want)))


def _key(changed: list[int], values: list[np.ndarray]) -> bytes:
    """Edits whose changed outputs agree (in shape, and in value to well within the grid) share
    a key."""
    parts = [repr(changed).encode()]
    for value in values:  # in its shape: a transposed or squeezed output is another one
        parts.append(repr(value.shape).encode() + (np.round(value, 6) + 0.0).tobytes())
    return b"|".join(parts)

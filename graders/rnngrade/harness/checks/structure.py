"""Comparing nested results (tuples, lists, dicts of arrays and numbers) leaf by leaf."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import (
    CheckFailure,
    Comparison,
    agrees,
    compare,
    expected_dtype_of,
)
from rnngrade.harness.checks.outputs import outputs_sentence
from rnngrade.harness.checks.tolerance import EXACT, Tolerance, tolerance_for


def flatten(value: Any, name: str, names: tuple[str, ...] | None = None) -> list[tuple[str, Any]]:
    """Leaves of a result with readable names: ``a_next``, ``grads['dWax']``, ``beams[0][1]``."""
    if isinstance(value, tuple | list) and not _is_number_list(value):
        leaves: list[tuple[str, Any]] = []
        for i, item in enumerate(value):
            label = names[i] if names and i < len(names) else f"{name}[{i}]"
            leaves += flatten(item, label)
        return leaves
    if isinstance(value, dict):
        return [leaf for key in value for leaf in flatten(value[key], f"{name}[{key!r}]")]
    return [(name, value)]


def _is_number_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
        for v in value)


def compare_tree(got: Any, want: Any, tol: Tolerance, name: str,
                 names: tuple[str, ...] | None, required: Any,
                 reveal: bool = False, only: set[str] | None = None,
                 stop_at_failure: bool = False, verdicts: bool = False) -> list[Comparison]:
    """Compare two results structurally, leaf by leaf (``only``: compare just the leaves of
    these names; structural differences are reported either way; ``stop_at_failure``: return
    at the first failed comparison of a name in ``only``, which then ends the list;
    ``verdicts``: a comparison of two float arrays carries only its name and ``ok``, for a
    caller that needs no report)."""
    out: list[Comparison] = []
    _walk(got, want, tol, name, names, required, reveal, only,
          only if stop_at_failure and only is not None else set(), out, verdicts)
    return out


def _walk(got: Any, want: Any, tol: Tolerance, name: str, names: tuple[str, ...] | None,
          required: Any, reveal: bool, only: set[str] | None, stop: set[str],
          out: list[Comparison], verdicts: bool = False) -> bool:
    """Append the comparisons of ``got`` against ``want`` to ``out``; True to stop the walk."""
    if isinstance(want, tuple | list) and not _is_number_list(want):
        if not isinstance(got, tuple | list) or _is_number_list(got):
            return _add(out, stop, _structure(
                name, f"expected a {type(want).__name__} of {len(want)} items, got {_kind(got)}",
                tol))
        if len(got) != len(want):
            return _add(out, stop, _structure(
                name, f"returns {len(got)} items, expected {len(want)}", tol))
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            label = names[i] if names and i < len(names) else f"{name}[{i}]"
            if _walk(g, w, tol, label, None, required, reveal, only, stop, out, verdicts):
                return True
        return False
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return _add(out, stop, _structure(
                name, f"expected a dict with keys {sorted(want)}, got {_kind(got)}", tol))
        missing = [k for k in want if k not in got]
        if missing and _add(out, stop, _structure(name, f"missing key(s) {missing}", tol)):
            return True
        for key in want:
            if key in got and _walk(got[key], want[key], tol, f"{name}[{key!r}]", None,
                                    required, reveal, only, stop, out, verdicts):
                return True
        return False
    if only is not None and name not in only:
        return False
    return _add(out, stop, _compare_leaf(got, want, tol, name, required, reveal, verdicts))


def _add(out: list[Comparison], stop: set[str], comparison: Comparison) -> bool:
    out.append(comparison)
    return not comparison.ok and comparison.name in stop


def _compare_leaf(got: Any, want: Any, tol: Tolerance, name: str, required: Any,
                  reveal: bool, verdicts: bool = False) -> Comparison:
    if _is_number_list(want) or isinstance(want, int | np.integer) and not isinstance(want, bool):
        if _is_number_list(want) and isinstance(got, list | tuple) and _is_number_list(list(got)):
            got = list(got)
        leaf_tol = EXACT if all(isinstance(v, int | np.integer) for v in
                                (want if isinstance(want, list) else [want])) else tol
        return compare(np.asarray(got) if isinstance(got, list) else got,
                       np.asarray(want), leaf_tol, name, reveal=reveal)
    if isinstance(want, bool | str) or want is None:
        ok = type(got) is type(want) and got == want
        comparison = Comparison(name, EXACT, ok=ok)
        if not ok:
            comparison.problem = "type"
            # the student's own value (a short string, bool or None) is safe to show
            comparison.detail = f"wrong value (got {got!r:.80})" if type(got) is type(want) else (
                f"expected a {type(want).__name__}, got {_kind(got)}")
            comparison.ratio = float("inf")
        return comparison
    if verdicts:
        ok = agrees(got, want, tol, dtype=required)
        return Comparison(name, tol, ok=ok, ratio=0.0 if ok else float("inf"))
    return compare(got, want, tol, name, dtype=required, reveal=reveal)


def _structure(name: str, detail: str, tol: Tolerance) -> Comparison:
    return Comparison(name, tol, ok=False, problem="structure", detail=detail, ratio=float("inf"))


def _kind(value: Any) -> str:
    if value is None:
        return "None — looks unfinished"
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def assert_outputs(got: Any, want: Any, name: str, *, names: tuple[str, ...] | None = None,
                   tol: Tolerance | None = None, inputs: tuple = (), reveal: bool = True) -> None:
    """Public-test assertion: ``got`` matches ``want`` leaf by leaf, else CheckFailure naming
    every leaf that differs (tolerance from the inputs' dtype unless given)."""
    tol = tol or tolerance_for(*inputs)
    comparisons = compare_tree(got, want, tol, name, names, expected_dtype_of(*inputs), reveal)
    failed = [c for c in comparisons if not c.ok]
    if failed:
        located = outputs_line(comparisons, name, names)
        failure = CheckFailure("\n".join([*(c.message() for c in failed),
                                          *([located] if located else [])]), comparisons)
        failure.observed = (got, want, tol, name, names)  # for naming the mistake, if known
        raise failure


_TOP = re.compile(r"^(\[(?:\d+|'[^']*')\])")


def outputs_line(comparisons: list[Comparison], name: str,
                 names: tuple[str, ...] | None) -> str:
    """"`dc_prev` is wrong; `da_prev`, `dxt` and every weight gradient are right": which of the
    result's outputs (its entries one level down, by the names the check gives them) fail and
    which pass, from the check's own comparisons, so at its tolerance. An output is right only
    when every comparison inside it passed. "" for a result of one output, when none is right,
    or when the result as a whole has the wrong structure (no outputs to tell apart)."""
    status: dict[str, bool] = {}
    for c in comparisons:
        label = _output_label(c.name, name, names)
        if label is None:
            return ""
        status[label] = status.get(label, True) and bool(c.ok)
    # a test that puts its check's name before each output's ("lstm_cell_forward (small)
    # c_next") is read by the output's own name
    shown = tuple(n.removeprefix(f"{name} ") for n in names) if names else names
    return outputs_sentence(status, shown)


def _output_label(leaf: str, name: str, names: tuple[str, ...] | None) -> str | None:
    """The output a comparison's name lies in, as ``[i]`` or ``['key']``; None: the whole
    result."""
    for i, given in enumerate(names or ()):
        if leaf == given or leaf.startswith(f"{given}["):
            return f"[{i}]"
    if leaf.startswith(name):
        top = _TOP.match(leaf[len(name):])
        if top:
            return top.group(1)
    return None

"""In-place writes: a student function that changes an array its caller passed in.

Read off the call itself, never off the student's text: the argument as it was before the call,
as it is after, and what the function returned. The codec keeps one object sent twice in a reply
as one object, so a returned array that *is* the argument comes back as the same object; else
the argument holding exactly the returned values after the call (and not before) tells the same.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rnngrade.harness.checks.compare import to_numpy
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

WRITES_RESULT = "result_written_into_argument"
MODIFIES = "argument_modified_in_place"

_PATH = re.compile(r"^argument (\d+)(.*)$")


def _at(value: Any, rest: str) -> Any:
    """The entry of ``value`` at ``rest`` (``['Wf']``, ``[0]``), None when there is none."""
    for key in re.findall(r"\[('[^']*'|\d+)\]", rest):
        try:
            value = value[key[1:-1]] if key.startswith("'") else value[int(key)]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _returned(value: Any, names: tuple[str, ...] | None) -> list[tuple[str, Any]]:
    """The returned value's entries one level down, with the names the check gives them."""
    if isinstance(value, tuple | list):
        return [(names[i] if names and i < len(names) else f"output {i + 1}", v)
                for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    return [("the result", value)]


def in_place_diagnosis(function: str, path: str, parameters: tuple[str, ...],
                       before: tuple, after: tuple, returned: Any,
                       names: tuple[str, ...] | None) -> Diagnosis | None:
    """The in-place write ``path`` ("argument 3", "argument 4['Wf']") of a call of ``function``
    as a diagnosis: the returned entry written into the argument, when one is; else the change
    itself (None when the path cannot be read)."""
    found = _PATH.match(path)
    if found is None:
        return None
    position, rest = int(found.group(1)) - 1, found.group(2)
    if not 0 <= position < min(len(before), len(after)):
        return None
    label = (parameters[position] if position < len(parameters) else f"argument {position + 1}")
    shown = label + (rest.removesuffix(" added").removesuffix(" removed"))
    was, now = _at(before[position], rest), _at(after[position], rest)
    for entry, value in _returned(returned, names):
        if _same(value, now, was):
            same = value is now
            return Diagnosis(
                WRITES_RESULT, f"`{function}` writes `{entry}` into the array passed as "
                f"`{shown}`: the caller's `{shown}` is changed in place"
                f"{f', and the `{entry}` it returns is that same array' if same else ''}",
                function, hint=f"Build `{entry}` as a new array rather than in `{shown}` (no "
                "`*=`, `+=`, `out=` or slice assignment on an argument): the caller still needs "
                f"`{shown}`, and anything that keeps it (a cache, the previous step of a loop "
                "over time) would otherwise see one array change under it.",
                evidence=f"after the call, `{shown}` holds exactly the `{entry}` you return"
                f"{' (the same array)' if same else ''}, and it held other values before",
                source=STRUCTURAL)
    return Diagnosis(
        MODIFIES, f"`{function}` changes its argument `{shown}` in place", function,
        hint=f"Work on a copy of `{shown}` or build new arrays: the caller still needs the "
        "values it passed.",
        evidence=f"`{shown}` differs after the call from what was passed", source=STRUCTURAL)


def _same(value: Any, now: Any, was: Any) -> bool:
    if now is None:
        return False
    if value is now:
        return True
    a, b, c = to_numpy(value), to_numpy(now), to_numpy(was)
    if a is None or b is None or c is None or a.shape != b.shape or a.dtype.kind not in "fc" \
            or a.size < 2:
        return False
    return bool(np.array_equal(a, b) and not np.array_equal(b, c))


def parameter_names(module: Any, function: str) -> tuple[str, ...]:
    """The parameter names of the reference's ``function`` (trusted code; () when unknown)."""
    target = getattr(module, function, None)
    code = getattr(target, "__code__", None)
    if code is None:
        return ()
    return tuple(code.co_varnames[:code.co_argcount])


"""In-place writes: a student function that changes an array its caller passed in.

Read off the call itself, never off the student's text: the argument as it was before the call,
as it is after, and what the function returned. The codec keeps one object sent twice in a reply
as one object, so a returned array that *is* the argument comes back as the same object; else
the argument holding exactly the returned values after the call (and not before) tells the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy < 2
    byte_bounds = getattr(np, "byte_bounds")  # noqa: B009 - absent from NumPy 2 stubs

from rnngrade.harness.checks.arguments import read_write, returned_entries
from rnngrade.results.model import Diagnosis, DiagnosisSource

STRUCTURAL = DiagnosisSource.STRUCTURAL.value

WRITES_RESULT = "result_written_into_argument"
MODIFIES = "argument_modified_in_place"



def in_place_diagnosis(function: str, path: str, parameters: tuple[str, ...],
                       before: tuple, after: tuple, returned: Any,
                       names: tuple[str, ...] | None) -> Diagnosis | None:
    """The in-place write ``path`` ("argument 3", "argument 4['Wf']") of a call of ``function``
    as a diagnosis: the returned entry written into the argument, when one is; else the change
    itself (None when the path cannot be read)."""
    write = read_write(path, parameters, before, after,
                       returned_entries(returned, names or (), complete=False))
    if write is None:
        return None
    shown, entry, same = write.shown, write.entry, write.same
    if entry is not None:
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


def parameter_names(module: Any, function: str) -> tuple[str, ...]:
    """The parameter names of the reference's ``function`` (trusted code; () when unknown)."""
    target = getattr(module, function, None)
    code = getattr(target, "__code__", None)
    if code is None:
        return ()
    return tuple(code.co_varnames[:code.co_argcount])



# ------------------------------------------------------------------ caches that share one array

SHARED_CACHE = "cached_entries_share_one_array"

Path = tuple[int | str, ...]


def _leaves(value: Any, path: Path = ()) -> list[tuple[Path, np.ndarray]]:
    """The float arrays inside tuples, lists and dicts, with their paths."""
    if isinstance(value, tuple | list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, str(k)))]
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and value.size > 0:
        return [(path, value)]
    return []


def _one_array(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` and ``b`` are the same array, or views of one memory."""
    return a is b or (np.may_share_memory(a, b) and bool(np.shares_memory(a, b)))


def _overlapping_pairs(arrays: list[np.ndarray]) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``j < i``, of ``arrays`` (non-empty) whose memory bounds meet, in
    the order of a loop over ``i`` then ``j``: every pair ``_one_array`` can hold for (the same
    array, or views of one memory, lie within each other's bounds), found by sorting the bounds
    instead of trying all n² pairs (a sequence's caches hold hundreds of arrays)."""
    bounds = [byte_bounds(a) for a in arrays]
    order = sorted(range(len(arrays)), key=lambda i: bounds[i][0])
    pairs = []
    open_: list[int] = []  # earlier in ``order``, their upper bound not yet passed
    for i in order:
        low = bounds[i][0]
        open_ = [k for k in open_ if bounds[k][1] >= low]  # bounds meet: <=, to be generous
        pairs += [(max(i, k), min(i, k)) for k in open_]
        open_.append(i)
    return sorted(pairs)


def shared_cache_groups(mine: Any, theirs: Any, atol: float, rtol: float) -> list[list[Path]]:
    """Groups of cache paths where the student's arrays are one array (or views of one memory)
    while the reference's at the same paths are distinct arrays holding different values.

    Evidence only: both caches must have the same layout (paths, shapes), and every array of the
    student's outside the groups must hold the reference's values, so a cache in another order
    (where a shared state sits at other paths) is never read as shared. [] when nothing is."""
    ours = dict(_leaves(theirs))
    student = [(p, a) for p, a in _leaves(mine) if p in ours and ours[p].shape == a.shape]
    if not student or len(student) != len(ours):
        return []
    parent = list(range(len(student)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    flagged: set[int] = set()
    for i, j in _overlapping_pairs([a for _, a in student]):
        (p, a), (q, b) = student[i], student[j]
        if a.shape != b.shape or not _one_array(a, b):
            continue
        r, s = ours[p], ours[q]
        if _one_array(r, s) or np.array_equal(r, s):
            continue  # the reference shares (or holds equal values) here too
        parent[root(i)] = root(j)
        flagged.update((i, j))
    if not flagged:
        return []
    for i, (p, a) in enumerate(student):
        if i not in flagged and not np.allclose(a, ours[p], atol=atol, rtol=rtol,
                                                equal_nan=True):
            return []  # another layout, or other mistakes: no evidence about sharing
    groups: dict[int, list[Path]] = {}
    for i in sorted(flagged):
        groups.setdefault(root(i), []).append(student[i][0])
    return list(groups.values())


def describe_paths(paths: list[Path], entry_names: tuple[str, ...], top: str) -> str:
    """``the cached `c_prev` of steps 1–6`` for paths ``(0, t, k)`` into ``(list of the step
    caches, x)`` whose step caches have the entries ``entry_names``; else the paths themselves."""
    if all(len(p) >= 3 and p[0] == 0 and isinstance(p[1], int) and isinstance(p[2], int)
           and p[2] < len(entry_names) for p in paths):
        entries = sorted({entry_names[int(p[2])] for p in paths})
        steps = sorted({int(p[1]) + 1 for p in paths})
        which = " and ".join(f"`{e}`" for e in entries)
        if len(steps) == 1:
            when = f"step {steps[0]}"
        elif steps == list(range(steps[0], steps[-1] + 1)):
            when = f"steps {steps[0]}–{steps[-1]}"
        else:
            when = "steps " + ", ".join(str(s) for s in steps)
        return f"the cached {which} of {when}"
    shown = ", ".join(f"`{top}" + "".join(f"[{k!r}]" for k in p) + "`" for p in paths[:4])
    return f"the cache entries {shown}{' …' if len(paths) > 4 else ''}"


def shared_cache_diagnosis(function: str, described: list[str], differing: int,
                           total: int) -> Diagnosis:
    """The diagnosis of caches whose entries are one array (``described``: each group, as
    ``describe_paths`` words it)."""
    groups = "; ".join(f"{d} are one array" for d in described)
    return Diagnosis(
        SHARED_CACHE, f"{groups[0].upper()}{groups[1:]}: `{function}` keeps each step's state in "
        "the same buffer (written in place: `[:] =`, `+=`, `out=`, `np.copyto`), so every "
        "step's cache holds the last value", function,
        hint="Give each step its own new array: rebind the name to the array the step "
        "computes (`state = new_state`) instead of copying it into one you keep (`state[:] = "
        "new_state`), and never write into an array a cache already holds: a backward pass "
        "reads every step's cache after the whole forward pass has run.",
        evidence=f"the course's `{function}` caches distinct arrays there, holding different "
        f"values; in yours they are one array, and {differing} of those {total} cached arrays "
        "hold other values than the course's",
        source=STRUCTURAL)


def cache_entry_names(source: str, function: str) -> tuple[str, ...]:
    """The names in the tuple that ``function`` of the reference's ``source`` (trusted code)
    assigns to ``cache``: ``("a_next", "c_next", "a_prev", ...)``; () when there is none."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    for top in tree.body:
        if not (isinstance(top, ast.FunctionDef) and top.name == function):
            continue
        for node in ast.walk(top):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and any(
                    isinstance(t, ast.Name) and t.id == "cache" for t in node.targets):
                names = [e.id for e in node.value.elts if isinstance(e, ast.Name)]
                if len(names) == len(node.value.elts):
                    return tuple(names)
    return ()

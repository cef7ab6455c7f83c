"""Naming a formula slip in the public tests from sealed edit fingerprints, without the formula.

The grader names a wrong value inside a function by the one small edit of the reference's formula
that reproduces it (``rnngrade.diagnosis.edits``). That needs the reference's code, which is not
shipped. Instead, ``rnngrade generate`` runs every such edit on the public inputs and stores, per
public case, one row per edit (``<case>::(edits)`` in ``labN_mistakes.npz``):

- which outputs the edit changes (``leaves``: indices into the case's outputs, flattened), each
  of the expected size (a transposed or squeezed one in its own shape, which the digest holds)
  or of its own size (``sizes``, stored only for a table where some row changes a leaf's size:
  a sum over the wrong axis with ``keepdims``);
- a digest of those outputs quantised on a grid of step ``q`` (``scales``, per leaf: a power of
  two about 8 tolerances wide, so a slip computed in another order lands in the same cell), with
  one bit per element (``halves``) that shifts its grid by half a step so the stored value sits
  in the middle of its cell: a student's value within ``q / 4`` of it gets the same digest;
- the grader's sentence for the edit, sealed: XORed with a key derived from the same quantised
  values (``sealed``). It opens only for a student whose outputs *are* that edit's.

So the public files hold no reference expression and no intermediate value, and no sentence can
be read without producing the mistake it describes. Outputs of wrong code only; the expected
outputs are public anyway.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

EDITS = "(edits)"  # the fingerprint entry of a case's edits: "<case>::(edits)"
DIGEST_BYTES = 16
GRID_TOLERANCES = 8  # the grid's step, in tolerances: a match needs |yours − theirs| < q / 4
MAX_SIZE = 1 << 20  # entries of a leaf a row may hold: the public cases are far smaller
_DIGEST, _SEAL = b"rnngrade-edit-digest|", b"rnngrade-edit-seal|"
_LARGEST = 2.0 ** 52  # quantised values beyond this are not exact integers in float64


def scale_for(want: np.ndarray, atol: float, rtol: float) -> float:
    """The grid step of one output: the power of two at or above ``GRID_TOLERANCES`` times its
    tolerance at its largest entry (a function of the public expected output alone)."""
    largest = float(np.max(np.abs(want))) if want.size else 0.0
    tolerance = GRID_TOLERANCES * (atol + rtol * largest)
    return float(2.0 ** math.ceil(math.log2(tolerance))) if tolerance > 0 else 0.0


def halves(values: np.ndarray, scale: float) -> np.ndarray:
    """Per element, whether the grid is shifted by half a step so ``values`` sits mid-cell."""
    fraction = np.mod(values.astype(np.float64).ravel() / scale, 1.0)
    return ((fraction >= 0.25) & (fraction < 0.75)).astype(np.uint8)


def quantised(values: np.ndarray, scale: float, shifted: np.ndarray) -> np.ndarray | None:
    """The cell of each element on its (shifted) grid; None when not finite or too large."""
    with np.errstate(all="ignore"):
        steps = values.astype(np.float64).ravel() / scale - 0.5 * shifted
    if steps.shape != shifted.shape or not np.all(np.isfinite(steps)) or (
            steps.size and float(np.max(np.abs(steps))) > _LARGEST):
        return None
    return np.round(steps).astype("<i8")


def _material(case: str, leaves: Sequence[int], cells: Sequence[np.ndarray],
              shapes: Sequence[tuple[int, ...]]) -> bytes:
    parts = [case.encode()]
    for leaf, cell, shape in zip(leaves, cells, shapes):
        parts.append(f"|{leaf}:{shape}|".encode())
        parts.append(np.ascontiguousarray(cell, dtype="<i8").tobytes())
    return b"".join(parts)


def digest(material: bytes) -> np.ndarray:
    return np.frombuffer(hashlib.sha256(_DIGEST + material).digest()[:DIGEST_BYTES],
                         dtype=np.uint8).copy()


def _stream(material: bytes, size: int) -> np.ndarray:
    key = hashlib.sha256(_SEAL + material).digest()
    return np.frombuffer(hashlib.shake_256(key).digest(size), dtype=np.uint8)


def seal(text: str, material: bytes) -> np.ndarray:
    plain = np.frombuffer(text.encode(), dtype=np.uint8)
    return np.bitwise_xor(plain, _stream(material, plain.size))


def unseal(sealed: np.ndarray, material: bytes) -> str | None:
    try:
        return bytes(np.bitwise_xor(sealed, _stream(material, sealed.size))).decode()
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True)
class EditRow:
    """One stored edit of a case: the output leaves it changes, their grid steps and shifts,
    the digest of their cells and the sealed sentence."""

    leaves: tuple[int, ...]
    scales: tuple[float, ...]
    shifted: np.ndarray
    digest: np.ndarray
    sealed: np.ndarray
    sizes: tuple[int, ...] = ()  # each changed leaf's size; () for the expected leaves' sizes


def pack(case: str, rows: Sequence[tuple[Sequence[int], Sequence[np.ndarray], str]],
         want: Sequence[np.ndarray], atol: float, rtol: float) -> dict[str, Any] | None:
    """The stored table of one case from ``(changed leaf indices, their values, sentence)``
    rows (``want``: the case's expected leaves). None when no row can be stored."""
    leaves: list[int] = []
    sizes: list[int] = []
    starts, bits, digests, sealed, scales = [0], [], [], [], []
    sealed_starts = [0]
    for changed, values, text in rows:
        row_scales = [scale_for(want[i], atol, rtol) for i in changed]
        if not all(s > 0 for s in row_scales):
            continue
        shifts = [halves(v, s) for v, s in zip(values, row_scales)]
        cells = [quantised(v, s, h) for v, s, h in zip(values, row_scales, shifts)]
        if any(c is None for c in cells):
            continue
        material = _material(case, changed, [c for c in cells if c is not None],
                             [tuple(v.shape) for v in values])
        leaves.extend(changed)
        sizes.extend(v.size for v in values)
        starts.append(len(leaves))
        scales.extend(row_scales)
        bits.append(np.concatenate(shifts))
        digests.append(digest(material))
        sealed.append(seal(text, material))
        sealed_starts.append(sealed_starts[-1] + sealed[-1].size)
    if not digests:
        return None
    resized = any(size != want[leaf].size for leaf, size in zip(leaves, sizes))
    return {**({"sizes": np.asarray(sizes, dtype=np.int64)} if resized else {}),
            "leaves": np.asarray(leaves, dtype=np.int64),
            "starts": np.asarray(starts, dtype=np.int64),
            "scales": np.asarray(scales, dtype=np.float64),
            "halves": np.packbits(np.concatenate(bits)),
            "digests": np.stack(digests),
            "sealed": np.concatenate(sealed),
            "sealed_starts": np.asarray(sealed_starts, dtype=np.int64)}


def rows(table: dict[str, Any], want: Sequence[np.ndarray | None]) -> list[EditRow]:
    """The rows of a stored table (``want``: the case's expected leaves, for their sizes)."""
    leaves, starts, scales = table["leaves"], table["starts"], table["scales"]
    stored = table.get("sizes")
    bits = np.unpackbits(table["halves"])
    sealed, sealed_starts = table["sealed"], table["sealed_starts"]
    found, offset = [], 0
    for r in range(len(starts) - 1):
        changed = tuple(int(i) for i in leaves[starts[r]:starts[r + 1]])
        sizes = tuple(int(n) for n in stored[starts[r]:starts[r + 1]]) if stored is not None \
            else tuple(w.size for i in changed if (w := want[i] if i < len(want) else None)
                       is not None)
        found.append(EditRow(changed, tuple(float(s) for s in scales[starts[r]:starts[r + 1]]),
                             bits[offset:offset + sum(sizes)], table["digests"][r],
                             sealed[sealed_starts[r]:sealed_starts[r + 1]], sizes))
        offset += sum(sizes)
    return found


def opened(case: str, row: EditRow, mine: dict[int, np.ndarray],
           want: Sequence[np.ndarray | None]) -> str | None:
    """The row's sentence when the student's leaves (``mine``: by stored index) are the
    edit's outputs on every leaf it changes; None otherwise."""
    cells, shapes, offset = [], [], 0
    for k, (leaf, scale) in enumerate(zip(row.leaves, row.scales)):
        expected = want[leaf] if leaf < len(want) else None
        value = mine.get(leaf)
        size = row.sizes[k] if k < len(row.sizes) else (
            expected.size if expected is not None else -1)
        if expected is None or value is None or value.size != size \
                or value.dtype.kind not in "fiu":  # a shape of that size: the digest tells
            return None
        cell = quantised(value, scale, row.shifted[offset:offset + value.size])
        if cell is None:
            return None
        offset += value.size
        cells.append(cell)
        shapes.append(tuple(value.shape))
    material = _material(case, row.leaves, cells, shapes)
    if not np.array_equal(digest(material), row.digest):
        return None
    return unseal(row.sealed, material)

"""``shared_cache_groups`` (``diagnosis/aliasing.py``): cached arrays that are one array in the
student's caches and distinct in the reference's, found only with evidence."""

from __future__ import annotations

import numpy as np

from rnngrade.diagnosis.aliasing import (
    _one_array,
    _overlapping_pairs,
    cache_entry_names,
    describe_paths,
    shared_cache_groups,
)

NAMES = ("a_next", "a_prev", "xt", "parameters")
TOL = (1e-12, 1e-10)


def caches(states: list[np.ndarray], x: np.ndarray, p: dict, shared: bool = False) -> tuple:
    """Classic rnn_forward caches from states[0] = a0; ``shared``: every a_prev is one buffer
    holding the last state."""
    buffer = states[-1].copy()
    steps = [(states[t + 1], buffer if shared else states[t], x[:, :, t], p)
             for t in range(len(states) - 1)]
    return steps, x


def sequence(T: int = 4) -> tuple[list[np.ndarray], np.ndarray, dict]:
    rng = np.random.default_rng(0)
    return ([rng.standard_normal((3, 2)) for _ in range(T + 1)],
            rng.standard_normal((2, 2, T)), {"W": rng.standard_normal((3, 3))})


def test_one_buffer_for_every_a_prev_is_one_group():
    states, x, p = sequence()
    groups = shared_cache_groups(caches(states, x, p, shared=True), caches(states, x, p), *TOL)
    assert groups == [[(0, t, 1) for t in range(4)]]
    assert describe_paths(groups[0], NAMES, "caches") == "the cached `a_prev` of steps 1–4"


def test_correct_caches_share_nothing_wrongly():
    """a_next of step t is a_prev of step t + 1 and xt views x, in the reference's too."""
    states, x, p = sequence()
    assert shared_cache_groups(caches(states, x, p), caches(states, x, p), *TOL) == []


def test_another_layout_is_no_evidence():
    """Entries in another order put shared states at other paths: no finding."""
    states, x, p = sequence()
    mine, _ = caches(states, x, p)
    swapped = ([(s[1], s[0], s[2], s[3]) for s in mine], x)
    assert shared_cache_groups(swapped, caches(states, x, p), *TOL) == []


def test_other_wrong_values_are_no_evidence():
    states, x, p = sequence()
    mine = caches(states, x, p, shared=True)
    mine[0][0] = (mine[0][0][0] + 1.0, *mine[0][0][1:])
    assert shared_cache_groups(mine, caches(states, x, p), *TOL) == []


def test_entry_names_come_from_the_reference_cell():
    source = ("def cell(xt, a_prev, p):\n    a_next = a_prev\n"
              "    cache = (a_next, a_prev, xt, p)\n    return a_next, cache\n")
    assert cache_entry_names(source, "cell") == ("a_next", "a_prev", "xt", "p")
    assert cache_entry_names(source, "other") == ()


def test_overlapping_pairs_find_every_pair_of_one_memory() -> None:
    """The bounds sweep keeps every pair the all-pairs loop found sharing memory, in its order:
    the same array twice, slices of one buffer, a strided view, and unrelated arrays."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        buffers = [rng.standard_normal((4, 5, 6)) for _ in range(3)]
        arrays: list[np.ndarray] = []
        for _ in range(int(rng.integers(1, 25))):
            b = buffers[int(rng.integers(3))]
            arrays.append([b, b[:, :, int(rng.integers(6))], b[int(rng.integers(4))],
                           b[:, ::2, 1:], rng.standard_normal((4, 5))][int(rng.integers(5))])
        arrays.append(arrays[0])
        every = [(i, j) for i in range(len(arrays)) for j in range(i)
                 if _one_array(arrays[i], arrays[j])]
        assert [(i, j) for i, j in _overlapping_pairs(arrays)
                if _one_array(arrays[i], arrays[j])] == every

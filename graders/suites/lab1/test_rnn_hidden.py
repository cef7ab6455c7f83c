"""Hidden suite for lab1: the RNN forward pass (contract: assignments/lab1/README.md)."""

import numpy as np
import pytest
import torch

from rnngrade.suite import (
    StudentError,
    Tolerance,
    device_params,
    expect_distinct_caches,
    promoted_oracle,
    tolerance_for,
)

SIZES = [  # (n_x, n_a, n_y, m, T_x): edge sizes m = 1, T_x = 1, n_a = 1 and a larger one
    pytest.param(3, 5, 2, 10, 4, id="n_x3-n_a5-n_y2-m10-T4"),
    pytest.param(4, 1, 3, 6, 5, id="n_a1"),
    pytest.param(2, 4, 3, 1, 6, id="m1"),
    pytest.param(5, 3, 4, 7, 1, id="T1"),
    pytest.param(8, 16, 10, 32, 12, id="n_x8-n_a16-n_y10-m32-T12"),
]

# The student's float32 on CUDA (TF32 off) against nn.RNN run in float64 (promoted_oracle: cuDNN's
# float32 kernels are themselves ~1e-5 off); a float32 loop of matrix products stays ~1e-6.
CUDA_FLOAT32 = Tolerance(1e-5, 1e-4, "float32 on CUDA (TF32 off) against float64; sums ~1e-6")


def make_parameters(rng, n_x, n_a, n_y, dtype=np.float64):
    p = {
        "Wax": rng.standard_normal((n_a, n_x)),
        "Waa": rng.standard_normal((n_a, n_a)) / np.sqrt(n_a),
        "Wya": rng.standard_normal((n_y, n_a)),
        "ba": rng.standard_normal((n_a, 1)),
        "by": rng.standard_normal((n_y, 1)),
    }
    return {k: v.astype(dtype) for k, v in p.items()}


def cell(m, xt, a_prev, p):
    return m.head("rnn_cell_forward", 2, xt, a_prev, p)  # the cache has tests of its own


def sequence(m, x, a0, p):
    return m.head("rnn_forward", 2, x, a0, p)


@pytest.mark.parametrize("shape", [(4, 3), (10, 1), (1, 5), (7, 20)], ids=str)
def test_softmax_random(check, rng, shape):
    x = rng.standard_normal(shape) * 3
    check.expect("softmax(x)", lambda m, x: m.softmax(x), (x,))


@pytest.mark.parametrize("scale", [1000.0, -1000.0, 500.0], ids=lambda s: f"logits{s:+g}")
def test_softmax_extreme_logits(check, rng, scale):
    x = scale + rng.standard_normal((5, 4))
    x[0, :] = scale  # ties at the maximum as well
    check.expect("softmax(x) at large logits", lambda m, x: m.softmax(x), (x,))


def test_softmax_extreme_logits_per_column(check, rng):
    """Stable per column. Columns around +1000, -1000 and 0 in one batch: one maximum for
    the whole batch leaves exp(-2000) = 0 in the low column, and 0/0 = NaN."""
    x = rng.standard_normal((5, 3))
    x[:, 0] += 1000.0
    x[:, 1] -= 1000.0
    check.expect("softmax(x) with columns of very different scales", lambda m, x: m.softmax(x),
                 (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_softmax_dtype(check, rng, dtype):
    x = rng.standard_normal((6, 5)).astype(dtype)
    check.expect("softmax(x)", lambda m, x: m.softmax(x), (x,))


@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_rnn_cell_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    p = make_parameters(rng, n_x, n_a, n_y)
    xt, a_prev = rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m))
    check.expect("rnn_cell_forward", cell, (xt, a_prev, p), names=("a_next", "yt_pred"))


@pytest.mark.parametrize("zero", ["a_prev", "xt", "Wya", "Waa", "ba"])
def test_rnn_cell_forward_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    p = make_parameters(rng, 3, 5, 4)
    xt, a_prev = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    if zero == "a_prev":
        a_prev = np.zeros_like(a_prev)
    elif zero == "xt":
        xt = np.zeros_like(xt)
    else:
        p[zero] = np.zeros_like(p[zero])
    check.expect(f"rnn_cell_forward with {zero} = 0", cell, (xt, a_prev, p),
                 names=("a_next", "yt_pred"))


def test_rnn_cell_forward_float32(check, rng):
    p = make_parameters(rng, 4, 6, 3, np.float32)
    xt = rng.standard_normal((4, 5)).astype(np.float32)
    a_prev = rng.standard_normal((6, 5)).astype(np.float32)
    check.expect("rnn_cell_forward (float32 inputs)", cell, (xt, a_prev, p),
                 names=("a_next", "yt_pred"))


@pytest.mark.parametrize("n_x, n_a, n_y, m, T_x", SIZES)
def test_rnn_forward_random(check, rng, n_x, n_a, n_y, m, T_x):
    p = make_parameters(rng, n_x, n_a, n_y)
    x, a0 = rng.standard_normal((n_x, m, T_x)), rng.standard_normal((n_a, m))
    check.expect("rnn_forward", sequence, (x, a0, p), names=("a", "y_pred"), time_axis=2)


@pytest.mark.parametrize("zero", ["a0", "x", "Waa"])
def test_rnn_forward_term_isolation(check, rng, zero):
    p = make_parameters(rng, 3, 4, 2)
    x, a0 = rng.standard_normal((3, 5, 6)), rng.standard_normal((4, 5))
    if zero == "a0":
        a0 = np.zeros_like(a0)
    elif zero == "x":
        x = np.zeros_like(x)
    else:
        p["Waa"] = np.zeros_like(p["Waa"])
    check.expect(f"rnn_forward with {zero} = 0", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


def test_rnn_forward_long_sequence(check, rng):
    p = make_parameters(rng, 5, 8, 4)
    x, a0 = rng.standard_normal((5, 3, 200)), rng.standard_normal((8, 3))
    check.expect("rnn_forward (T_x = 200)", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


def test_rnn_forward_float32(check, rng):
    p = make_parameters(rng, 3, 5, 4, np.float32)
    x = rng.standard_normal((3, 4, 7)).astype(np.float32)
    a0 = rng.standard_normal((5, 4)).astype(np.float32)
    check.expect("rnn_forward (float32 inputs)", sequence, (x, a0, p), names=("a", "y_pred"),
                 time_axis=2)


# ------------------------------------------------------------------ caches
# lab2's backward passes read these caches, so their layout is graded here, where it is written:
# rnn_cell_forward's docstring fixes `cache = (a_next, a_prev, xt, parameters)` and
# rnn_forward's `caches = (list of the cell caches, x)`. A probe names what each item holds
# (the function's own outputs and arguments), so a cache is judged on its layout alone: wrong
# values in a_next cost points in the value tests, not here.

CELL_CACHE = "(a_next, a_prev, xt, parameters)"


def _same(got, want, tol):
    """Whether ``got`` holds ``want``: arrays close within ``tol``, dicts and sequences item by
    item, anything else equal."""
    if isinstance(want, np.ndarray):
        return (isinstance(got, np.ndarray) and got.shape == want.shape
                and got.dtype.kind in "fc" and np.allclose(got, want, rtol=tol.rtol,
                                                           atol=tol.atol, equal_nan=True))
    if isinstance(want, dict):
        return (isinstance(got, dict) and set(got) == set(want)
                and all(_same(got[k], want[k], tol) for k in want))
    if isinstance(want, tuple | list):
        return (isinstance(got, tuple | list) and len(got) == len(want)
                and all(_same(g, w, tol) for g, w in zip(got, want)))
    return type(got) is type(want) and got == want


def _kind(value):
    """A word for a value that is none of the expected ones (never the student's own text)."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of shape {tuple(int(n) for n in value.shape)}"
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, dict):
        return f"a dict of {len(value)} items"
    return "another value"


def _layout(cache, named, tol):
    """``"(a_next, a_prev, …)"``: for each item of ``cache``, the first name in ``named`` whose
    value it holds."""
    if not isinstance(cache, tuple | list):
        return _kind(cache)
    items = [next((name for name, value in named.items() if _same(item, value, tol)),
                  _kind(item)) for item in cache]
    return "(" + ", ".join(items) + ")"


def _triple(result):
    return tuple(result) if isinstance(result, tuple | list) and len(result) == 3 else None


def cell_cache_layout(m, xt, a_prev, p):
    """What each item of rnn_cell_forward's cache holds."""
    result = _triple(m.rnn_cell_forward(xt, a_prev, p))
    if result is None:
        return "no cache: rnn_cell_forward does not return (a_next, yt_pred, cache)"
    a_next, yt_pred, cache = result
    named = {"a_next": a_next, "a_prev": a_prev, "xt": xt, "parameters": p, "yt_pred": yt_pred}
    return _layout(cache, named, tolerance_for(xt))


def forward_caches_layout(m, x, a0, p):
    """What rnn_forward's caches hold: ``(the T_x step caches in order, x)`` when item t of the
    list is the cache of step t as the module's own rnn_cell_forward returns it (run from a0 on
    the trusted side), or in the classic layout on the states rnn_forward returns; so
    rnn_forward is judged by how it collects the caches, whatever its cell's layout. Fails
    when the caches hold one array where the course's hold distinct ones (every step's
    `a_prev` in one buffer)."""
    returned = m.rnn_forward(x, a0, p)
    expect_distinct_caches("lab1", "rnn_forward", returned, 2, (x, a0, p), "rnn_cell_forward")
    result = _triple(returned)
    if result is None:
        return "no caches: rnn_forward does not return (a, y_pred, caches)"
    a, _, caches = result
    if not isinstance(caches, tuple | list) or len(caches) != 2:
        return _kind(caches)
    steps, inputs = caches
    T_x = x.shape[2]
    if not isinstance(steps, list | tuple):
        listed = _kind(steps)
    elif len(steps) != T_x:
        listed = f"a {type(steps).__name__} of {len(steps)} caches"
    else:
        candidates = _step_caches(m, x, a0, p, a)
        found = [_step_of(entry, candidates) for entry in steps]
        listed = (f"the {T_x} step caches in order" if found == list(range(T_x)) else
                  "the caches of steps [" + ", ".join(
                      _unmatched_step(entry, t, x, a0, p, a) if s is None else str(s)
                      for t, (entry, s) in enumerate(zip(steps, found))) + "]")
    return f"({listed}, {'x' if _same(inputs, x, tolerance_for(x)) else _kind(inputs)})"


def _step_caches(m, x, a0, p, a):
    """For each step t, the caches that may stand for it: the classic one on the states ``a``
    rnn_forward returned, and the one the module's own rnn_cell_forward returns at step t of the
    sequence run from a0 (where that cell runs). The calls made here are the probe's, not
    rnn_forward's: they are left out of the check of changed arguments."""
    T_x = x.shape[2]
    options = [[] for _ in range(T_x)]
    if isinstance(a, np.ndarray) and a.shape == (a0.shape[0], a0.shape[1], T_x):
        before = [a0] + [a[:, :, t] for t in range(T_x - 1)]
        for t in range(T_x):
            options[t].append((a[:, :, t], before[t], x[:, :, t], p))
    logged = len(m.calls)
    try:
        state = a0
        for t in range(T_x):
            own = _triple(m.rnn_cell_forward(x[:, :, t], state, p))
            if own is None:
                break
            options[t].append(own[2])
            state = own[0]
    except StudentError:  # missing or broken: only the classic layout can stand for a step
        pass
    finally:
        del m.calls[logged:]
    return options


def _unmatched_step(entry, t, x, a0, p, a):
    """A cache that is no step's, described item by item against step ``t`` of the classic
    layout on the states rnn_forward returned: ``(a_next, a_next, xt, parameters)`` for a cached
    a_prev that holds the new state. Two different wrong caches read differently here, so a
    known mistake matches this check only when its cache holds what the student's does (a bare
    "?" let a cache from zeros stand for one overwritten by the new state)."""
    if not (isinstance(a, np.ndarray) and a.shape == (a0.shape[0], a0.shape[1], x.shape[2])):
        return "?"
    named = {"a_next": a[:, :, t], "a_prev": a0 if t == 0 else a[:, :, t - 1],
             "xt": x[:, :, t], "parameters": p}
    return _layout(entry, named, tolerance_for(x))


def _step_of(entry, candidates):
    """The step whose cache ``entry`` is, or None."""
    for t, options in enumerate(candidates):
        if any(_same(entry, option, tolerance_for(entry, option)) for option in options):
            return t
    return None


@pytest.mark.parametrize("n_x, n_a, m", [(3, 5, 10), (4, 4, 1)], ids=["n_x3-n_a5-m10",
                                                                    "n_x4-n_a4-m1"])
def test_rnn_cell_forward_cache(check, rng, n_x, n_a, m):
    """The cache in the classic layout; n_x = n_a leaves only the values to tell xt from
    a_prev."""
    p = make_parameters(rng, n_x, n_a, 3)
    xt, a_prev = rng.standard_normal((n_x, m)), rng.standard_normal((n_a, m))
    check.expect(f"rnn_cell_forward cache, in the layout {CELL_CACHE}", cell_cache_layout,
                 (xt, a_prev, p))


@pytest.mark.parametrize("T_x", [4, 1], ids=lambda t: f"T{t}")
def test_rnn_forward_caches(check, rng, T_x):
    p = make_parameters(rng, 3, 5, 2)
    x, a0 = rng.standard_normal((3, 4, T_x)), rng.standard_normal((5, 4))
    check.expect("rnn_forward caches, in the layout (list of the step caches, x)",
                 forward_caches_layout, (x, a0, p))


def torch_rnn(X, W_h, W_x, b, h0):
    """The expected states from torch.nn.RNN(batch_first=True): bias_ih = b, bias_hh = 0."""
    layer = torch.nn.RNN(W_x.shape[1], W_x.shape[0], batch_first=True)
    layer = layer.to(device=X.device, dtype=X.dtype)
    with torch.no_grad():
        layer.weight_ih_l0.copy_(W_x)
        layer.weight_hh_l0.copy_(W_h)
        layer.bias_ih_l0.copy_(b)
        layer.bias_hh_l0.zero_()
        out, _ = layer(X, h0.unsqueeze(0))
    return out


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, T, d, H", [(4, 6, 3, 5), (1, 1, 2, 3), (8, 30, 10, 16)],
                         ids=["B4-T6", "B1-T1", "B8-T30"])
def test_rnn_forward_batch_vs_torch(check, device, B, T, d, H):
    dtype = torch.float64 if device == "cpu" else torch.float32
    g = torch.Generator().manual_seed(B * 1000 + T)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(device, dtype)

    args = (randn(B, T, d), randn(H, H, scale=H**-0.5), randn(H, d), randn(H), randn(B, H))
    tol = None if device == "cpu" else CUDA_FLOAT32
    check.expect(f"rnn_forward_batch on {device}", lambda m, *a: m.rnn_forward_batch(*a), args,
                 oracle=promoted_oracle(torch_rnn), tol=tol, time_axis=1)


@pytest.mark.parametrize("zero", ["h0", "W_h", "b"])
def test_rnn_forward_batch_term_isolation(check, zero):
    g = torch.Generator().manual_seed(7)
    X, W_h, W_x = (torch.randn(3, 5, 4, generator=g, dtype=torch.float64),
                   torch.randn(6, 6, generator=g, dtype=torch.float64) / 6**0.5,
                   torch.randn(6, 4, generator=g, dtype=torch.float64))
    b, h0 = torch.randn(6, generator=g, dtype=torch.float64), torch.randn(3, 6, generator=g,
                                                                          dtype=torch.float64)
    args = {"h0": h0, "W_h": W_h, "b": b}
    args[zero] = torch.zeros_like(args[zero])
    check.expect(f"rnn_forward_batch with {zero} = 0", lambda m, *a: m.rnn_forward_batch(*a),
                 (X, args["W_h"], W_x, args["b"], args["h0"]), oracle=torch_rnn, time_axis=1)

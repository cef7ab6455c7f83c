"""Hidden suite for lab7: the linear recurrent unit (contract: assignments/lab7/README.md).

init_lru takes a torch.Generator, which is not plain data: its tests call the worker helper
``init_lru_seeded``, which builds the generator from a seed beside the student's code, and judge
the distributions of what comes back (the order of the random draws is the student's business).
Gradients go through the helper ``autograd_params``; the proof that linear_scan has no Python
loop over time counts the work of one call with the helper ``count_work``, beside the student's
code as well.
"""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from rnngrade.suite import FLOAT32, CheckFailure, Tolerance, device_params

FORMS = ("lru_forward_loop", "lru_forward_fft", "lru_forward_scan")
PARAMETERS = ("nu_log", "theta_log", "B_re", "B_im", "C_re", "C_im", "D")
DTYPES = {"float64": torch.float64, "float32": torch.float32}

# The float32 forms against the float64 reference at long T, on outputs of size up to ~8, with
# |λ| up to 0.999 (the paper's ring: memories of ~1,000 steps). The reference's own float32 error
# is ≤ 4e-6 at T = 256 and ≤ 1.5e-5 at T = 1,024 and 4,096 (all three forms; `rnngrade validate`
# prints the measured margins); the tolerances keep more than 10x over them, and every known
# mistake is off by O(1).
LONG_FLOAT32 = {
    256: Tolerance(6e-5, 0.0, "float32 forms at T = 256: the reference's own error is ≤ 4e-6"),
    1024: Tolerance(2e-4, 0.0, "float32 forms at T = 1,024: the reference's own error ≤ 1.5e-5"),
    4096: Tolerance(2e-4, 0.0, "float32 forms at T = 4,096: the reference's own error ≤ 1.5e-5"),
}
# Two forms of one student against each other in float32 at T = 512: each is within ~1e-5 of the
# truth (above), so their difference is too.
FORMS_AGREE_FLOAT32 = Tolerance(2e-4, 0.0, "two float32 forms at T = 512 differ by ~1e-5")
# KS distance between n = 100,000 draws and their law: a correct sampler stays below
# 2.7 / sqrt(n) = 0.0085 except with probability 1e-6; 0.1 keeps 10x over that. On the ring
# [0.1, 0.99], |λ| uniform instead of |λ|² (the classic mistake) is 0.2 away.
KS_DISTANCE = Tolerance(0.1, 0.0, "KS distance of 100,000 draws: ≤ 0.0085 for a correct law")
# Sample variance / true variance over n ≥ 60,000 normal draws: standard deviation
# sqrt(2 / n) ≤ 0.006, so a correct init stays within 0.02 (3.5 sd); 0.25 keeps 10x over that.
# randn scaled by the variance instead of the standard deviation is off by 94% or more here.
# The mean over the standard deviation has sd 1 / sqrt(n) ≤ 0.004: the same bound holds.
VARIANCE_RATIO = Tolerance(0.25, 0.0, "sample variance of ≥ 60,000 draws: sd ≤ 0.6%")
# float64 forms against an independent evaluation in extended precision (NumPy clongdouble):
# rounding of ~100 operations on O(1) numbers, ~1e-15; the lab README promises agreement to ~1e-12.
FLOAT64_FORMS = Tolerance(1e-12, 1e-10, "float64: a correct form is within ~1e-15 (README: ~1e-12)")
# CUDA, float32 with TF32 off: the same arithmetic as the CPU float32 cases (elementwise complex
# products, cuFFT, matmuls in full float32), whose reference error is ~1e-6 at T ≤ 33.
CUDA_FLOAT32 = FLOAT32


# ------------------------------------------------------------------ inputs

def lru_params(seed, N, d_in, d_out, dtype=torch.float64, r_min=0.5, r_max=0.99,
               max_phase=math.pi, device="cpu"):
    """LRU parameters with |λ|² uniform on [r_min², r_max²], phases uniform on (0, max_phase],
    and the paper's variances for B, C, D."""
    rng = np.random.default_rng(seed)
    modulus_sq = rng.uniform(r_min**2, r_max**2, N)
    values = {
        "nu_log": np.log(-0.5 * np.log(modulus_sq)),
        "theta_log": np.log(max_phase * (1.0 - rng.uniform(0.0, 1.0, N))),
        "B_re": rng.standard_normal((N, d_in)) / math.sqrt(2 * d_in),
        "B_im": rng.standard_normal((N, d_in)) / math.sqrt(2 * d_in),
        "C_re": rng.standard_normal((d_out, N)) / math.sqrt(N),
        "C_im": rng.standard_normal((d_out, N)) / math.sqrt(N),
        "D": rng.standard_normal((d_out, d_in)) / math.sqrt(d_in),
    }
    return {k: torch.from_numpy(v).to(device=device, dtype=dtype) for k, v in values.items()}


def signal(seed, B, T, d_in, dtype=torch.float64, device="cpu"):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal((B, T, d_in))).to(device=device, dtype=dtype)


def _wide(tensor):
    """A tensor as a NumPy array in extended precision (longdouble / clongdouble)."""
    values = tensor.detach().cpu().numpy()
    return values.astype(np.clongdouble if np.iscomplexobj(values) else np.longdouble)


def oracle_scan(a, b):
    """h_t = a_t h_{t−1} + b_t, a plain loop in extended precision."""
    a_wide = np.broadcast_to(_wide(a), b.shape)
    b_wide = _wide(b)
    h = np.zeros_like(b_wide, dtype=np.result_type(a_wide, b_wide))
    state = np.zeros_like(h[:, 0])
    for t in range(b.shape[1]):
        state = a_wide[:, t] * state + b_wide[:, t]
        h[:, t] = state
    out_dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.from_numpy(h.astype(np.complex128 if out_dtype.is_complex else np.float64))


def oracle_lru(x, params):
    """The LRU straight from its definition, in extended precision."""
    p = {k: _wide(v) for k, v in params.items()}
    lam = np.exp(-np.exp(p["nu_log"]) + 1j * np.exp(p["theta_log"]))
    gamma = np.sqrt(-np.expm1(-2 * np.exp(p["nu_log"])))
    u = gamma * (_wide(x) @ (p["B_re"] + 1j * p["B_im"]).T)
    states = np.zeros_like(u)
    state = np.zeros_like(u[:, 0])
    for t in range(u.shape[1]):
        state = lam * state + u[:, t]
        states[:, t] = state
    y = (states @ (p["C_re"] + 1j * p["C_im"]).T).real + _wide(x) @ p["D"].T
    return torch.from_numpy(y.astype(np.float64)).to(x.device)


def form_probe(form):
    def probe(m, x, params):
        return getattr(m, form)(x, params)

    return probe


def uses_cuda(device):
    return device == "cuda"


# ------------------------------------------------------------------ lru_lambda, lru_gamma

@pytest.mark.parametrize("dtype", DTYPES)
def test_lru_lambda_values(check, rng, dtype):
    nu_log = torch.from_numpy(rng.normal(-1.5, 1.5, 16)).to(DTYPES[dtype])
    theta_log = torch.from_numpy(rng.normal(-1.0, 1.0, 16)).to(DTYPES[dtype])
    check.expect(f"lru_lambda ({dtype})", lambda m, a, b: m.lru_lambda(a, b), (nu_log, theta_log))


def modulus_below_one(lam):
    return lam.abs() < 1 if isinstance(lam, torch.Tensor) else lam


@pytest.mark.parametrize("dtype, lowest", [("float64", -30.0), ("float32", -10.0)],
                         ids=["float64", "float32"])
def test_lru_lambda_extreme_parameters(check, dtype, lowest):
    """|λ| < 1 for every real nu_log: from |λ| = 1 − 1e-13 (float64; 1 − 5e-5 in float32) down to
    exp(−5e8) = 0, with phases from 5e-5 to 20 radians."""
    nu_log = torch.linspace(lowest, 20.0, 41, dtype=DTYPES[dtype])
    theta_log = torch.linspace(-10.0, 3.0, 41, dtype=DTYPES[dtype])
    check.expect(f"lru_lambda at extreme parameters ({dtype})",
                 lambda m, a, b: (lambda lam: (lam, modulus_below_one(lam)))(m.lru_lambda(a, b)),
                 (nu_log, theta_log), names=("lambda", "|lambda| < 1"))


@pytest.mark.parametrize("dtype, low, high", [("float64", -12.0, 4.0), ("float32", -5.0, 2.0)],
                         ids=["float64", "float32"])
def test_lru_gamma_values(check, rng, dtype, low, high):
    """γ from |λ| = 1 − 6e-6 (nu_log = −12) to |λ| ≈ 0; float32 where 1 − |λ|² keeps its digits."""
    nu_log = torch.from_numpy(np.r_[rng.uniform(low, high, 14), low, high]).to(DTYPES[dtype])
    check.expect(f"lru_gamma ({dtype})", lambda m, v: m.lru_gamma(v), (nu_log,))


# ------------------------------------------------------------------ init_lru

def init(m, N, d_in, d_out, r_min, r_max, max_phase, seeds):
    return m.helper("init_lru_seeded", N, d_in, d_out, r_min, r_max, max_phase, seeds)


def structure(params, N, d_in, d_out, r_min, r_max, max_phase):
    """What a grader can say about one init_lru result without knowing the draws."""
    if not isinstance(params, dict):
        return params
    shapes = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else None
              for k, v in params.items()}
    if set(shapes) != set(PARAMETERS) or None in shapes.values():
        return {"shapes": shapes}
    modulus = torch.exp(-torch.exp(params["nu_log"].double()))
    phase = torch.exp(params["theta_log"].double())
    slack = 1e-6  # float32 parameters: |λ| and the phase are recovered to ~1e-8
    return {
        "shapes": shapes,
        "numbers in all": sum(v.numel() for v in params.values()),
        "all real floating-point": all(v.is_floating_point() for v in params.values()),
        "entries with |λ| outside [r_min, r_max]":
            int(((modulus < r_min - slack) | (modulus > r_max + slack)).sum()),
        "entries with a phase outside [0, max_phase]":
            int(((phase < 0) | (phase > max_phase * (1 + slack))).sum()),
    }


@pytest.mark.parametrize("N, d_in, d_out, r_min, r_max, max_phase", [
    pytest.param(64, 4, 3, 0.9, 0.999, math.pi / 10, id="N64-d4-d3-paper-ring"),
    pytest.param(7, 1, 5, 0.2, 0.6, 2.0, id="N7-d1-d5-ring0.2-0.6"),
])
def test_init_lru_structure(check, N, d_in, d_out, r_min, r_max, max_phase):
    """Keys, shapes (N = 64, d_in = 4, d_out = 3: 1,036 numbers), the ring, the phase range, and
    the generator as the only source of randomness (same seed: same parameters)."""
    settings = (N, d_in, d_out, r_min, r_max, max_phase)

    def probe(m, *args):
        results = init(m, *args)
        if not isinstance(results, list) or len(results) != 3:
            return results
        first, again, other = results
        summary = structure(first, *settings)
        if isinstance(summary, dict) and "numbers in all" in summary:
            summary["same seed gives the same parameters"] = all(
                torch.equal(first[k], again[k]) for k in PARAMETERS)
            summary["another seed gives other parameters"] = not torch.equal(
                first["B_re"], other["B_re"])
        return summary

    def oracle(*args):
        shapes = {"nu_log": (N,), "theta_log": (N,), "B_re": (N, d_in), "B_im": (N, d_in),
                  "C_re": (d_out, N), "C_im": (d_out, N), "D": (d_out, d_in)}
        return {"shapes": shapes, "numbers in all": sum(math.prod(s) for s in shapes.values()),
                "all real floating-point": True, "entries with |λ| outside [r_min, r_max]": 0,
                "entries with a phase outside [0, max_phase]": 0,
                "same seed gives the same parameters": True,
                "another seed gives other parameters": True}

    check.expect(f"init_lru{settings[:3]} with a seeded torch.Generator", probe,
                 (*settings, [11, 11, 12]), oracle=oracle)


@pytest.mark.parametrize("quantity", ["modulus", "phase"])
def test_init_lru_distributions(check, quantity):
    """KS distance of 100,000 draws: |λ|² uniform on [r_min², r_max²] (ring [0.1, 0.99], wide
    enough to tell |λ|² from |λ|), phases uniform on [0, max_phase] (max_phase = 2)."""
    N, r_min, r_max, max_phase = 100_000, 0.1, 0.99, 2.0

    def probe(m, *args):
        results = init(m, *args)
        if not isinstance(results, list) or not results or not isinstance(results[0], dict):
            return results
        params = results[0]
        if quantity == "modulus":
            sample = torch.exp(-2 * torch.exp(params["nu_log"].double())).numpy()
            law = stats.uniform(r_min**2, r_max**2 - r_min**2)
        else:
            sample = torch.exp(params["theta_log"].double()).numpy()
            law = stats.uniform(0.0, max_phase)
        return np.float64(stats.kstest(sample, law.cdf).statistic)

    label = "|λ|²" if quantity == "modulus" else "the phase"
    check.expect(f"init_lru: KS distance of {label} from its uniform law (N = 100,000)", probe,
                 (N, 1, 1, r_min, r_max, max_phase, [21]), oracle=lambda *a: np.float64(0.0),
                 tol=KS_DISTANCE)


def test_init_lru_variances(check):
    """Variances 1/(2 d_in) for B_*, 1/N for C_*, 1/d_in for D, means 0 (≥ 60,000 draws each)."""

    def probe(m):
        wide = init(m, 20_000, 8, 16, 0.9, 0.999, math.pi / 10, [31])
        deep = init(m, 16, 300, 200, 0.9, 0.999, math.pi / 10, [32])
        if not all(isinstance(r, list) and r and isinstance(r[0], dict) for r in (wide, deep)):
            return wide if not isinstance(wide, list) else deep
        out = {}
        for name, params, variance in (("B_re", wide[0], 1 / 16), ("B_im", wide[0], 1 / 16),
                                       ("C_re", wide[0], 1 / 20_000), ("C_im", wide[0], 1 / 20_000),
                                       ("D", deep[0], 1 / 300)):
            values = params[name].double().reshape(-1)
            out[f"{name}: sample variance / variance"] = np.float64(values.var().item() / variance)
            out[f"{name}: mean / standard deviation"] = np.float64(
                values.mean().item() / math.sqrt(variance))
        return out

    def oracle():
        return {f"{name}: {what}": np.float64(value)
                for name in ("B_re", "B_im", "C_re", "C_im", "D")
                for what, value in (("sample variance / variance", 1.0),
                                    ("mean / standard deviation", 0.0))}

    check.expect("init_lru: variances and means of B, C and D", probe, (), oracle=oracle,
                 tol=VARIANCE_RATIO)


# ------------------------------------------------------------------ the three forms

SIZES = [  # (B, T, N, d_in, d_out)
    pytest.param(2, 1, 3, 2, 2, id="T1"),
    pytest.param(3, 2, 4, 3, 2, id="T2"),
    pytest.param(2, 7, 5, 3, 4, id="T7"),
    pytest.param(1, 16, 8, 2, 3, id="B1-T16"),
    pytest.param(4, 33, 6, 5, 1, id="T33-d_out1"),
]


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B, T, N, d_in, d_out", SIZES)
@pytest.mark.parametrize("form", FORMS)
def test_forms_values(check, form, B, T, N, d_in, d_out, dtype, device):
    seed = 100 * T + N
    params = lru_params(seed, N, d_in, d_out, DTYPES[dtype], device=device)
    x = signal(seed + 1, B, T, d_in, DTYPES[dtype], device)
    exact = dtype == "float64"  # against the extended-precision oracle, measuring the margin
    tol = FLOAT64_FORMS if exact else CUDA_FLOAT32 if uses_cuda(device) else None
    check.expect(f"{form} ({dtype} on {device})", form_probe(form), (x, params), tol=tol,
                 oracle=oracle_lru if exact else None, time_axis=1)


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("form", FORMS)
def test_forms_impulse_response(check, form, position):
    """One input at step t0, zeros elsewhere: outputs before t0 are exactly D·0 = 0 (causality),
    at t0 the kernel's first entry λ⁰ = 1 shows, after it the powers of λ."""
    T = 12
    t0 = {"first": 0, "middle": 5, "last": T - 1}[position]
    params = lru_params(200 + t0, 6, 3, 2)
    x = torch.zeros(2, T, 3, dtype=torch.float64)
    x[:, t0] = signal(300 + t0, 2, 1, 3)[:, 0]
    check.expect(f"{form}, input only at step {t0} of {T}", form_probe(form), (x, params),
                 oracle=oracle_lru, tol=FLOAT64_FORMS, time_axis=1)


@pytest.mark.parametrize("T", sorted(LONG_FLOAT32))
@pytest.mark.parametrize("form", FORMS)
def test_forms_float32_long_sequences(check, form, T):
    params = lru_params(T, 64, 4, 3, torch.float32, r_min=0.9, r_max=0.999,
                        max_phase=math.pi / 10)
    x = signal(T + 1, 1, T, 4, torch.float32)
    check.expect(f"{form} (float32, T = {T:,})", form_probe(form), (x, params),
                 tol=LONG_FLOAT32[T], time_axis=1)


def difference(a, b):
    """a − b for two tensors of the same shape; else a itself (its shape or type will fail)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
            and a.dtype == b.dtype:
        return a - b
    return a


def _largest(value):
    """The largest |entry| of a tensor (infinite for anything else: it never looks closest)."""
    if isinstance(value, torch.Tensor) and value.numel():
        return float(value.detach().abs().max())
    return math.inf


@pytest.mark.parametrize("dtype, T", [("float64", 100), ("float32", 512)],
                         ids=["float64-T100", "float32-T512"])
@pytest.mark.parametrize("form", FORMS)
def test_forms_agree_with_each_other(check, form, dtype, T):
    """Each form against the closest of your other two: one wrong form fails its own case only
    (the two right ones still agree with each other)."""
    params = lru_params(400 + T, 16, 3, 2, DTYPES[dtype], r_min=0.8)
    x = signal(401 + T, 2, T, 3, DTYPES[dtype])
    others = [other for other in FORMS if other != form]

    def probe(m, x, params):
        mine = getattr(m, form)(x, params)
        gaps = [difference(mine, getattr(m, other)(x, params)) for other in others]
        return min(gaps, key=_largest)

    def oracle(x, params):
        return torch.zeros(x.shape[0], x.shape[1], params["D"].shape[0], dtype=x.dtype)

    tol = FORMS_AGREE_FLOAT32 if dtype == "float32" else None
    check.expect(f"your {form} against the closest of your other two forms ({dtype}, T = {T})",
                 probe, (x, params), oracle=oracle,
                 tol=tol, time_axis=1)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", FORMS)
def test_forms_gradients(check, form, dtype, device):
    """Autograd through each form: the gradients of Σ y ⊙ w for x and all seven parameters."""
    params = lru_params(500, 5, 3, 2, DTYPES[dtype], device=device)
    x = signal(501, 2, 9, 3, DTYPES[dtype], device)
    upstream = signal(502, 2, 9, 2, DTYPES[dtype], device)
    tol = CUDA_FLOAT32 if uses_cuda(device) and dtype == "float32" else None
    check.expect(f"gradients through {form} ({dtype} on {device})",
                 lambda m, *a: m.helper("autograd_params", form, *a), (x, params, upstream),
                 tol=tol)


# ------------------------------------------------------------------ linear_scan

def scan_inputs(seed, kind, B, T, N, complex_dtype):
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((B, T, N)) + 1j * rng.standard_normal((B, T, N))
    if kind == "constant":  # the LRU's case: one λ per channel, |λ| < 1
        a = rng.uniform(0.5, 0.99, N) * np.exp(1j * rng.uniform(-np.pi, np.pi, N))
    elif kind == "varying-real":
        a = rng.uniform(-1.1, 1.1, (B, T, N))
        b = b.real
    elif kind == "varying-complex":
        a = rng.uniform(0.3, 1.0, (B, T, N)) * np.exp(1j * rng.uniform(-np.pi, np.pi, (B, T, N)))
    else:  # "broadcast": one coefficient per step, shared by the batch
        a = rng.uniform(0.3, 1.0, (1, T, N)) * np.exp(1j * rng.uniform(-1.0, 1.0, (1, T, N)))
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}[complex_dtype]

    def as_tensor(v):
        return torch.from_numpy(np.asarray(v)).to(complex_dtype if np.iscomplexobj(v) else real)

    return as_tensor(a), as_tensor(b)


@pytest.mark.parametrize("kind", ["constant", "varying-real", "varying-complex", "broadcast"])
@pytest.mark.parametrize("T", [1, 2, 5, 8, 16, 31])
def test_linear_scan_values(check, kind, T):
    a, b = scan_inputs(600 + T, kind, 2, T, 3, torch.complex128)
    check.expect(f"linear_scan, a {kind} {tuple(a.shape)}, T = {T}",
                 lambda m, a, b: m.linear_scan(a, b), (a, b), oracle=oracle_scan,
                 tol=FLOAT64_FORMS, time_axis=1)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_linear_scan_device_and_dtype(check, dtype, device):
    a, b = scan_inputs(700, "constant", 3, 100, 8, getattr(torch, dtype))
    tol = CUDA_FLOAT32 if uses_cuda(device) and dtype == "complex64" else None
    check.expect(f"linear_scan ({dtype} on {device}, T = 100)", lambda m, a, b: m.linear_scan(a, b),
                 (a.to(device), b.to(device)), tol=tol, time_axis=1)


def test_linear_scan_has_no_loop_over_time(student):
    """Counted beside the student's code: torch calls and lines run in the submission's file, at
    T = 256 and at 16 times that. ⌈log₂ T⌉ rounds of a few whole-tensor operations grow by a
    handful of rounds (8 → 12); a Python loop over t grows 16-fold."""
    counts = {}
    for T in (256, 4096):
        a = torch.full((4,), 0.9 + 0.1j, dtype=torch.complex64)
        b = torch.ones(1, T, 4, dtype=torch.complex64)
        counts[T] = student.helper("count_work", "linear_scan", (a, b))
    for what in ("torch_calls", "lines"):
        short, long = counts[256][what], counts[4096][what]
        if long > 2 * short + 20:
            label = "torch calls" if what == "torch_calls" else "lines of your file run"
            raise CheckFailure(
                f"linear_scan: {short} {label} at T = 256 but {long} at T = 4,096: the work grows "
                "with T, so something loops over time in Python. The lab asks for ⌈log₂ T⌉ "
                "parallel rounds, each a few operations on whole tensors (slices along dim 1, "
                "torch.cat).")

"""Public tests for lab 7. Run them with:  pytest assignments/lab7

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab7.npz, computed by the course's reference solution; the last test compares
your three forms of the layer with each other.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them.
"""

import math

import numpy as np
import pytest
import torch

from rnngrade.testing import CheckFailure, assert_outputs

STUDENT_MODULE = "lru"

FORMS = ("lru_forward_loop", "lru_forward_fft", "lru_forward_scan")
PARAMETER_SHAPES = {"nu_log": (64,), "theta_log": (64,), "B_re": (64, 4), "B_im": (64, 4),
                    "C_re": (3, 64), "C_im": (3, 64), "D": (3, 4)}


def check_case(student, vectors, name, what):
    case = vectors.case(name)
    got = getattr(student, case.function)(*case.args)
    assert_outputs(got, case.outputs, f"{case.function} ({what}, case {name})", inputs=case.args)


def random_parameters(rng, N, d_in, d_out):
    """float64 LRU parameters with |λ| in [0.6, 0.99] and phases in [0.05, 1]."""
    modulus = rng.uniform(0.6, 0.99, N)
    values = {"nu_log": np.log(-np.log(modulus)), "theta_log": np.log(rng.uniform(0.05, 1.0, N)),
              "B_re": rng.standard_normal((N, d_in)), "B_im": rng.standard_normal((N, d_in)),
              "C_re": rng.standard_normal((d_out, N)), "C_im": rng.standard_normal((d_out, N)),
              "D": rng.standard_normal((d_out, d_in))}
    return {k: torch.from_numpy(v) for k, v in values.items()}


@pytest.mark.points(2)
def test_lru_lambda(student, vectors):
    check_case(student, vectors, "lambda_float64", "float64 in, complex128 out")
    check_case(student, vectors, "lambda_float32", "float32 in, complex64 out")


@pytest.mark.points(2)
def test_lru_gamma(student, vectors):
    check_case(student, vectors, "gamma_float64", "float64")
    check_case(student, vectors, "gamma_float32", "float32")


@pytest.mark.points(3)
def test_init_lru_shapes_and_ring(student):
    params = student.init_lru(64, 4, 3, generator=torch.Generator().manual_seed(0))
    if params is None:
        raise CheckFailure("init_lru returns None — looks unfinished")
    if not isinstance(params, dict) or set(params) != set(PARAMETER_SHAPES):
        raise CheckFailure(f"init_lru should return a dict with the keys "
                           f"{sorted(PARAMETER_SHAPES)}, got "
                           f"{sorted(params) if isinstance(params, dict) else type(params)}")
    for key, shape in PARAMETER_SHAPES.items():
        if tuple(params[key].shape) != shape:
            raise CheckFailure(f"init_lru(64, 4, 3)[{key!r}] has shape "
                               f"{tuple(params[key].shape)}, expected {shape}")
    total = sum(value.numel() for value in params.values())
    if total != 1036:
        raise CheckFailure(f"init_lru(64, 4, 3) holds {total} numbers, expected 1,036")
    modulus = torch.exp(-torch.exp(params["nu_log"].double()))
    phase = torch.exp(params["theta_log"].double())
    # float32 parameters: |λ| and the phase come back to ~1e-7; 1e-6 of slack at the edges
    if modulus.min() < 0.9 - 1e-6 or modulus.max() > 0.999 + 1e-6:
        raise CheckFailure(f"init_lru: |λ| = exp(−exp(nu_log)) ranges over "
                           f"[{modulus.min():.4f}, {modulus.max():.4f}], expected inside the "
                           "ring [r_min, r_max] = [0.9, 0.999]")
    if phase.min() < -1e-6 or phase.max() > math.pi / 10 + 1e-6:
        raise CheckFailure(f"init_lru: the phase exp(theta_log) ranges over "
                           f"[{phase.min():.4f}, {phase.max():.4f}], expected inside "
                           f"[0, max_phase] = [0, {math.pi / 10:.4f}]")
    # variances: B entries 1/(2·d_in) = 1/8, C entries 1/N = 1/64. A sample variance of n ≥ 384
    # normal numbers is within 8% (one standard deviation) of the true one; a factor of 2 is
    # never reached by chance, while randn scaled by the variance instead of the standard
    # deviation is off by 8x (B) and 64x (C).
    for name, keys, variance in (("B", ("B_re", "B_im"), 1 / 8), ("C", ("C_re", "C_im"), 1 / 64)):
        values = torch.cat([params[k].double().reshape(-1) for k in keys])
        ratio = values.var().item() / variance
        if not 0.5 < ratio < 2.0:
            raise CheckFailure(f"init_lru(64, 4, 3): the entries of {name}_re and {name}_im have "
                               f"variance {values.var().item():.4g}, expected {variance:.4g} "
                               f"({ratio:.3g}x); torch.randn has variance 1: multiply it by the "
                               "standard deviation")


@pytest.mark.points(4)
def test_lru_forward_loop(student, vectors):
    check_case(student, vectors, "loop_float64", "B = 2, T = 5, float64")
    check_case(student, vectors, "loop_float32", "B = 1, T = 9, float32")


@pytest.mark.points(4)
def test_lru_forward_fft(student, vectors):
    check_case(student, vectors, "fft_float64", "B = 2, T = 5, float64")
    check_case(student, vectors, "fft_float32", "B = 1, T = 9, float32")


@pytest.mark.points(4)
def test_linear_scan(student, vectors):
    check_case(student, vectors, "scan_constant_complex", "constant complex a of shape (N,), T = 7")
    check_case(student, vectors, "scan_time_varying_real", "a real a_t for every step, T = 6")
    check_case(student, vectors, "scan_single_step", "T = 1, float32")


@pytest.mark.points(3)
def test_lru_forward_scan(student, vectors):
    check_case(student, vectors, "scan_form_float64", "B = 2, T = 5, float64")
    check_case(student, vectors, "scan_form_float32", "B = 1, T = 9, float32")


@pytest.mark.points(3)
def test_three_forms_agree(student, rng):
    params = random_parameters(rng, N=8, d_in=3, d_out=2)
    x = torch.from_numpy(rng.standard_normal((2, 50, 3)))
    loop = student.lru_forward_loop(x, params)
    for form in FORMS[1:]:
        got = getattr(student, form)(x, params)
        assert_outputs(got, loop, f"your {form} against your lru_forward_loop (B = 2, T = 50, "
                       "float64)", inputs=(x, params))

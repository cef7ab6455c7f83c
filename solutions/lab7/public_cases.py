"""Inputs of lab7's public test vectors: ``CASES[name] = (function_name, args)``.

init_lru is not here: it draws random numbers from a generator, so its public tests check
shapes and distributions directly. All other inputs are built from seeded NumPy generators and
turned into CPU tensors.
"""

import numpy as np
import torch


def _lru_params(rng: np.random.Generator, N: int, d_in: int, d_out: int, dtype) -> dict:
    """LRU parameters shaped as in the paper's initialisation (|λ| in [0.5, 0.99], small phases)."""
    modulus_sq = rng.uniform(0.5**2, 0.99**2, N)
    params = {
        "nu_log": np.log(-0.5 * np.log(modulus_sq)),
        "theta_log": np.log(rng.uniform(0.05, np.pi / 4, N)),
        "B_re": rng.standard_normal((N, d_in)) / np.sqrt(2 * d_in),
        "B_im": rng.standard_normal((N, d_in)) / np.sqrt(2 * d_in),
        "C_re": rng.standard_normal((d_out, N)) / np.sqrt(N),
        "C_im": rng.standard_normal((d_out, N)) / np.sqrt(N),
        "D": rng.standard_normal((d_out, d_in)) / np.sqrt(d_in),
    }
    return {name: torch.from_numpy(value.astype(dtype)) for name, value in params.items()}


def _tensor(array: np.ndarray, dtype) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array.astype(dtype)))


_rng = np.random.default_rng(7007)

_p64 = _lru_params(_rng, N=4, d_in=3, d_out=2, dtype=np.float64)
_x64 = _tensor(_rng.standard_normal((2, 5, 3)), np.float64)
_p32 = _lru_params(_rng, N=6, d_in=2, d_out=3, dtype=np.float32)
_x32 = _tensor(_rng.standard_normal((1, 9, 2)), np.float32)

_lam = _rng.uniform(0.5, 0.95, 4) * np.exp(1j * _rng.uniform(-1.0, 1.0, 4))

CASES: dict[str, tuple] = {
    "lambda_float64": (
        "lru_lambda",
        (
            _tensor(_rng.normal(-1.0, 1.5, 6), np.float64),
            _tensor(_rng.normal(-1.0, 1.0, 6), np.float64),
        ),
    ),
    "lambda_float32": (
        "lru_lambda",
        (
            _tensor(_rng.normal(-1.0, 1.5, 5), np.float32),
            _tensor(_rng.normal(-1.0, 1.0, 5), np.float32),
        ),
    ),
    "gamma_float64": ("lru_gamma", (_tensor(_rng.normal(-2.0, 2.0, 6), np.float64),)),
    "gamma_float32": ("lru_gamma", (_tensor(_rng.normal(-2.0, 2.0, 5), np.float32),)),
    "loop_float64": ("lru_forward_loop", (_x64, _p64)),
    "loop_float32": ("lru_forward_loop", (_x32, _p32)),
    "fft_float64": ("lru_forward_fft", (_x64, _p64)),
    "fft_float32": ("lru_forward_fft", (_x32, _p32)),
    # a constant complex coefficient (N,), as the LRU uses it; T = 7 is not a power of two
    "scan_constant_complex": (
        "linear_scan",
        (
            _tensor(_lam, np.complex128),
            _tensor(
                _rng.standard_normal((2, 7, 4)) + 1j * _rng.standard_normal((2, 7, 4)),
                np.complex128,
            ),
        ),
    ),
    # a different real coefficient at every step
    "scan_time_varying_real": (
        "linear_scan",
        (
            _tensor(_rng.uniform(-1.0, 1.0, (2, 6, 3)), np.float64),
            _tensor(_rng.standard_normal((2, 6, 3)), np.float64),
        ),
    ),
    "scan_single_step": (
        "linear_scan",
        (
            _tensor(_rng.uniform(0.0, 1.0, 3), np.float32),
            _tensor(_rng.standard_normal((2, 1, 3)), np.float32),
        ),
    ),
    "scan_form_float64": ("lru_forward_scan", (_x64, _p64)),
    "scan_form_float32": ("lru_forward_scan", (_x32, _p32)),
}

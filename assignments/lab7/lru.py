# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab7` to check.
"""Lab 7 — the linear recurrent unit (LRU, Orvieto et al., 2023).

The LRU is a recurrent layer whose recurrence is *linear* and *diagonal*:

    u_t = γ ⊙ (B x_t)                  (N,)  complex
    h_t = λ ⊙ h_{t−1} + u_t            (N,)  complex, h_0 = 0
    y_t = Re(C h_t) + D x_t            (d_out,) real

Because it is linear, the same map can be computed three ways: a loop over time, a causal
convolution with the kernel λ^k (done with FFTs), or a parallel (associative) scan.

Everything is torch and batch-first: an input ``x`` has shape (B, T, d_in) and an output
(B, T, d_out). ``params`` is a dict of real tensors

    nu_log    (N,)          |λ| = exp(−exp(nu_log))
    theta_log (N,)          arg λ = exp(theta_log)
    B_re, B_im (N, d_in)    B = B_re + i·B_im
    C_re, C_im (d_out, N)   C = C_re + i·C_im
    D         (d_out, d_in)

A float32 input computes in complex64 and returns float32; float64 computes in complex128 and
returns float64. Results live on the input's device (CPU or GPU). No function modifies its
arguments.
"""

from __future__ import annotations

import math

import torch

Tensor = torch.Tensor


def _params_like(params: dict[str, Tensor], x: Tensor) -> dict[str, Tensor]:
    """The parameters converted to the dtype and device of ``x`` (gradients still flow back)."""
    return {name: value.to(device=x.device, dtype=x.dtype) for name, value in params.items()}


def lru_lambda(nu_log: Tensor, theta_log: Tensor) -> Tensor:
    """The diagonal recurrence coefficients λ.

    nu_log, theta_log: real tensors of shape (N,)
    Returns the complex tensor λ = exp(−exp(nu_log) + i·exp(theta_log)) of shape (N,)
    (complex64 for float32 inputs, complex128 for float64).

    Its modulus is |λ| = exp(−exp(nu_log)), which is < 1 for every real nu_log, so the
    recurrence can never blow up; its phase is exp(theta_log).
    """
    raise NotImplementedError("lru_lambda: not implemented yet — replace this line with your code")


def lru_gamma(nu_log: Tensor) -> Tensor:
    """The input normalisation γ = sqrt(1 − |λ|²).

    nu_log: real tensor (N,)
    Returns a real tensor (N,) of the same dtype. With |λ|² = exp(−2·exp(nu_log)), γ scales the
    input so that a state driven by white noise keeps roughly unit size even when |λ| is close
    to 1. (``-torch.expm1(v)`` computes 1 − exp(v) accurately when v is close to 0.)
    """
    raise NotImplementedError("lru_gamma: not implemented yet — replace this line with your code")


def init_lru(
    N: int,
    d_in: int,
    d_out: int,
    r_min: float = 0.9,
    r_max: float = 0.999,
    max_phase: float = math.pi / 10,
    generator: torch.Generator | None = None,
) -> dict[str, Tensor]:
    """Random LRU parameters, as in the paper.

    N: state size; d_in, d_out: input and output widths
    r_min, r_max: |λ| lies in the ring r_min ≤ |λ| ≤ r_max, with |λ|² uniform on [r_min², r_max²]
                  (so the eigenvalues are spread uniformly over the ring's *area*)
    max_phase:    the phase of λ is uniform on [0, max_phase]
    generator:    the torch.Generator that all random numbers come from (None: torch's global one)

    Returns a dict of tensors in torch's default dtype (float32 unless changed):
    nu_log (N,) = log(−log|λ|), theta_log (N,) = log(phase), B_re, B_im (N, d_in) normal with
    variance 1/(2·d_in), C_re, C_im (d_out, N) with variance 1/N, D (d_out, d_in) with variance
    1/d_in. N = 64, d_in = 4, d_out = 3 gives 1,036 numbers.
    """
    raise NotImplementedError("init_lru: not implemented yet — replace this line with your code")


def lru_forward_loop(x: Tensor, params: dict[str, Tensor]) -> Tensor:
    """The LRU, one time step after the other.

    x:      (B, T, d_in) real input (float32 or float64)
    params: the dict described in the module docstring
    Returns y (B, T, d_out), real, dtype of x, on x's device:

        u_t = γ ⊙ (B x_t),   h_t = λ ⊙ h_{t−1} + u_t  (h_0 = 0),   y_t = Re(C h_t) + D x_t

    with λ = lru_lambda(nu_log, theta_log), γ = lru_gamma(nu_log), B = B_re + i·B_im,
    C = C_re + i·C_im, computed in complex64 (float32 input) or complex128 (float64 input).
    """
    raise NotImplementedError("lru_forward_loop: not implemented yet — replace this line with your code")


def lru_forward_fft(x: Tensor, params: dict[str, Tensor]) -> Tensor:
    """The LRU as a causal convolution, computed with FFTs.

    x, params, result: as for ``lru_forward_loop`` (the same map, up to rounding).

    Unrolling the recurrence gives h_t = Σ_{k=0..t} λ^k ⊙ u_{t−k}: a causal convolution of the
    sequence u with the kernel K_k = λ^k (k = 0 … T−1, one kernel per state channel). An FFT
    multiplies transforms, which is a *circular* convolution; padding both sequences with zeros
    to length 2T (``n=2*T``) makes the wrapped-around part land in entries T … 2T−1, which are
    dropped: keep the first T entries of the inverse FFT.
    """
    raise NotImplementedError("lru_forward_fft: not implemented yet — replace this line with your code")


def linear_scan(a: Tensor, b: Tensor) -> Tensor:
    """All states of the linear recurrence h_t = a_t ⊙ h_{t−1} + b_t (h_0 = 0), in parallel.

    a: coefficients, broadcastable to b: (N,) for a constant λ, or (B, T, N) for one per step
    b: inputs (B, T, N); time is dim 1. Real or complex.
    Returns h (B, T, N) (dtype: the promotion of a's and b's dtypes).

    A step is the pair (a_t, b_t), meaning "h ↦ a_t·h + b_t". Doing (a₁, b₁) and then (a₂, b₂)
    is the single step (a₁, b₁) ∘ (a₂, b₂) = (a₁a₂, a₂b₁ + b₂), and ∘ is associative. So in round
    r = 0, 1, 2, … every position t combines the pair it holds with the pair held by position
    t − 2^r (when that exists); after ⌈log₂ T⌉ rounds position t holds the composition of steps
    1 … t, whose b-part is h_t. The rounds are a Python loop; time itself is not.
    """
    raise NotImplementedError("linear_scan: not implemented yet — replace this line with your code")


def lru_forward_scan(x: Tensor, params: dict[str, Tensor]) -> Tensor:
    """The LRU computed with ``linear_scan``.

    x, params, result: as for ``lru_forward_loop`` (the same map, up to rounding).
    Compute all u_t at once, get every h_t from linear_scan(λ, u), then y = Re(C h) + D x.
    """
    raise NotImplementedError("lru_forward_scan: not implemented yet — replace this line with your code")

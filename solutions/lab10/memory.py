"""Lab 10 — gradients against lag, and memory set at initialisation.

How far back can a recurrent network reach? This lab measures it three ways:

1. at initialisation, by the size of the gradient that reaches an input ``lag`` steps before
   the loss (``gradient_ratio``, ``cell_state_gradient``, ``orthogonal_rnn_profile``);
2. in closed form, from the retention of one step (half-lives and time constants of the
   forget gate, the GRU's update gate and an LRU eigenvalue);
3. by training on a delayed-recall task (``recall_batch``, ``train_recall``).

Conventions (the README's "Conventions"):

- torch, batch-first, one layer. Weights are a ``state_dict`` of ``nn.RNN``, ``nn.LSTM`` or
  ``nn.GRU`` (keys ``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``), or of
  ``nn.LSTMCell`` for ``cell_state_gradient`` (keys ``weight_ih``, ``weight_hh``, ``bias_ih``,
  ``bias_hh``). PyTorch's gate order is i, f, g, o (LSTM) and r, z, n (GRU); the effective
  forget bias of an LSTM is ``bias_ih_l0[H:2H] + bias_hh_l0[H:2H]``.
- A lag counts steps back from the last one: lag 0 is the last input, lag T − 1 the first.
- Gradient norms are taken in float64, whatever the dtype of the computation.
- Randomness comes only from the arguments (a ``torch.Generator`` or a seed).
- No function modifies its arguments.

``DiagLinearRecurrence`` ships complete: it is the diagonal linear recurrence (LRU style) of
lab 7, as a module, for the recall task.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn

Tensor = torch.Tensor

KINDS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
BLANK = 8  # the recall task's blank token; the symbols are 0..7


class DiagLinearRecurrence(nn.Module):
    """A diagonal complex linear recurrence (LRU style), batch-first: (B, T, d_in) → (B, T, d_out).

    h_t = λ ⊙ h_{t−1} + γ ⊙ (B x_t),  y_t = Re(C h_t) + D x_t,  with N complex modes.
    |λ| is drawn so that |λ|² is uniform on [r_min², r_max²] and arg λ uniform on
    [0, max_phase]; γ = sqrt(1 − |λ|²). The parameters are created in this order, each from
    torch's global generator: |λ| (torch.rand(N)), the phase (torch.rand(N)), B_re, B_im
    (N, d_in), C_re, C_im (d_out, N), D (d_out, d_in).

    ``forward`` computes the recurrence as a causal convolution with the kernel λ^k (FFT);
    ``forward_loop`` runs it step by step. The two agree to rounding.
    """

    def __init__(self, d_in: int, d_out: int, N: int = 64, r_min: float = 0.9,
                 r_max: float = 0.999, max_phase: float = math.pi / 10) -> None:
        super().__init__()
        modulus_sq = torch.rand(N) * (r_max ** 2 - r_min ** 2) + r_min ** 2
        # |λ| = exp(−exp(nu_log)): nu_log = log(−log|λ|) = log(−½ log|λ|²)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(modulus_sq)))
        self.theta_log = nn.Parameter(torch.log(max_phase * torch.rand(N)))
        in_scale, out_scale = math.sqrt(2 * d_in), math.sqrt(N)
        self.B_re = nn.Parameter(torch.randn(N, d_in) / in_scale)
        self.B_im = nn.Parameter(torch.randn(N, d_in) / in_scale)
        self.C_re = nn.Parameter(torch.randn(d_out, N) / out_scale)
        self.C_im = nn.Parameter(torch.randn(d_out, N) / out_scale)
        self.D = nn.Parameter(torch.randn(d_out, d_in) / math.sqrt(d_in))

    def log_lambda(self) -> Tensor:
        """log λ = −exp(nu_log) + i·exp(theta_log), (N,) complex."""
        return torch.complex(-torch.exp(self.nu_log), torch.exp(self.theta_log))

    def _drive(self, x: Tensor) -> Tensor:
        """γ ⊙ (B x_t) for every step: (B, T, N) complex."""
        lam_abs = torch.exp(-torch.exp(self.nu_log))
        gamma = torch.sqrt(1.0 - lam_abs ** 2)
        b_in = torch.complex(self.B_re, self.B_im) * gamma[:, None]
        complex_dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        return x.to(complex_dtype) @ b_in.T.to(complex_dtype)

    def _readout(self, h: Tensor, x: Tensor) -> Tensor:
        c = torch.complex(self.C_re, self.C_im).to(h.dtype)
        return (h @ c.T).real + x @ self.D.T.to(x.dtype)

    def forward_loop(self, x: Tensor) -> Tensor:
        """The recurrence one step at a time (constant memory; what generation uses)."""
        u = self._drive(x)
        lam = torch.exp(self.log_lambda()).to(u.dtype)
        h = torch.zeros(u.shape[0], u.shape[2], dtype=u.dtype, device=u.device)
        states = []
        for t in range(u.shape[1]):
            h = lam * h + u[:, t]
            states.append(h)
        return self._readout(torch.stack(states, dim=1), x)

    def forward(self, x: Tensor) -> Tensor:
        """The recurrence as a causal convolution, computed with FFTs of length 2T."""
        u = self._drive(x)
        steps = x.shape[1]
        k = torch.arange(steps, dtype=u.real.dtype, device=u.device)[:, None]
        kernel = torch.exp(k * self.log_lambda().to(u.dtype)[None, :])  # λ^k, (T, N)
        spectrum = torch.fft.fft(u, n=2 * steps, dim=1) * torch.fft.fft(kernel, n=2 * steps,
                                                                         dim=0)[None]
        h = torch.fft.ifft(spectrum, dim=1)[:, :steps]
        return self._readout(h, x)


# ---------------------------------------------------------------------------- gradients


def gradient_ratio(kind: str, weights: dict[str, Tensor], inputs: Tensor,
                   readout: Tensor) -> np.ndarray:
    """How much of the loss's gradient reaches each input, relative to the last one.

    kind:    "rnn", "lstm" or "gru": the layer is nn.RNN (tanh), nn.LSTM or nn.GRU,
             one layer, batch_first, with these weights loaded.
    weights: the layer's state_dict (weight_ih_l0 (G·H, d), weight_hh_l0 (G·H, H),
             bias_ih_l0, bias_hh_l0 (G·H,)), G = 1, 4 or 3.
    inputs:  (B, T, d); the layer runs from a zero state in the inputs' dtype and on their
             device.
    readout: (H,), the fixed vector v of the loss L = Σ_b v · h_T^(b) (the last step's output).

    Returns a float64 NumPy array (T,) indexed by lag:
    ``ratio[lag] = ‖∂L/∂x_{T−1−lag}‖ / ‖∂L/∂x_{T−1}‖``, each norm over the batch and the
    features, computed in float64 (squares of gradients near 1e-25 underflow in float32).
    ratio[0] = 1 unless the last input's gradient is 0; an entry 0/0 is 0.
    """
    # BEGIN SOLUTION
    hidden = weights["weight_hh_l0"].shape[1]
    layer = KINDS[kind](inputs.shape[2], hidden, batch_first=True)
    layer = layer.to(device=inputs.device, dtype=inputs.dtype)
    layer.load_state_dict({k: v.detach().to(device=inputs.device, dtype=inputs.dtype)
                           for k, v in weights.items()})
    x = inputs.detach().clone().requires_grad_(True)
    out, _ = layer(x)
    loss = (out[:, -1, :] @ readout.to(device=inputs.device, dtype=inputs.dtype)).sum()
    (grad,) = torch.autograd.grad(loss, x)
    norms = torch.linalg.vector_norm(grad.detach().cpu().double(), dim=(0, 2)).numpy()
    by_lag = norms[::-1]
    last = by_lag[0]
    ratio = np.zeros_like(by_lag)
    if last > 0:
        ratio = by_lag / last
    else:
        ratio[by_lag > 0] = np.inf
    return np.ascontiguousarray(ratio, dtype=np.float64)
    # END SOLUTION


def cell_state_gradient(weights: dict[str, Tensor], inputs: Tensor) -> float:
    """‖∂(Σ c_T)/∂c_0‖ / √H for an nn.LSTMCell run over ``inputs`` from h_0 = 0, c_0 = 0.

    weights: the state_dict of nn.LSTMCell(d, H): weight_ih (4H, d), weight_hh (4H, H),
             bias_ih, bias_hh (4H,).
    inputs:  (B, T, d): the cell runs T steps, x_t = inputs[:, t].
    The norm is over the batch and the H units, in float64; it is divided by √H (not √(BH)).
    Returns a Python float. Compare it with σ(b_f)^T: along the cell path the gradient is
    multiplied by the forget gate at every step.
    """
    # BEGIN SOLUTION
    hidden = weights["weight_hh"].shape[1]
    cell = nn.LSTMCell(inputs.shape[2], hidden).to(device=inputs.device, dtype=inputs.dtype)
    cell.load_state_dict({k: v.detach().to(device=inputs.device, dtype=inputs.dtype)
                          for k, v in weights.items()})
    zeros = torch.zeros(inputs.shape[0], hidden, device=inputs.device, dtype=inputs.dtype)
    c0 = zeros.clone().requires_grad_(True)
    h, c = zeros, c0
    for t in range(inputs.shape[1]):
        h, c = cell(inputs[:, t].detach(), (h, c))
    (grad,) = torch.autograd.grad(c.sum(), c0)
    return float(torch.linalg.vector_norm(grad.detach().cpu().double())) / math.sqrt(hidden)
    # END SOLUTION


def orthogonal_rnn_profile(H: int, rho: float, sigma_x: float, T: int,
                           generator: torch.Generator) -> np.ndarray:
    """The gradient of a tanh RNN with W = ρQ (Q orthogonal) against lag, on random inputs.

    Draws, in this order, all float64 from ``generator``:
      1. A = torch.randn(H, H); Q, R = torch.linalg.qr(A); Q's columns are multiplied by
         sign(diag(R)) (so that Q is unique); W = ρ·Q;
      2. the inputs: σ_x · torch.randn(T, H), one row per step;
      3. the gradient: g = torch.randn(H), divided by its norm.
    Forward: h_0 = 0, h_t = tanh(W h_{t−1} + x_t) for t = 1..T.
    Backward: g_T = g on h_T; g_{t−1} = Wᵀ ((1 − h_t²) ⊙ g_t).
    Returns a float64 NumPy array (T,): profile[lag] = ‖g_{T−lag}‖ / ‖g_T‖, lag = 0..T−1.
    """
    # BEGIN SOLUTION
    a = torch.randn(H, H, generator=generator, dtype=torch.float64)
    q, r = torch.linalg.qr(a)
    q = q * torch.sign(torch.diagonal(r))[None, :]
    w = rho * q
    xs = sigma_x * torch.randn(T, H, generator=generator, dtype=torch.float64)
    g = torch.randn(H, generator=generator, dtype=torch.float64)
    g = g / torch.linalg.vector_norm(g)
    h = torch.zeros(H, dtype=torch.float64)
    states = []
    for t in range(T):
        h = torch.tanh(w @ h + xs[t])
        states.append(h)
    norms = [torch.linalg.vector_norm(g).item()]
    for t in range(T - 1, 0, -1):
        g = w.T @ ((1.0 - states[t] ** 2) * g)
        norms.append(torch.linalg.vector_norm(g).item())
    profile = np.asarray(norms, dtype=np.float64)
    return profile / profile[0]
    # END SOLUTION


# ---------------------------------------------------------------------------- closed forms


def half_life(retention: np.ndarray | float) -> np.ndarray:
    """Steps n after which retention^n = 1/2: ln 0.5 / ln f (float64, vectorised).

    retention: f in (0, 1), a number or an array. Returns a float64 array of its shape (a
    NumPy float64 for a number). Not the time constant 1/(1 − f), which is larger.
    """
    # BEGIN SOLUTION
    f = np.asarray(retention, dtype=np.float64)
    return np.log(0.5) / np.log(f)
    # END SOLUTION


def forget_bias_half_life(forget_bias: np.ndarray | float) -> np.ndarray:
    """The half-life of an LSTM cell whose forget gate sits at σ(b_f): half_life(σ(b_f))."""
    # BEGIN SOLUTION
    b = np.asarray(forget_bias, dtype=np.float64)
    return half_life(1.0 / (1.0 + np.exp(-b)))
    # END SOLUTION


def time_constant(forget_bias: np.ndarray | float) -> np.ndarray:
    """1/(1 − σ(b_f)) = 1 + e^{b_f} steps (float64, vectorised)."""
    # BEGIN SOLUTION
    b = np.asarray(forget_bias, dtype=np.float64)
    return 1.0 + np.exp(b)
    # END SOLUTION


def chrono_forget_bias(T: np.ndarray | float) -> np.ndarray:
    """The chrono initialisation: b_f = ln(T − 1) for dependencies of about T steps."""
    # BEGIN SOLUTION
    steps = np.asarray(T, dtype=np.float64)
    return np.log(steps - 1.0)
    # END SOLUTION


def memory_after(steps: np.ndarray | float, forget_bias: np.ndarray | float) -> np.ndarray:
    """σ(b_f)^steps: the cell-path factor after ``steps`` steps (float64, broadcast)."""
    # BEGIN SOLUTION
    n = np.asarray(steps, dtype=np.float64)
    b = np.asarray(forget_bias, dtype=np.float64)
    return (1.0 / (1.0 + np.exp(-b))) ** n
    # END SOLUTION


def gru_half_life(update_gate: np.ndarray | float) -> np.ndarray:
    """The half-life of a GRU unit whose update gate sits at u (the classic convention,
    h_t = (1 − u) h_{t−1} + u h̃_t, as in lab 4): the retention is 1 − u."""
    # BEGIN SOLUTION
    u = np.asarray(update_gate, dtype=np.float64)
    return half_life(1.0 - u)
    # END SOLUTION


def lru_half_life(lam_abs: np.ndarray | float) -> np.ndarray:
    """The half-life of an LRU mode with eigenvalue modulus |λ|: half_life(|λ|)."""
    # BEGIN SOLUTION
    return half_life(np.asarray(lam_abs, dtype=np.float64))
    # END SOLUTION


def mode_period(theta: np.ndarray | float) -> np.ndarray:
    """The period 2π/θ, in steps, of a mode rotating by θ radians per step."""
    # BEGIN SOLUTION
    angle = np.asarray(theta, dtype=np.float64)
    return 2.0 * np.pi / angle
    # END SOLUTION


# ---------------------------------------------------------------------------- recall


def recall_batch(batch: int, lag: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """A batch of the delayed-recall task.

    The first token of each row is a symbol 0..7, drawn as
    ``torch.randint(0, 8, (batch,), generator=generator)`` (one draw, nothing else drawn);
    the other ``lag`` tokens are the blank, 8. The target is the first token.
    Returns x (batch, lag + 1) int64 and y (batch,) int64.
    """
    # BEGIN SOLUTION
    first = torch.randint(0, 8, (batch,), generator=generator)
    x = torch.full((batch, lag + 1), BLANK, dtype=torch.int64)
    x[:, 0] = first
    return x, first.clone()
    # END SOLUTION


def train_recall(kind: str, lag: int, forget_bias: float = 1.0, updates: int = 400,
                 seed: int = 0) -> tuple[float, int, list[float]]:
    """Train a small model on delayed recall at ``lag``; return (test_acc, solved, losses).

    The model (built right after ``torch.manual_seed(seed)``, in this order):
      Embedding(9, 16), then the core, then the head, and it predicts from the last step.
      kind "rnn":  nn.RNN(16, 64, batch_first=True),  head nn.Linear(64, 8);
      kind "lstm": nn.LSTM(16, 64, batch_first=True), head nn.Linear(64, 8), with
                   bias_ih_l0[64:128] = forget_bias and bias_hh_l0[64:128] = 0;
      kind "lin":  DiagLinearRecurrence(16, 64, N=64), head GELU then nn.Linear(64, 8).
    Training: the data generator is torch.Generator().manual_seed(seed + 1); each update draws
    recall_batch(64, lag, generator), takes the cross-entropy of the head's logits, and steps
    AdamW (lr 3e-3, other settings torch's defaults) after clipping the global gradient norm
    to 1.0.
    losses: the ``updates`` training losses (Python floats), in order.
    solved: the first update u ≥ 10 (counted from 1) whose mean of losses u−9..u is below
            0.05; −1 if there is none.
    test_acc: accuracy (Python float) on recall_batch(1000, lag,
              torch.Generator().manual_seed(12345)) after training, without gradients.
    """
    # BEGIN SOLUTION
    torch.manual_seed(seed)
    embed = nn.Embedding(9, 16)
    if kind == "lin":
        core: nn.Module = DiagLinearRecurrence(16, 64, N=64)
        head: nn.Module = nn.Sequential(nn.GELU(), nn.Linear(64, 8))
    else:
        core = KINDS[kind](16, 64, batch_first=True)
        head = nn.Linear(64, 8)
        if kind == "lstm":
            with torch.no_grad():
                core.bias_ih_l0[64:128].fill_(forget_bias)
                core.bias_hh_l0[64:128].zero_()
    model = nn.ModuleList([embed, core, head])

    def logits(tokens: Tensor) -> Tensor:
        out = core(embed(tokens))
        if kind != "lin":
            out = out[0]
        return head(out[:, -1])

    data = torch.Generator().manual_seed(seed + 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses: list[float] = []
    solved = -1
    for update in range(1, updates + 1):
        x, y = recall_batch(64, lag, data)
        loss = nn.functional.cross_entropy(logits(x), y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if solved < 0 and update >= 10 and float(np.mean(losses[-10:])) < 0.05:
            solved = update
    x, y = recall_batch(1000, lag, torch.Generator().manual_seed(12345))
    with torch.no_grad():
        test_acc = (logits(x).argmax(-1) == y).double().mean().item()
    return float(test_acc), solved, losses
    # END SOLUTION

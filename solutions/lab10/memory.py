"""Lab 10 — gradients against lag, and memory set at initialisation.

How far back can a recurrent network reach? This lab measures it three ways:

1. at initialisation, by the size of the gradient that reaches an input ``lag`` steps before
   the loss (``gradient_ratio``, ``cell_state_gradient``, ``orthogonal_rnn_profile``);
2. in closed form, from the retention of one step (half-lives and time constants of the
   forget gate, the GRU's update gate and an LRU eigenvalue);
3. by training on a delayed-recall task (``recall_batch``, ``train_recall``);
4. optionally (ungraded), by training a character RNN and an LSTM on lab 9's maintenance log
   and checking whether their samples close each line with the tag that opened it
   (``log_streams``, ``closing_tag_accuracy``, ``train_log_model``; ``make_log`` ships filled
   in).

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
import re

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


# ------------------------------------------------------------- the log (optional, not graded)
# The grader never calls log_streams, closing_tag_accuracy or train_log_model; a submission may
# leave them as they are (README section 6).

TAGS = ["P1", "P2", "P3", "P4", "F1", "F2", "C1", "C2"]
# quantity -> (unit, lowest value, highest value, value from which the status is "high")
QUANTITIES = {
    "temp": ("C", 40.0, 90.0, 75.0),
    "vib": ("mm/s", 0.5, 9.9, 7.1),
    "pres": ("bar", 1.0, 6.0, 5.0),
}
# the optional note before the status: four notes, and the empty note three times in seven
NOTES = ["after restart", "during wash", "operator check", "night shift", "", "", ""]

# One well-formed line: tag, quantity, value with one decimal, unit, optional note, status and
# closing tag. Groups: (tag, quantity, value, unit, status, closing tag).
LINE = re.compile(
    r"^([PFC][1-4]) (temp|vib|pres) (\d+\.\d) (C|mm/s|bar) "
    r"(?:(?:after restart|during wash|operator check|night shift) )?"
    r"(ok|high) /([PFC][1-4])$"
)


def make_log(n_lines: int, seed: int) -> str:
    """Lab 9's maintenance log: ``n_lines`` lines, each ended by a newline.

    Per line, from ``np.random.default_rng(seed)``, in this order: the tag (one of 8), the
    quantity (one of 3), the value (uniform on the quantity's range, rounded to one decimal) and
    the note (one of 7). The unit, the status and the closing tag follow from those draws, e.g.
    ``F2 pres 4.0 bar night shift ok /F2``. ``make_log(1500, 0)`` has 46,196 characters.
    """
    rng = np.random.default_rng(seed)
    names = list(QUANTITIES)
    lines = []
    for _ in range(n_lines):
        tag = TAGS[rng.integers(len(TAGS))]
        quantity = names[rng.integers(len(names))]
        unit, low, high, threshold = QUANTITIES[quantity]
        value = round(float(rng.uniform(low, high)), 1)
        note = NOTES[rng.integers(len(NOTES))]
        status = "high" if value >= threshold else "ok"
        fields = [tag, quantity, f"{value:.1f}", unit, note, status, "/" + tag]
        lines.append(" ".join(f for f in fields if f))
    return "\n".join(lines) + "\n"


def log_streams(text: str, batch: int = 32) -> tuple[list[str], Tensor, Tensor, Tensor]:
    """The text as training streams and a validation tail, as lab 9 lays it out.

    chars: the distinct characters of the whole text, sorted by code point; a character's index
           in ``chars`` is its token. V = len(chars).
    The last ``len(text) // 10`` tokens are the validation tail ``val`` (N_val,); the rest,
    ``train``, is cut into ``batch`` parallel streams of L = (len(train) − 1) // batch tokens:
    row b of ``streams_x`` is train[b·L : (b+1)·L] and row b of ``streams_y`` is the same
    window one token later, train[b·L + 1 : (b+1)·L + 1].
    Returns (chars, streams_x (batch, L), streams_y (batch, L), val (N_val,)), tokens int64.
    """
    # BEGIN SOLUTION
    chars = sorted(set(text))
    index = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([index[ch] for ch in text], dtype=torch.int64)
    n_val = len(data) // 10
    train, val = data[: len(data) - n_val], data[len(data) - n_val:]
    length = (len(train) - 1) // batch
    streams_x = train[: batch * length].reshape(batch, length).clone()
    streams_y = train[1: batch * length + 1].reshape(batch, length).clone()
    return chars, streams_x, streams_y, val.clone()
    # END SOLUTION


def closing_tag_accuracy(generated: str) -> float:
    """Among the well-formed lines of ``generated``, the share whose closing tag repeats the
    opening tag.

    The first and the last line are dropped (either may be cut off); a line is well-formed when
    ``LINE`` matches it. Returns a Python float, NaN when no line is well-formed.
    """
    # BEGIN SOLUTION
    lines = generated.split("\n")[1:-1]
    parsed = [m.groups() for m in map(LINE.match, lines) if m]
    if not parsed:
        return math.nan
    return sum(g[0] == g[5] for g in parsed) / len(parsed)
    # END SOLUTION


def train_log_model(kind: str, forget_bias: float, n_updates: int,
                    seed: int = 0) -> tuple[dict[str, list], float]:
    """Train a character model on ``make_log(1500, 0)`` and measure its closing tags.

    Data: ``log_streams(make_log(1500, 0), 32)`` (V = 37, 32 streams of 1,299 tokens,
    4,619 validation tokens).
    Model, built right after ``torch.manual_seed(seed)``, in this order: nn.Embedding(V, 32);
    the core, width 128, batch-first: "rnn" nn.RNN(32, 128) (tanh), "lstm" nn.LSTM(32, 128) with
    bias_ih_l0[128:256] = forget_bias and bias_hh_l0[128:256] = 0, "gru" nn.GRU(32, 128);
    nn.Linear(128, V) on every step. ``forget_bias`` is used by "lstm" only.
    Training, truncated BPTT: update u (from 1) takes chunk k = (u − 1) mod 40 of length 32,
    columns [32k, 32k + 32) of the streams; the state carried in is the previous chunk's last
    state, detached, and zero at k = 0 (the streams wrap round). Loss: the mean cross-entropy
    over the 32 × 32 next-token predictions; the global gradient norm is clipped to 5.0; Adam,
    lr 3e-3 (torch's other defaults).
    Closing-tag accuracy: sample 4,000 characters without gradients, from a zero state with
    "\\n" as the first input, at temperature 0.5 (softmax of logits / 0.5), one
    ``torch.multinomial`` draw per character from ``torch.Generator().manual_seed(seed + 1)``,
    created afresh for each sample; then ``closing_tag_accuracy`` of the sample.
    Returns (history, accuracy):
      history["losses"]: the n_updates training losses (Python floats), in order;
      history["checks"]: (update, validation loss, closing-tag accuracy) after every 500th
        update; the validation loss is the mean cross-entropy of predicting val[1:] from
        val[:-1], one pass from a zero state;
      accuracy: the closing-tag accuracy after the last update (NaN when the sample has no
        well-formed line).
    """
    # BEGIN SOLUTION
    chars, streams_x, streams_y, val = log_streams(make_log(1500, 0), 32)
    vocab, hidden, chunk_len = len(chars), 128, 32
    n_chunks = streams_x.shape[1] // chunk_len
    torch.manual_seed(seed)
    embed = nn.Embedding(vocab, 32)
    core = KINDS[kind](32, hidden, batch_first=True)
    head = nn.Linear(hidden, vocab)
    if kind == "lstm":
        with torch.no_grad():
            core.bias_ih_l0[hidden: 2 * hidden].fill_(forget_bias)
            core.bias_hh_l0[hidden: 2 * hidden].zero_()
    model = nn.ModuleList([embed, core, head])

    def run(tokens: Tensor, state: Tensor | tuple[Tensor, ...] | None
            ) -> tuple[Tensor, Tensor | tuple[Tensor, ...]]:
        out, state = core(embed(tokens), state)
        return head(out), state

    @torch.no_grad()
    def validation_loss() -> float:
        logits, _ = run(val[None, :-1], None)
        return nn.functional.cross_entropy(logits[0], val[1:]).item()

    @torch.no_grad()
    def tag_accuracy() -> float:
        draws = torch.Generator().manual_seed(seed + 1)
        token = torch.tensor([[chars.index("\n")]])
        state: Tensor | tuple[Tensor, ...] | None = None
        out = []
        for _ in range(4000):
            logits, state = run(token, state)
            probs = torch.softmax(logits[0, -1] / 0.5, dim=0)
            token = torch.multinomial(probs, 1, generator=draws)[None, :]
            out.append(chars[int(token.item())])
        return closing_tag_accuracy("".join(out))

    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    carried: Tensor | tuple[Tensor, ...] | None = None
    losses: list[float] = []
    checks: list[tuple[int, float, float]] = []
    accuracy = math.nan
    for update in range(1, n_updates + 1):
        k = (update - 1) % n_chunks
        if k == 0:
            carried = None
        columns = slice(k * chunk_len, (k + 1) * chunk_len)
        logits, state = run(streams_x[:, columns], carried)
        carried = tuple(s.detach() for s in state) if isinstance(state, tuple) \
            else state.detach()
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                           streams_y[:, columns].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        losses.append(loss.item())
        if update % 500 == 0:
            accuracy = tag_accuracy()
            checks.append((update, validation_loss(), accuracy))
    if not checks or checks[-1][0] != n_updates:
        accuracy = tag_accuracy()
    return {"losses": losses, "checks": checks}, accuracy
    # END SOLUTION

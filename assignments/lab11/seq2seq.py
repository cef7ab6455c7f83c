# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab11` to check.
"""Lab 11 — an encoder–decoder with attention: packing, the bottleneck and exposure bias.

The task is reversing a string of 3–12 digits. Tokens: the digits 0–9, ``PAD`` 10, ``BOS`` 11,
``EOS`` 12, so ``V = 13``. Everything is PyTorch and batch-first. A source batch ``src`` is
``(B, 12)`` int64, padded on the right with PAD; ``lens`` ``(B,)`` int64 holds the true lengths
and lives on the CPU (``pack_padded_sequence`` wants it there), whatever the device of the rest.

The model's parameters are a dict of tensors with the keys of PyTorch's ``state_dict`` of the
model in the README (E = 32 embedding width, H = 64 state width, A = 64 attention width,
C = 2H = 128 context width with attention and C = 0 without):

    src_emb.weight (V, E), tgt_emb.weight (V, E)          source and target embeddings
    enc.weight_ih_l0 (3H, E), enc.weight_hh_l0 (3H, H),   the bidirectional GRU encoder,
    enc.bias_ih_l0 (3H,), enc.bias_hh_l0 (3H,)            forward direction, gates (r, z, n)
    enc.*_l0_reverse                                      the same four, backward direction
    init_state.weight (H, 2H), init_state.bias (H,)       s0 = tanh(init_state([h_fwd; h_bwd]))
    cell.weight_ih (3H, E + C), cell.weight_hh (3H, H),   the decoder's GRU cell, input
    cell.bias_ih (3H,), cell.bias_hh (3H,)                [embedding; context]
    out.weight (V, H + C), out.bias (V,)                  logits from [state; context]
    W_a.weight (A, H), U_a.weight (A, 2H), v_a.weight (1, A)   attention only, no biases

Results keep the dtype and device of the parameters. Use torch operations only, so that autograd
reaches every parameter and the code runs on the GPU. No function modifies its arguments.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, BOS, EOS, V = 10, 11, 12, 13
MAX_LEN = 12  # the longest source; decoder inputs and targets have MAX_LEN + 1 positions
ENC_KEYS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def init_params(attention: bool, seed: int, emb: int = 32, hid: int = 64,
                att: int = 64) -> dict[str, torch.Tensor]:
    """The README's model as built by ``torch.manual_seed(seed)`` and PyTorch's default
    initialisation, layer by layer in the README's order; float32, on the CPU. The global torch
    generator is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        ctx = 2 * hid if attention else 0
        layers: dict[str, nn.Module] = {
            "src_emb": nn.Embedding(V, emb), "tgt_emb": nn.Embedding(V, emb),
            "enc": nn.GRU(emb, hid, batch_first=True, bidirectional=True),
            "init_state": nn.Linear(2 * hid, hid), "cell": nn.GRUCell(emb + ctx, hid),
            "out": nn.Linear(hid + ctx, V)}
        if attention:
            layers.update(W_a=nn.Linear(hid, att, bias=False),
                          U_a=nn.Linear(2 * hid, att, bias=False),
                          v_a=nn.Linear(att, 1, bias=False))
        return {f"{name}.{key}": value.detach().clone()
                for name, layer in layers.items() for key, value in layer.state_dict().items()}


def make_reversal_batch(n: int, rng: np.random.Generator, min_len: int,
                        max_len: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                               torch.Tensor]:
    """``n`` random digit strings and their reversals.

    Draws, in this order: ``lens = rng.integers(min_len, max_len + 1, size=n)``, then for each row
    ``digits = rng.integers(0, 10, size=L)``. Returns int64 CPU tensors

        src    (n, 12): the digits, then PAD
        dec_in (n, 13): BOS, the reversed digits, then PAD
        tgt    (n, 13): the reversed digits, EOS, then PAD
        lens   (n,):    the lengths L
    """
    raise NotImplementedError("make_reversal_batch: not implemented yet — replace this line with your code")


@lru_cache(maxsize=16)
def _shell(kind: str, *sizes: int) -> nn.Module:
    """A module without storage (``kind``: "gru", "lstm" or "cell"), to run on weights passed to
    ``torch.func.functional_call``; made once per size."""
    with torch.device("meta"):
        if kind == "cell":
            return nn.GRUCell(*sizes)
        layer = nn.GRU if kind == "gru" else nn.LSTM
        return layer(*sizes, batch_first=True, bidirectional=True)


def _encoder_gru(params: dict[str, torch.Tensor]) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The encoder's ``nn.GRU`` shell (its weights come from ``params``) and its weights."""
    hid, emb = params["enc.weight_hh_l0"].shape[1], params["enc.weight_ih_l0"].shape[1]
    weights = {key + sfx: params[f"enc.{key}{sfx}"] for key in ENC_KEYS for sfx in ("", "_reverse")}
    return _shell("gru", emb, hid), weights


def encode(params: dict[str, torch.Tensor], src: torch.Tensor, lens: torch.Tensor,
           pack: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Run the bidirectional GRU encoder over a padded source batch.

    src: (B, S) int64 on the parameters' device; lens: (B,) int64 on the CPU, 1 ≤ lens ≤ S.
    Returns
        H    (B, S, 2H): the annotations [forward state; backward state] at each position,
             exactly 0 at padded positions;
        mask (B, S) bool: True on real positions (position < length);
        s0   (B, H): tanh(init_state([forward state at the last real position;
             backward state at position 0])).
    With ``pack=True`` the GRU reads a ``pack_padded_sequence(..., enforce_sorted=False)`` input,
    so neither direction ever reads padding. ``pack=False`` is the deliberate mistake of the
    README's last part: the GRU runs over the padded batch as it is (its annotations are still
    zeroed on padding, and its ``h_n`` is what the GRU holds after the last column).
    """
    raise NotImplementedError("encode: not implemented yet — replace this line with your code")


def _gru_cell(x: torch.Tensor, h: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
    """``nn.GRUCell``'s step with the weights ``cell.*`` of ``params`` (gates r, z, n; lab 4)."""
    cell = _shell("cell", x.shape[-1], h.shape[-1])
    weights = {key: params[f"cell.{key}"] for key in ("weight_ih", "weight_hh", "bias_ih",
                                                       "bias_hh")}
    return functional_call(cell, weights, (x, h))


def _masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Lab 5's masked softmax: exactly 0 where ``mask`` is False; an empty row is all zeros."""
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
    return weights * mask


def decoder_step(params: dict[str, torch.Tensor], s: torch.Tensor, y_prev: torch.Tensor,
                 H: torch.Tensor, mask: torch.Tensor,
                 attention: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decoder step, Bahdanau style: attention reads the *previous* state ``s``.

    s: (B, H) state; y_prev: (B,) int64 previous tokens; H: (B, S, 2H) annotations;
    mask: (B, S) bool, True on real positions. With attention

        e_j   = v_a · tanh(W_a s + U_a h_j)
        alpha = masked softmax of e over j (exactly 0 on padding; all zeros on a row without
                any real position, never NaN)
        ctx   = Σ_j alpha_j h_j
        s_new = GRUCell([tgt_emb(y_prev); ctx], s)
        logits = out([s_new; ctx])

    Without attention: ``s_new = GRUCell(tgt_emb(y_prev), s)``, ``logits = out(s_new)`` and
    ``alpha`` is all zeros. Returns ``(logits (B, V), s_new (B, H), alpha (B, S))``.
    """
    raise NotImplementedError("decoder_step: not implemented yet — replace this line with your code")


def teacher_forced_logits(params: dict[str, torch.Tensor], src: torch.Tensor,
                          dec_in: torch.Tensor, lens: torch.Tensor,
                          attention: bool = True) -> torch.Tensor:
    """Teacher forcing: encode once, then one ``decoder_step`` per column of ``dec_in`` (B, T),
    each fed the true previous token. Returns the logits (B, T, V)."""
    raise NotImplementedError("teacher_forced_logits: not implemented yet — replace this line with your code")


def masked_token_loss(logits: torch.Tensor, tgt: torch.Tensor, pad: int = PAD) -> torch.Tensor:
    """The mean cross-entropy (nats) over every target position that is not ``pad``: the sum over
    real positions divided by their number, as ``F.cross_entropy(..., ignore_index=pad)``.

    logits: (B, T, V); tgt: (B, T) int64. Returns a scalar tensor."""
    raise NotImplementedError("masked_token_loss: not implemented yet — replace this line with your code")


def greedy_decode_batch(params: dict[str, torch.Tensor], src: torch.Tensor, lens: torch.Tensor,
                        steps: int = MAX_LEN + 1,
                        attention: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Free-running decoding: start from BOS and feed back each step's argmax (the lowest token
    id on a tie, as ``argmax``). Decoding runs all ``steps`` steps, past any EOS.

    Returns ``(tokens (B, steps) int64, alphas (B, steps, S))``, alphas as ``decoder_step``
    returns them. Gradients are not needed here."""
    raise NotImplementedError("greedy_decode_batch: not implemented yet — replace this line with your code")


def sequence_metrics(pred: torch.Tensor, tgt: torch.Tensor, pad: int = PAD) -> tuple[float, float]:
    """``(sequence accuracy, token accuracy)`` of predictions ``pred`` (B, T) against ``tgt``
    (B, T), over the real target positions only (the L digits and the EOS; never a PAD position):
    a sequence is right when every real position is; token accuracy is the fraction of real
    positions right, over the whole batch. Python floats."""
    raise NotImplementedError("sequence_metrics: not implemented yet — replace this line with your code")


def train_seq2seq(params: dict[str, torch.Tensor], steps: int, seed: int,
                  attention: bool) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Train a copy of ``params`` with teacher forcing; ``params`` itself is left unchanged.

    At each of ``steps`` updates: a fresh batch ``make_reversal_batch(64, data_rng, 3, 12)`` with
    ``data_rng = np.random.default_rng(seed)`` (one generator for the whole run),
    ``masked_token_loss`` of ``teacher_forced_logits``, gradients zeroed before ``backward``,
    the global gradient norm clipped to 1.0 (``clip_grad_norm_``), and one step of
    ``torch.optim.Adam`` (lr 3e-3, PyTorch's defaults otherwise) over the parameters in the
    dict's order. The batches go to the parameters' device.

    Returns ``(trained params, losses (steps,))``: detached tensors, ``losses[i]`` the loss of
    update ``i`` before it was applied, in the parameters' dtype.
    """
    raise NotImplementedError("train_seq2seq: not implemented yet — replace this line with your code")


def bidirectional_summary(x: torch.Tensor, lengths: torch.Tensor,
                          weights: dict[str, torch.Tensor]) -> torch.Tensor:
    """One vector per sequence from a one-layer bidirectional LSTM over a padded batch.

    x: (B, T, d) padded on the right; lengths: (B,) int64 on the CPU, 1 ≤ lengths ≤ T;
    weights: ``nn.LSTM(d, H, bidirectional=True)``'s ``weight_ih_l0`` (4H, d), ``weight_hh_l0``
    (4H, H), ``bias_ih_l0``, ``bias_hh_l0`` (4H,) and their ``_reverse`` twins (gates i, f, g, o).
    Zero initial states. Returns (B, 2H): [the forward state at the last real step; the backward
    state at step 0], the backward direction starting from the last real step (never padding).
    """
    raise NotImplementedError("bidirectional_summary: not implemented yet — replace this line with your code")


def attention_pool(Hs: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
                   mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention pooling of a sequence of vectors into one.

    Hs: (B, S, D); w: (D,); b: scalar tensor; mask: (B, S) bool, True on real positions.
    score_j = Hs_j · w + b; weights = masked softmax over j (exactly 0 on padding; all zeros on
    a row without any real position, never NaN); context = Σ_j weights_j Hs_j.
    Returns ``(context (B, D), weights (B, S))``.
    """
    raise NotImplementedError("attention_pool: not implemented yet — replace this line with your code")

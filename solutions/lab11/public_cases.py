"""Inputs of the lab 11 public test vectors (outputs are computed by the reference).

The model here is small (E = 4, H = 5, A = 3: the functions read every size from the parameter
shapes), so the vectors stay small and the public tests fast. ``make_reversal_batch`` takes a
generator and ``train_seq2seq`` returns a dict: their cases are *chains* (docs/AUTHORING.md).
"""

import numpy as np
import torch

EMB, HID, ATT, V = 4, 5, 3, 13


def small_params(seed: int, attention: bool) -> dict:
    """Random weights with the README's keys and a small model's shapes (float64)."""
    rng = np.random.default_rng(seed)
    ctx = 2 * HID if attention else 0
    shapes = {"src_emb.weight": (V, EMB), "tgt_emb.weight": (V, EMB)}
    for sfx in ("", "_reverse"):
        shapes.update({f"enc.weight_ih_l0{sfx}": (3 * HID, EMB),
                       f"enc.weight_hh_l0{sfx}": (3 * HID, HID),
                       f"enc.bias_ih_l0{sfx}": (3 * HID,), f"enc.bias_hh_l0{sfx}": (3 * HID,)})
    shapes.update({"init_state.weight": (HID, 2 * HID), "init_state.bias": (HID,),
                   "cell.weight_ih": (3 * HID, EMB + ctx), "cell.weight_hh": (3 * HID, HID),
                   "cell.bias_ih": (3 * HID,), "cell.bias_hh": (3 * HID,),
                   "out.weight": (V, HID + ctx), "out.bias": (V,)})
    if attention:
        shapes.update({"W_a.weight": (ATT, HID), "U_a.weight": (ATT, 2 * HID),
                       "v_a.weight": (1, ATT)})
    return {k: torch.from_numpy(rng.standard_normal(s) / np.sqrt(s[-1] if len(s) == 2 and
                                                                   "emb" not in k else 1))
            for k, s in shapes.items()}


def sources(seed: int, lens: list[int]) -> tuple:
    rng = np.random.default_rng(seed)
    src = np.full((len(lens), 12), 10, dtype=np.int64)
    for i, L in enumerate(lens):
        src[i, :L] = rng.integers(0, 10, size=L)
    return torch.from_numpy(src), torch.tensor(lens, dtype=torch.int64)


def reversal_batch_seeded(m, n, seed, min_len, max_len):
    """Your make_reversal_batch with np.random.default_rng(seed)."""
    return m.make_reversal_batch(n, np.random.default_rng(seed), min_len, max_len)


def train_losses(m, params, steps, seed, attention):
    """The losses of your train_seq2seq."""
    return m.train_seq2seq(params, steps, seed, attention)[1]


def loss_value(m, logits, tgt):
    """Your masked_token_loss as a Python float."""
    return float(m.masked_token_loss(logits, tgt))


def _step_inputs(seed: int, attention: bool) -> tuple:
    rng = np.random.default_rng(seed)
    lens = [12, 3, 0, 7]
    mask = torch.arange(12)[None, :] < torch.tensor(lens)[:, None]
    H = torch.from_numpy(rng.standard_normal((4, 12, 2 * HID))) * mask[:, :, None]
    s = torch.from_numpy(rng.standard_normal((4, HID)))
    y = torch.from_numpy(rng.integers(0, V, size=4))
    return small_params(seed, attention), s, y, H, mask, attention


_SRC, _LENS = sources(1, [12, 4, 1, 9])
_TGT = torch.tensor([[3, 1, 12, 10, 10], [2, 2, 4, 8, 12], [5, 12, 10, 10, 10]])
_rng = np.random.default_rng(5)
_LSTM = {name + sfx: torch.from_numpy(_rng.standard_normal(shape) / 2)
         for sfx in ("", "_reverse") for name, shape in
         (("weight_ih_l0", (12, 2)), ("weight_hh_l0", (12, 3)), ("bias_ih_l0", (12,)),
          ("bias_hh_l0", (12,)))}
_X = torch.from_numpy(_rng.standard_normal((3, 6, 2))) * (
    torch.arange(6)[None, :, None] < torch.tensor([6, 2, 4])[:, None, None])

CASES = {
    "reversal_batch_readme": (reversal_batch_seeded, (3, 0, 3, 12)),
    "reversal_batch_short": (reversal_batch_seeded, (5, 4, 1, 3)),
    "encode_small": ("encode", (small_params(2, True), _SRC, _LENS)),
    "encode_unpacked": ("encode", (small_params(2, True), _SRC, _LENS, False)),
    "decoder_step_attention": ("decoder_step", _step_inputs(3, True)),
    "decoder_step_plain": ("decoder_step", _step_inputs(4, False)),
    "teacher_forced_small": ("teacher_forced_logits",
                             (small_params(6, True), _SRC,
                              torch.from_numpy(np.random.default_rng(6).integers(0, 13, (4, 13))),
                              _LENS)),
    "masked_token_loss_small": (loss_value,
                                (torch.from_numpy(np.random.default_rng(7).standard_normal(
                                    (3, 5, V))), _TGT)),
    "greedy_small": ("greedy_decode_batch", (small_params(8, True), _SRC, _LENS)),
    "sequence_metrics_small": ("sequence_metrics",
                               (torch.tensor([[3, 1, 12, 4, 4], [2, 2, 4, 8, 0],
                                              [5, 12, 10, 10, 10]]), _TGT)),
    "train_small": (train_losses, (small_params(9, True), 3, 0, True)),
    "bidirectional_summary_small": ("bidirectional_summary", (_X, torch.tensor([6, 2, 4]),
                                                              _LSTM)),
    "attention_pool_small": ("attention_pool",
                             (torch.from_numpy(_rng.standard_normal((3, 4, 2))),
                              torch.from_numpy(_rng.standard_normal(2)),
                              torch.tensor(0.1, dtype=torch.float64),
                              torch.tensor([[1, 1, 1, 0], [0, 0, 0, 0], [1, 0, 0, 0]],
                                           dtype=torch.bool))),
}

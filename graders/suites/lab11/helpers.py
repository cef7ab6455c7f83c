"""Lab 11 helpers, run beside the student's code (and beside the reference's): seeded batches,
autograd through a parameter dict, training with trusted building blocks, and lab 6's beam
search driven through the student's ``decoder_step`` (see ``rnngrade.suite.worker``
for the rules).

``train_alone`` runs the module's ``train_seq2seq``, and ``call_alone`` any other function, with
textbook versions of everything it calls (the contract of assignments/lab11/README.md) in the
module's place, so a test graded by outcome never pays for a mistake in another function.
``tests/labs/test_lab11_figures.py`` checks that these textbook versions agree with the reference
and that ``_beam_search`` is lab 6's reference ``beam_search``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnngrade.suite.worker import helper

PAD, BOS, EOS = 10, 11, 12


@helper
def batch_seeded(module: Any, n: int, seed: int, min_len: int, max_len: int) -> tuple:
    """``make_reversal_batch(n, default_rng(seed), min_len, max_len)``."""
    return module.make_reversal_batch(n, np.random.default_rng(seed), min_len, max_len)


@helper
def autograd_params(module: Any, function: str, args: tuple, upstream: list,
                    wrt: list[int]) -> dict:
    """``module.function(*args)`` with gradients on every tensor of the parameter dict
    ``args[0]`` and on the positional tensors listed in ``wrt``; backpropagates
    ``Σ_k <output_k, upstream_k>`` over the floating-point output tensors, in order. Returns
    ``{"outputs", "params": {key: grad or None}, "grads": [grad or None per wrt]}``."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in args[0].items()}
    call = [params, *args[1:]]
    for i in wrt:
        call[i] = call[i].detach().clone().requires_grad_(True)
    outputs = getattr(module, function)(*call)
    leaves = [o for o in (outputs if isinstance(outputs, tuple | list) else (outputs,))
              if isinstance(o, torch.Tensor) and o.is_floating_point()]
    if len(leaves) != len(upstream):
        raise ValueError(f"{function} returned {len(leaves)} floating-point tensors, "
                         f"expected {len(upstream)}")
    total = sum((leaf * up.to(leaf.dtype)).sum() for leaf, up in zip(leaves, upstream)
                if leaf.requires_grad)
    if isinstance(total, torch.Tensor) and total.requires_grad:
        total.backward()
    detached = tuple(o.detach() if isinstance(o, torch.Tensor) else o for o in (
        outputs if isinstance(outputs, tuple | list) else (outputs,)))
    return {"outputs": detached, "params": {k: v.grad for k, v in params.items()},
            "grads": [call[i].grad for i in wrt]}


# ------------------------------------------------------------ the textbook model (README)

def _batch(n: int, rng: np.random.Generator, min_len: int, max_len: int) -> tuple:
    lens = rng.integers(min_len, max_len + 1, size=n)
    src = np.full((n, 12), PAD, dtype=np.int64)
    dec_in = np.full((n, 13), PAD, dtype=np.int64)
    tgt = np.full((n, 13), PAD, dtype=np.int64)
    for i, L in enumerate(lens):
        digits = rng.integers(0, 10, size=L)
        src[i, :L] = digits
        dec_in[i, 0] = BOS
        dec_in[i, 1:L + 1] = digits[::-1]
        tgt[i, :L] = digits[::-1]
        tgt[i, L] = EOS
    return (torch.from_numpy(src), torch.from_numpy(dec_in), torch.from_numpy(tgt),
            torch.from_numpy(lens.astype(np.int64)))


@lru_cache(maxsize=16)
def _shell(kind: str, *sizes: int) -> nn.Module:
    """A module without storage, run on weights passed to ``functional_call``."""
    with torch.device("meta"):
        if kind == "cell":
            return nn.GRUCell(*sizes)
        return nn.GRU(*sizes, batch_first=True, bidirectional=True)


def _encode(params: dict, src: torch.Tensor, lens: torch.Tensor, pack: bool = True) -> tuple:
    e = F.embedding(src, params["src_emb.weight"])
    hid, emb = params["enc.weight_hh_l0"].shape[1], params["enc.weight_ih_l0"].shape[1]
    gru = _shell("gru", emb, hid)
    weights = {name[4:]: value for name, value in params.items() if name.startswith("enc.")}
    S = src.shape[1]
    if pack:
        packed = pack_padded_sequence(e, lens.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = functional_call(gru, weights, (packed,))
        H, _ = pad_packed_sequence(out, batch_first=True, total_length=S)
    else:
        H, h_n = functional_call(gru, weights, (e,))
    mask = torch.arange(S, device=src.device)[None, :] < lens.to(src.device)[:, None]
    s0 = torch.tanh(F.linear(torch.cat([h_n[0], h_n[1]], dim=-1), params["init_state.weight"],
                             params["init_state.bias"]))
    return H * mask[:, :, None], mask, s0


def _decoder_step(params: dict, s: torch.Tensor, y_prev: torch.Tensor, H: torch.Tensor,
                  mask: torch.Tensor, attention: bool = True) -> tuple:
    x = F.embedding(y_prev, params["tgt_emb.weight"])
    if attention:
        scores = F.linear(torch.tanh(F.linear(s, params["W_a.weight"])[:, None, :]
                                     + F.linear(H, params["U_a.weight"])),
                          params["v_a.weight"]).squeeze(-1)
        alpha = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min),
                              dim=-1) * mask
        ctx = torch.bmm(alpha[:, None, :], H).squeeze(1)
        x = torch.cat([x, ctx], dim=-1)
    else:
        alpha = torch.zeros(H.shape[:2], dtype=s.dtype, device=s.device)
    cell = _shell("cell", x.shape[-1], s.shape[-1])
    s_new = functional_call(cell, {k: params[f"cell.{k}"] for k in (
        "weight_ih", "weight_hh", "bias_ih", "bias_hh")}, (x, s))
    readout = torch.cat([s_new, ctx], dim=-1) if attention else s_new
    return F.linear(readout, params["out.weight"], params["out.bias"]), s_new, alpha


def _teacher_forced_logits(params: dict, src: torch.Tensor, dec_in: torch.Tensor,
                           lens: torch.Tensor, attention: bool = True) -> torch.Tensor:
    H, mask, s = _encode(params, src, lens)
    steps = []
    for t in range(dec_in.shape[1]):
        logits, s, _ = _decoder_step(params, s, dec_in[:, t], H, mask, attention)
        steps.append(logits)
    return torch.stack(steps, dim=1)


def _masked_token_loss(logits: torch.Tensor, tgt: torch.Tensor, pad: int = PAD) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                           ignore_index=pad)


TEXTBOOK = {"make_reversal_batch": _batch, "encode": _encode, "decoder_step": _decoder_step,
            "teacher_forced_logits": _teacher_forced_logits,
            "masked_token_loss": _masked_token_loss}


@helper
def call_alone(module: Any, function: str, args: tuple) -> Any:
    """``module.function(*args)`` with the textbook versions of every other function it may
    call in the module while it runs (restored afterwards), on one thread."""
    others = {k: v for k, v in TEXTBOOK.items() if k != function}
    saved = {name: getattr(module, name, None) for name in others}
    for name, value in others.items():
        setattr(module, name, value)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return getattr(module, function)(*args)
    finally:
        torch.set_num_threads(threads)
        for name, value in saved.items():
            setattr(module, name, value)


@helper
def train_alone(module: Any, params: dict, steps: int, seed: int, attention: bool) -> tuple:
    """``train_seq2seq(params, steps, seed, attention)`` with the textbook versions of the
    functions it may call in the module while it runs (restored afterwards)."""
    saved = {name: getattr(module, name, None) for name in TEXTBOOK}
    for name, value in TEXTBOOK.items():
        setattr(module, name, value)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the README's figures; many threads on small matrices only wait
    try:
        return module.train_seq2seq(params, steps, seed, attention)
    finally:
        torch.set_num_threads(threads)
        for name, value in saved.items():
            setattr(module, name, value)


# ------------------------------------------------------------ lab 6's beam search

def _log_probs(values: Any) -> np.ndarray:
    """A step function's output as a float64 vector of log-probabilities."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _beam_search(step_fn: Any, state: Any, bos: int, eos: int, beam_size: int,
                 max_len: int, alpha: float = 0.0) -> list[tuple[list[int], float]]:
    """Lab 6's reference ``beam_search`` (solutions/lab6/decoding.py): a beam that shrinks as
    hypotheses finish; returns the pool ``[(tokens, score)]`` best first."""
    live: list[tuple[list[int], float, Any]] = [([], 0.0, state)]
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_len):
        if not live:
            break
        rows = []
        new_states = []
        for tokens, logp, hyp_state in live:
            last = tokens[-1] if tokens else bos
            log_probs, new_state = step_fn(hyp_state, last)
            rows.append(logp + _log_probs(log_probs))
            new_states.append(new_state)
        candidates = np.stack(rows)  # (number live, V)
        V = candidates.shape[1]
        k = beam_size - len(finished)
        flat = candidates.reshape(-1)
        order = np.argsort(-flat, kind="stable")[:k]
        new_live = []
        for index in order:
            i, v = divmod(int(index), V)
            tokens = live[i][0] + [v]
            logp = float(flat[index])
            if v == eos:
                finished.append((tokens, logp))
            else:
                new_live.append((tokens, logp, new_states[i]))
        live = new_live
    pool = finished + [(tokens, logp) for tokens, logp, _ in live]
    results = []
    for tokens, logp in pool:
        length = len(tokens)
        penalty = length**alpha if length > 0 else 1.0  # only max_len = 0 leaves an empty one
        results.append((tokens, float(logp / penalty)))
    results.sort(key=lambda item: -item[1])
    return results[:beam_size]


@helper
def beam_answers(module: Any, params: dict, src: torch.Tensor, lens: torch.Tensor,
                 beam_size: int, attention: bool) -> list[list[int]]:
    """For each source row, the best hypothesis of lab 6's beam search whose ``step_fn`` calls
    the module's ``decoder_step`` on that one example (the textbook ``encode`` prepares it)."""
    answers = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _beams(module, params, src, lens, beam_size, attention, answers)
    finally:
        torch.set_num_threads(threads)
    return answers


def _beams(module: Any, params: dict, src: torch.Tensor, lens: torch.Tensor, beam_size: int,
           attention: bool, answers: list) -> None:
    with torch.no_grad():
        H, mask, s0 = _encode(params, src, lens)
        for i in range(src.shape[0]):
            H_i, mask_i = H[i:i + 1], mask[i:i + 1]

            def step_fn(s: torch.Tensor, token: int, H_i=H_i, mask_i=mask_i) -> tuple:
                y = torch.tensor([token], dtype=torch.long, device=s.device)
                logits, s_new, _ = module.decoder_step(params, s, y, H_i, mask_i, attention)
                return torch.log_softmax(logits, dim=-1)[0], s_new

            answers.append(_beam_search(step_fn, s0[i:i + 1], BOS, EOS, beam_size,
                                        src.shape[1] + 1)[0][0])

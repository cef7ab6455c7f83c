"""Lab 11 helpers, run beside the student's code (and beside the reference's): seeded batches,
autograd through a parameter dict, and lab 6's beam search driven through the student's
``decoder_step`` (see ``rnngrade.harness.worker_helpers`` for the rules).

Nothing here implements a function the lab grades: the encoder's annotations that the beam
search reads are computed by the grader with the reference and passed in
(``tests/release/test_worker_audit.py``). ``tests/labs/test_lab11_figures.py`` checks that
``_beam_search`` is lab 6's reference ``beam_search``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rnngrade.harness.worker_helpers import helper

BOS, EOS = 11, 12


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
def beam_answers(module: Any, params: dict, H: torch.Tensor, mask: torch.Tensor,
                 s0: torch.Tensor, beam_size: int, attention: bool) -> list[list[int]]:
    """For each source row, the best hypothesis of lab 6's beam search whose ``step_fn`` calls
    the module's ``decoder_step`` on that one example (``H, mask, s0``: the grader's encoding of
    the sources)."""
    answers = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            for i in range(H.shape[0]):
                answers.append(_beam_search(_step_fn(module, params, H[i:i + 1],
                                                     mask[i:i + 1], attention),
                                            s0[i:i + 1], BOS, EOS, beam_size,
                                            H.shape[1] + 1)[0][0])
    finally:
        torch.set_num_threads(threads)
    return answers


def _step_fn(module: Any, params: dict, H_i: torch.Tensor, mask_i: torch.Tensor,
             attention: bool) -> Any:
    def step_fn(s: torch.Tensor, token: int) -> tuple:
        y = torch.tensor([token], dtype=torch.long, device=s.device)
        logits, s_new, _ = module.decoder_step(params, s, y, H_i, mask_i, attention)
        return torch.log_softmax(logits, dim=-1)[0], s_new
    return step_fn

"""Lab 11 helpers, run beside the student's code (and beside the reference's): seeded batches,
autograd through a parameter dict, the first updates of training with recorded answers for the
calls a correct loop makes, and lab 6's beam search driven through the student's
``decoder_step`` (see ``rnngrade.suite.worker`` for the rules).

Nothing here implements a function the lab grades (``tests/release/test_worker_audit.py``). A
test of ``train_seq2seq`` or ``greedy_decode_batch`` runs the submission's own functions; where
one that it calls gets the calls a correct caller makes wrong, those calls are answered with the
reference's results recorded on the grader's side (``training_calls`` beside the reference,
``train_alone`` with ``recorded`` here; the decoding's through ``rnngrade.grading.stand_ins``'s
``replay``), so the test loses no points for that mistake. The beam search reads the grader's
encoding of the sources. ``tests/labs/test_lab11_figures.py`` checks that ``_beam_search`` is
lab 6's reference ``beam_search``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import torch

from rnngrade.suite.worker import helper

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


# ------------------------------------------------------------ the first updates of training

def _batch_call(n: Any, rng: Any, min_len: Any, max_len: Any) -> tuple:
    return n, rng, min_len, max_len


def _logits_call(params: Any, src: Any, dec_in: Any, lens: Any, attention: Any = True) -> tuple:
    return params, src, dec_in, lens, attention


def _loss_call(logits: Any, tgt: Any, pad: Any = 10) -> tuple:
    return logits, tgt, pad


def _state(rng: np.random.Generator) -> str:
    """A generator's state as text (its integers exceed what plain data carries)."""
    return json.dumps(rng.bit_generator.state, sort_keys=True)


@helper
def training_calls(module: Any, params: dict, steps: int, seed: int, attention: bool) -> dict:
    """The calls ``train_seq2seq(params, steps, seed, attention)`` makes to
    ``make_reversal_batch``, ``teacher_forced_logits`` and ``masked_token_loss``, with their
    results and derivatives; run beside the reference, on the grader's side. Returns
    ``{"batches": [[n, min_len, max_len, state before, batch, state after]], "logits":
    [[params, src, dec_in, lens, attention, logits, {key: d loss / d param}, d loss /
    d logits]], "losses": [[logits, tgt, pad, loss, d loss / d logits]], "result": what
    train_seq2seq returned}``, one of each per update."""
    names = ("make_reversal_batch", "teacher_forced_logits", "masked_token_loss")
    own = {name: getattr(module, name) for name in names}
    found: dict[str, list] = {name: [] for name in names}

    def recorder(name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            import sys

            if sys._getframe(1).f_globals is not module.__dict__:
                return own[name](*args, **kwargs)
            if name == "make_reversal_batch":
                n, rng, low, high = _batch_call(*args, **kwargs)
                before = _state(rng)
                batch = own[name](*args, **kwargs)
                found[name].append([int(n), int(low), int(high), before,
                                    tuple(t.clone() for t in batch), _state(rng)])
                return batch
            value = own[name](*args, **kwargs)
            found[name].append([_detached(a) for a in (
                _logits_call if name == "teacher_forced_logits" else _loss_call)(
                    *args, **kwargs)] + [value.detach().clone()])
            return value
        return record

    for name in names:
        setattr(module, name, recorder(name))
    try:
        with torch.random.fork_rng(devices=[]):
            result = module.train_seq2seq(params, steps, seed, attention)
    finally:
        for name in names:
            setattr(module, name, own[name])
    losses = []
    for logits, tgt, pad, loss in found["masked_token_loss"]:
        leaf = logits.clone().requires_grad_(True)
        upstream, = torch.autograd.grad(own["masked_token_loss"](leaf, tgt, pad), leaf)
        losses.append([logits, tgt, pad, loss, upstream])
    calls = []
    for (weights, src, dec_in, lens, att, logits), (*_, upstream) in zip(
            found["teacher_forced_logits"], losses):
        leaves = {k: v.clone().requires_grad_(True) for k, v in weights.items()}
        out = own["teacher_forced_logits"](leaves, src, dec_in, lens, att)
        grads = torch.autograd.grad(out, list(leaves.values()), upstream, allow_unused=True)
        calls.append([weights, src, dec_in, lens, att, logits,
                      {k: (g if g is not None else torch.zeros_like(v))
                       for (k, v), g in zip(weights.items(), grads)}, upstream])
    return {"batches": found["make_reversal_batch"], "logits": calls, "losses": losses,
            "result": result}


def _detached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return value


@helper
def batch_from_state(module: Any, n: int, state: str, min_len: int, max_len: int) -> list:
    """``make_reversal_batch(n, rng, min_len, max_len)`` with ``rng`` in ``state`` (see
    ``_state``): ``[src, dec_in, tgt, lens, the state after]``."""
    rng = np.random.default_rng()
    rng.bit_generator.state = json.loads(state)
    batch = module.make_reversal_batch(n, rng, min_len, max_len)
    return [*batch, _state(rng)]


# A correct loop's weights agree with the reference's after the same recorded updates to float32
# rounding (~1e-7 relative); a wrong update moves them by ~lr = 3e-3.
MATCH = (1e-6, 1e-5)
# d loss / d logits is ~1/(real positions) ≈ 2e-3 per entry; float32 rounding stays ~1e-10.
UPSTREAM = (1e-8, 1e-4)


def _close(a: torch.Tensor, b: torch.Tensor, tol: tuple[float, float]) -> bool:
    return (isinstance(a, torch.Tensor) and a.shape == b.shape
            and bool(torch.allclose(a.detach().cpu().to(b.dtype), b, atol=tol[0], rtol=tol[1])))


def _equal(a: Any, b: torch.Tensor) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and bool(torch.equal(a.cpu(), b))


class _Backprop(torch.autograd.Function):
    """Recorded logits whose derivative with respect to the weights is recorded too: for the
    recorded upstream gradient (the README's loss), the recorded gradients of the weights."""

    @staticmethod
    def forward(ctx: Any, value: torch.Tensor, grads: list, upstream: torch.Tensor,
                *weights: torch.Tensor) -> torch.Tensor:
        ctx.grads, ctx.upstream = grads, upstream
        ctx.like = [(w.dtype, w.device) for w in weights]
        return value.clone()

    @staticmethod
    def backward(ctx: Any, out_grad: torch.Tensor) -> tuple:
        if not _close(out_grad, ctx.upstream, UPSTREAM):
            raise RuntimeError("the grader's teacher_forced_logits here backpropagates only the "
                               "gradient of masked_token_loss of its logits (README, "
                               "'Training')")
        return (None, None, None, *(g.to(dtype=d, device=v)
                                   for g, (d, v) in zip(ctx.grads, ctx.like)))


class _Recorded:
    """Stands in for one of the module's functions during ``train_alone``: a call of the
    module's own code that is a recorded call gets the recorded result (and derivatives); any
    other call goes to the module's own function."""

    def __init__(self, module: Any, name: str, own: Any, calls: list) -> None:
        self.module, self.name, self.own, self.calls = module, name, own, calls
        self.__name__ = name
        self.known = {tuple(c[:4]): c[4:] for c in calls} if name == "make_reversal_batch" \
            else {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import sys

        if sys._getframe(1).f_globals is self.module.__dict__:
            try:
                value = self._answer(args, kwargs)
            except (TypeError, ValueError, LookupError):
                value = None  # not a call of the README's form: not a recorded one
            if value is not None:
                return value
        if not callable(self.own):
            raise NameError(f"name {self.name!r} is not defined")
        return self.own(*args, **kwargs)

    def _answer(self, args: tuple, kwargs: dict) -> Any:
        if self.name == "make_reversal_batch":
            n, rng, low, high = _batch_call(*args, **kwargs)
            if not isinstance(rng, np.random.Generator):
                return None
            found = self.known.get((int(n), int(low), int(high), _state(rng)))
            if found is None:
                return None
            batch, after = found
            rng.bit_generator.state = json.loads(after)
            return tuple(t.clone() for t in batch)
        if self.name == "teacher_forced_logits":
            params, src, dec_in, lens, attention = _logits_call(*args, **kwargs)
            for weights, r_src, r_dec, r_lens, r_att, logits, grads, upstream in self.calls:
                if (bool(attention) == r_att and _equal(src, r_src) and _equal(dec_in, r_dec)
                        and _equal(lens, r_lens) and isinstance(params, dict)
                        and params.keys() == weights.keys()
                        and all(_close(params[k], w, MATCH) for k, w in weights.items())):
                    first = next(iter(params.values()))
                    return _Backprop.apply(logits.to(first.device), [grads[k] for k in params],
                                           upstream.to(first.device), *params.values())
            return None
        logits, tgt, pad = _loss_call(*args, **kwargs)
        for r_logits, r_tgt, r_pad, loss, upstream in self.calls:
            if pad == r_pad and _equal(tgt, r_tgt) and _close(logits, r_logits, MATCH):
                zero = ((logits - logits.detach()) * upstream.to(logits)).sum()
                return loss.to(logits) + zero
        return None


@helper
def train_alone(module: Any, params: dict, steps: int, seed: int, attention: bool,
                recorded: dict | None = None, replace: tuple = ()) -> tuple:
    """``train_seq2seq(params, steps, seed, attention)`` on one thread; with ``recorded``
    (``training_calls`` beside the reference), the functions named in ``replace`` (those the
    submission gets wrong on those calls) answer the recorded calls with the recorded results
    while it runs (restored afterwards), so a test of the loop never pays for their mistakes."""
    key = {"make_reversal_batch": "batches", "teacher_forced_logits": "logits",
           "masked_token_loss": "losses"}
    saved = {name: vars(module).get(name) for name in replace if name in key}
    for name in saved:
        setattr(module, name, _Recorded(module, name, saved[name], (recorded or {})[key[name]]))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the README's figures; many threads on small matrices only wait
    try:
        return module.train_seq2seq(params, steps, seed, attention)
    finally:
        torch.set_num_threads(threads)
        for name, value in saved.items():
            if value is None:
                vars(module).pop(name, None)
            else:
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


@helper
def decode_alone(module: Any, params: dict, src: torch.Tensor, lens: torch.Tensor, steps: int,
                 attention: bool) -> tuple:
    """``greedy_decode_batch(params, src, lens, steps, attention)`` on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return module.greedy_decode_batch(params, src, lens, steps, attention)
    finally:
        torch.set_num_threads(threads)

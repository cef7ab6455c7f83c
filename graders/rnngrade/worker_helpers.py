"""Grader code that runs beside the student's code (in the worker, on the untrusted side).

``HELPERS[name](module, *args, **kwargs)`` is called by ``ModuleProxy.helper`` / a runner's
``call_helper``; ``FUNCTIONS[name](*args)`` builds a callable argument for a ``FunctionRef``.
Their results cross the protocol like any student result and are checked like one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from rnngrade.checks.compare import UNFINISHED, to_numpy


def _tensor_leaves(value: Any) -> list:
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _tensor_leaves(item)]
    if type(value).__module__.startswith("torch") and hasattr(value, "backward"):
        return [value]
    return []


def _detach(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return type(value)(_detach(v) for v in value)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach()
    return value


def autograd(module: Any, function: str, args: tuple, upstream: list, wrt: list[int]) -> dict:
    """Call ``module.function(*args)`` with gradients on the positional args listed in ``wrt``,
    backpropagate ``Σ_k <output_k, upstream_k>`` over the output tensors (in flattening order) and
    return ``{"outputs": outputs, "grads": [grad of args[i] for i in wrt]}`` (None: no gradient
    reached that argument)."""
    import torch

    call_args = list(args)
    for i in wrt:
        call_args[i] = call_args[i].detach().clone().requires_grad_(True)
    outputs = getattr(module, function)(*call_args)
    leaves = _tensor_leaves(outputs)
    if len(leaves) != len(upstream):
        raise ValueError(f"{function} returned {len(leaves)} tensors, expected {len(upstream)}")
    total = sum((leaf * up.to(leaf.dtype)).sum() for leaf, up in zip(leaves, upstream)
                if leaf.requires_grad)
    if isinstance(total, torch.Tensor) and total.requires_grad:
        total.backward()
    grads = [call_args[i].grad for i in wrt]
    return {"outputs": _detach(outputs), "grads": grads}


def on_cache(module: Any, function: str, before: tuple, producer: str, producer_args: tuple,
             index: int) -> Any:
    """``module.function(*before, module.producer(*producer_args)[index])``: a backward pass on
    the cache of the module's own forward pass, in one call, so the cache (often the largest
    value of a lab) never travels to the grader and back."""
    produced = getattr(module, producer)(*producer_args)
    if produced is None:
        raise NotImplementedError(f"{producer} {UNFINISHED}")
    if not isinstance(produced, tuple | list) or not -len(produced) <= index < len(produced):
        what = f"a {type(produced).__name__} of {len(produced)} items" if isinstance(
            produced, tuple | list) else f"a value of type {type(produced).__name__}"
        raise TypeError(f"{producer} returned {what}; {function} needs the cache, item "
                        f"{index} of the tuple it returns")
    return getattr(module, function)(*before, produced[index])


def call_and_mutated(module: Any, function: str, args: tuple) -> Any:
    """Call ``module.function(*args)`` on objects built beside it and return ``(result, args)``:
    for functions that act on objects (an ``nn.LSTM``), so the grader sees the objects after."""
    value = getattr(module, function)(*args)
    return value, args


def build_torch_module(kind: str, init: dict, state: dict) -> Any:
    """An ``nn.LSTM``/``nn.LSTMCell``/``nn.GRU``... built on the student side from plain data."""
    import torch

    cls = getattr(torch.nn, kind)
    layer = cls(**init).double()
    layer.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
    return layer


def set_on_module(module: Any, function: str, kind: str, init: dict, state: dict,
                  args: tuple) -> dict:
    """Build an ``nn`` layer, call ``module.function(layer, *args)``, return its state dict and
    the function's return value, for contracts that mutate a torch module in place."""
    layer = build_torch_module(kind, init, state)
    returned = getattr(module, function)(layer, *args)
    return {"returned": returned,
            "state": {k: v.detach().clone() for k, v in layer.state_dict().items()}}


def perturbed_losses(module: Any, function: str, args: tuple, weights: list,
                     targets: list, eps: float) -> Any:
    """The evaluations behind central differences, one round trip for a whole gradient check.

    L(args) = Σ_k Σ weights_k ⊙ module.function(*args)[k] over the pairs ``[k, weights_k]`` in
    ``weights``. ``targets``: ``[path, indices]`` pairs, where ``path`` leads to an array inside
    ``args`` (``[2]``: the third argument, ``[2, "Wf"]``: its entry ``"Wf"``) and ``indices``
    lists entries of that array. Returns, per target, ``[L(x_i + ε), L(x_i − ε)]`` for each
    entry ``i`` (the grader takes the differences); or, when an output cannot enter L, a sentence
    saying why. Each evaluation sees a fresh copy of the perturbed arguments; every entry is
    restored bit-exactly before the next.
    """
    args = _fresh(tuple(args))
    forward = getattr(module, function)
    pairs = [(int(k), np.asarray(w)) for k, w in weights]

    def loss() -> float:
        out = forward(*_fresh(args))
        total = None
        for k, weight in pairs:
            value = _output_array(out, k)
            if value is None or value.shape != weight.shape or value.dtype.kind != "f":
                got = "nothing" if value is None else \
                    f"dtype {value.dtype}, shape {value.shape}"
                raise _Unusable(f"the gradient check needs {function}(...)[{k}] as a float "
                                f"array of shape {weight.shape}; it returned {got}")
            term = np.sum(weight * value)
            total = term if total is None else total + term
        return float(total)

    per_target = []
    try:
        for path, indices in targets:
            x = args
            for step in path:
                x = x[step]
            losses = []
            for index in indices:
                index = tuple(int(i) for i in index)
                original = x[index]
                x[index] = original + eps
                plus = loss()
                x[index] = original - eps
                minus = loss()
                x[index] = original
                losses.append([plus, minus])
            per_target.append(losses)
    except _Unusable as problem:
        return str(problem)
    return per_target


def _fresh(value: Any) -> Any:
    """A copy of plain data that shares nothing mutable with ``value`` (faster than deepcopy
    for the tuples, dicts and arrays a forward pass takes)."""
    t = type(value)
    if t is np.ndarray:
        return value.copy()
    if t is tuple or t is list:
        return t(_fresh(v) for v in value)
    if t is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if t in (int, float, bool, str, type(None)):
        return value
    return copy.deepcopy(value)


class _Unusable(Exception):
    """An output of the forward pass that the loss of a gradient check cannot use."""


def _output_array(out: Any, k: int) -> np.ndarray | None:
    """Output ``k`` of a forward pass as a NumPy array (a tensor is detached), or None."""
    if not isinstance(out, tuple | list) or not 0 <= k < len(out):
        return None
    value = out[k]
    array = to_numpy(value)  # arrays, tensors, numbers
    if array is not None:
        return array
    try:
        return np.asarray(value)  # nested lists
    except Exception:  # noqa: BLE001 - whatever the student returned
        return None


HELPERS: dict[str, Callable[..., Any]] = {
    "autograd": autograd,
    "on_cache": on_cache,
    "perturbed_losses": perturbed_losses,
    "call_and_mutated": call_and_mutated,
    "set_on_module": set_on_module,
}


# ---------------------------------------------------------------- callable arguments (FunctionRef)

def polynomial_of(x: np.ndarray, coefficients: np.ndarray) -> Callable[[], float]:
    """f() = Σ_i (c1_i x_i + c2_i x_i² + c3_i x_i³): a function of the array ``x`` it reads."""
    c = np.asarray(coefficients, dtype=np.float64).reshape(3, *x.shape)
    return lambda: float(np.sum(c[0] * x + c[1] * x**2 + c[2] * x**3))


def sin_sum_of(x: np.ndarray) -> Callable[[], float]:
    """f() = Σ sin(x) · x: reads ``x``; its gradient is cos(x)·x + sin(x)."""
    return lambda: float(np.sum(np.sin(x) * x))


FUNCTIONS: dict[str, Callable[..., Callable]] = {
    "polynomial_of": polynomial_of,
    "sin_sum_of": sin_sum_of,
}


# ---------------------------------------------------------------- lab6: models behind a step_fn
#
# A lab6 decoder sees a language model only through ``step_fn(state, token) -> (log_probs,
# new_state)``. The factories below build such models from plain data, so the very same model
# exists on the trusted side (the reference, an exhaustive-search oracle) and beside the student's
# code. Every model here remembers the tokens it has been fed: feeding the wrong token, or the
# state of another hypothesis, changes what it predicts.


class _OpaqueHistory:
    """A decoder state that is not plain data (it stays on the student side, as a real model's
    cache would): the tokens fed so far, kept in an object with no public interface."""

    __slots__ = ("_fed",)

    def __init__(self, fed: tuple[int, ...]) -> None:
        self._fed = fed

    def __repr__(self) -> str:
        return "<model state>"


def _fed_history(state: Any, token: Any) -> tuple[int, ...]:
    """The tokens fed so far, this one included, from a state of any kind used below."""
    if isinstance(state, _OpaqueHistory):
        before = state._fed
    elif type(state).__module__.startswith("torch"):
        before = tuple(int(t) for t in state.tolist())
    elif state is None:
        before = ()
    else:
        before = tuple(int(t) for t in state)
    return (*before, int(token))


def _wrap_state(fed: tuple[int, ...], state_kind: str) -> Any:
    if state_kind == "object":
        return _OpaqueHistory(fed)
    if state_kind == "tensor":
        import torch

        return torch.tensor(fed, dtype=torch.int64)
    return fed


def _wrap_log_probs(log_probs: np.ndarray, output: str) -> Any:
    if output == "torch":
        import torch

        return torch.from_numpy(log_probs.copy())
    return log_probs


def table_lm(table: dict, default: list, state_kind: str = "tuple",
             output: str = "numpy") -> Callable:
    """A model given by its next-token probabilities after each prefix.

    table: {"": p, "1": p, "1,2": p, ...}: the probabilities (a list of V numbers, zeros allowed)
        of the next token after the emitted prefix written as comma-separated token ids (the
        first token fed, BOS, is not part of the key). default: the probabilities after any
        prefix not in the table. state_kind: the state is the tuple of tokens fed so far
        ("tuple"), an opaque object ("object") or an int64 torch tensor ("tensor"); the initial
        state is () (or None). output: log_probs as a float64 NumPy array or a torch tensor.
    """
    with np.errstate(divide="ignore"):
        logs = {str(key): np.log(np.asarray(value, dtype=np.float64)) for key, value in
                table.items()}
        fallback = np.log(np.asarray(default, dtype=np.float64))

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        fed = _fed_history(state, token)
        key = ",".join(str(t) for t in fed[1:])
        return _wrap_log_probs(logs.get(key, fallback), output), _wrap_state(fed, state_kind)

    return step_fn


def random_lm(seed: int, vocab: int, eos: int, eos_shift: float = 0.0, scale: float = 1.5,
              state_kind: str = "tuple", output: str = "numpy") -> Callable:
    """A random model conditioned on the whole history: after the fed tokens h the logits are
    ``scale · N(0, 1)`` drawn from a generator seeded with (seed, *h), plus ``eos_shift`` on
    ``eos``; log_probs is their log-softmax. Without ties (continuous values), and the same model
    wherever it is built. state_kind, output: as for ``table_lm``."""

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        fed = _fed_history(state, token)
        logits = scale * np.random.default_rng([seed, *fed]).standard_normal(vocab)
        logits[eos] += eos_shift
        shifted = logits - logits.max()
        log_probs = shifted - np.log(np.sum(np.exp(shifted)))
        return _wrap_log_probs(log_probs, output), _wrap_state(fed, state_kind)

    return step_fn


def torch_rnn_lm(embedding: Any, recurrent: Any, output_weights: Any) -> Callable:
    """A tiny torch RNN language model: its state is the hidden vector h (a float64 tensor,
    the initial one given as the decoder's ``state``), ``h' = tanh(W h + E[token])`` and
    ``log_probs = log_softmax(U h')`` as a torch tensor. embedding E (V_in, H), recurrent W (H, H),
    output_weights U (V, H)."""
    import torch

    E, W, U = (torch.as_tensor(a, dtype=torch.float64) for a in
               (embedding, recurrent, output_weights))

    def step_fn(state: Any, token: Any) -> tuple[Any, Any]:
        h = torch.tanh(W @ torch.as_tensor(state, dtype=torch.float64) + E[int(token)])
        return torch.log_softmax(U @ h, dim=0), h

    return step_fn


def _draws_taken(rng: np.random.Generator, seed: Any, limit: int) -> int:
    """How many ``random()`` draws took a fresh ``default_rng(seed)`` to ``rng``'s state; -1 when
    no number of plain draws up to ``limit`` does (the generator was used some other way)."""
    fresh = np.random.default_rng(seed)
    target = rng.bit_generator.state
    for count in range(limit + 1):
        if fresh.bit_generator.state == target:
            return count
        fresh.random()
    return -1


def sample_seeded(module: Any, step_fn: Callable, state: Any, bos: int, eos: int, max_len: int,
                  temperature: float, seed: int) -> dict:
    """``module.sample_sequence`` with ``rng = numpy.random.default_rng(seed)`` built here (a
    Generator is not plain data); returns the tokens and how many ``rng.random()`` draws the call
    consumed (-1: the generator was used in some other way)."""
    rng = np.random.default_rng(seed)
    tokens = module.sample_sequence(step_fn, state, bos, eos, max_len, temperature, rng)
    return {"tokens": tokens, "draws": _draws_taken(rng, seed, max_len + 1)}


def sample_counts(module: Any, step_fn: Callable, state: Any, bos: int, eos: int, max_len: int,
                  temperature: float, seed: int, n: int) -> dict:
    """``n`` calls of ``module.sample_sequence`` sharing one ``default_rng(seed)``; returns how
    often each sequence came out, keyed by its comma-separated token ids."""
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(n):
        tokens = module.sample_sequence(step_fn, state, bos, eos, max_len, temperature, rng)
        key = ",".join(str(int(t)) for t in tokens)
        counts[key] = counts.get(key, 0) + 1
    return counts


# ---------------------------------------------------------------- lab7: helpers for the LRU

def init_lru_seeded(module: Any, N: int, d_in: int, d_out: int, r_min: float, r_max: float,
                    max_phase: float, seeds: list) -> list:
    """``module.init_lru`` once per seed, each with ``torch.Generator().manual_seed(seed)`` built
    here (a Generator is not plain data); returns the list of parameter dicts."""
    import torch

    return [module.init_lru(N, d_in, d_out, r_min=r_min, r_max=r_max, max_phase=max_phase,
                            generator=torch.Generator().manual_seed(int(seed))) for seed in seeds]


def autograd_params(module: Any, function: str, x: Any, params: dict, upstream: Any) -> dict:
    """``y = module.function(x, params)`` with gradients on ``x`` and every entry of ``params``;
    backpropagates ``Σ y ⊙ upstream`` and returns ``{"y": y, "grads": {"x": ..., name: ...}}``.
    A gradient that does not reach an input comes back as zeros."""
    import torch

    x = x.detach().clone().requires_grad_(True)
    leaves = {name: value.detach().clone().requires_grad_(True) for name, value in params.items()}
    y = getattr(module, function)(x, leaves)
    if not isinstance(y, torch.Tensor) or not y.requires_grad:
        raise TypeError(f"{function} returned a result that autograd cannot differentiate (no "
                        "gradient flows back to the inputs: .detach(), torch.no_grad() or NumPy "
                        "inside?)")
    (y * upstream.to(y.dtype)).sum().backward()
    inputs = {"x": x, **leaves}
    grads = {name: value.grad if value.grad is not None else torch.zeros_like(value)
             for name, value in inputs.items()}
    return {"y": y.detach(), "grads": grads}


def count_work(module: Any, function: str, args: tuple) -> dict:
    """Call ``module.function(*args)`` and count what it did: torch function calls (operators and
    tensor methods included) and Python lines executed in the submission's own file. A Python loop
    over time shows as counts that grow with the sequence length."""
    import sys

    from torch.overrides import TorchFunctionMode

    class _Counter(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            _Counter.calls += 1
            return func(*args, **(kwargs or {}))

    filename = getattr(module, "__file__", None)
    lines = 0

    def trace_lines(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
        return trace_lines

    def trace_calls(frame, event, arg):
        return trace_lines if frame.f_code.co_filename == filename else None

    previous = sys.gettrace()
    sys.settrace(trace_calls)
    try:
        with _Counter():
            getattr(module, function)(*args)
    finally:
        sys.settrace(previous)
    return {"torch_calls": _Counter.calls, "lines": lines}


HELPERS.update({
    "sample_seeded": sample_seeded,
    "sample_counts": sample_counts,
    "init_lru_seeded": init_lru_seeded,
    "autograd_params": autograd_params,
    "count_work": count_work,
})
FUNCTIONS.update({
    "table_lm": table_lm,
    "random_lm": random_lm,
    "torch_rnn_lm": torch_rnn_lm,
})

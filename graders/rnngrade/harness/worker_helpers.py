"""Grader code that runs beside the student's code (in the worker, on the untrusted side).

A helper ``name(module, *args, **kwargs)`` is called by ``ModuleProxy.helper`` / a runner's
``call_helper``; a function ``name(*args)`` builds a callable argument for a ``FunctionRef``.
Their results cross the protocol like any student result and are checked like one.

The helpers every lab may use are defined here, registered with ``@helper`` / ``@function``
(``GENERIC``). A lab's own live in ``graders/suites/labN/helpers.py``, registered with the same
decorators: the grader reads that file (``rnngrade.lab_helpers``) and sends its source to the
worker, which runs it beside these (``with_lab_helpers``); the suite folder itself is never
visible to the worker. Helpers run on the reference and mutants as well as on the student, and
their results are memoised across submissions: a helper must be a pure function of its
arguments (and of the module it calls).
"""

from __future__ import annotations

import copy
import functools
import operator
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from rnngrade.harness.checks.compare import UNFINISHED, to_numpy
from rnngrade.harness.checks.seeding import seed_everything
from rnngrade.harness.checks.threads import pin_threads

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Registry:
    """Helpers (called with the student's module first) and ``FunctionRef`` factories, by name."""

    helpers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    functions: dict[str, Callable[..., Callable]] = field(default_factory=dict)

    def add(self, kind: str, fn: Callable) -> None:
        table = self.helpers if kind == "helper" else self.functions
        if fn.__name__ in table or fn.__name__ in (GENERIC.helpers if kind == "helper"
                                                    else GENERIC.functions):
            raise ValueError(f"a grader {kind} named {fn.__name__!r} is registered twice")
        table[fn.__name__] = fn


GENERIC = Registry()
_collecting: list[Registry] = [GENERIC]  # where the decorators register now (the last one)
_collect_lock = threading.Lock()


def helper(fn: F) -> F:
    """Register ``fn(module, *args, **kwargs)`` as a helper under its own name."""
    _collecting[-1].add("helper", fn)
    return fn


def function(fn: F) -> F:
    """Register ``fn(*args) -> callable`` as a ``FunctionRef`` factory under its own name."""
    _collecting[-1].add("function", fn)
    return fn


def with_lab_helpers(source: str, filename: str) -> Registry:
    """The generic helpers and those a lab's helpers file (its ``source``) registers. Raises
    whatever running that source raises, and ValueError for a name registered twice."""
    lab = Registry()
    module = types.ModuleType("rnngrade_lab_helpers")
    module.__file__ = filename
    code = compile(source, filename, "exec")
    with _collect_lock:
        _collecting.append(lab)
        try:
            exec(code, module.__dict__)  # the course's own helpers file
        finally:
            _collecting.pop()
    return Registry({**GENERIC.helpers, **lab.helpers}, {**GENERIC.functions, **lab.functions})


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


@helper
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


@helper
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


@helper
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


@helper
def set_on_module(module: Any, function: str, kind: str, init: dict, state: dict,
                  args: tuple) -> dict:
    """Build an ``nn`` layer, call ``module.function(layer, *args)``, return its state dict and
    the function's return value, for contracts that mutate a torch module in place."""
    layer = build_torch_module(kind, init, state)
    returned = getattr(module, function)(layer, *args)
    return {"returned": returned,
            "state": {k: v.detach().clone() for k, v in layer.state_dict().items()}}


@helper
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
        terms = []
        for k, weight in pairs:
            value = _output_array(out, k)
            if value is None or value.shape != weight.shape or value.dtype.kind != "f":
                got = "nothing" if value is None else \
                    f"dtype {value.dtype}, shape {value.shape}"
                raise _Unusable(f"the gradient check needs {function}(...)[{k}] as a float "
                                f"array of shape {weight.shape}; it returned {got}")
            terms.append(np.sum(weight * value))
        return float(functools.reduce(operator.add, terms))  # summed in the order of `weights`

    per_target = []
    try:
        for path, indices in targets:
            x: Any = args  # then an entry inside the arguments, then the array itself
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


# ---------------------------------------------------------------- callable arguments (FunctionRef)

@function
def polynomial_of(x: np.ndarray, coefficients: np.ndarray) -> Callable[[], float]:
    """f() = Σ_i (c1_i x_i + c2_i x_i² + c3_i x_i³): a function of the array ``x`` it reads."""
    c = np.asarray(coefficients, dtype=np.float64).reshape(3, *x.shape)
    return lambda: float(np.sum(c[0] * x + c[1] * x**2 + c[2] * x**3))


@function
def sin_sum_of(x: np.ndarray) -> Callable[[], float]:
    """f() = Σ sin(x) · x: reads ``x``; its gradient is cos(x)·x + sin(x)."""
    return lambda: float(np.sum(np.sin(x) * x))



# ------------------------------------------------------------------ tests graded by outcome

@helper
def prepare_outcome(module: Any, seed: int) -> dict[str, bool]:
    """Before a test graded by outcome (in its own fresh worker): one thread everywhere, and
    NumPy's, ``random``'s and torch's global generators seeded with ``seed``, TF32 off."""
    pinned = pin_threads()
    seed_everything(seed)
    return pinned

"""Grader code that runs beside the student's code (in the worker, on the untrusted side).

``HELPERS[name](module, *args, **kwargs)`` is called by ``ModuleProxy.helper`` / a runner's
``call_helper``; ``FUNCTIONS[name](*args)`` builds a callable argument for a ``FunctionRef``.
Their results cross the protocol like any student result and are checked like one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


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


HELPERS: dict[str, Callable[..., Any]] = {
    "autograd": autograd,
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

"""Lab 7 helpers, run beside the student's code (and the reference's): seeded initialisation,
gradients through the LRU's parameters, and counting the work of a scan (see
``rnngrade.suite.worker`` for the rules)."""

from __future__ import annotations

from typing import Any

from rnngrade.suite.worker import helper


@helper
def init_lru_seeded(module: Any, N: int, d_in: int, d_out: int, r_min: float, r_max: float,
                    max_phase: float, seeds: list) -> list:
    """``module.init_lru`` once per seed, each with ``torch.Generator().manual_seed(seed)`` built
    here (a Generator is not plain data); returns the list of parameter dicts."""
    import torch

    return [module.init_lru(N, d_in, d_out, r_min=r_min, r_max=r_max, max_phase=max_phase,
                            generator=torch.Generator().manual_seed(int(seed))) for seed in seeds]


@helper
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


@helper
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

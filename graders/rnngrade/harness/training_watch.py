"""Watch a training run from outside the code that trains (the worker side of a test graded by
outcome): which parameters a torch optimiser steps, how often, and their values at checkpoints.

The figures a training function reports are never graded as they are: the trusted side measures
the parameters this watch copies (with the reference's forward pass, on the grader's data) and
compares the reported figures with its measurements. Every parameter registered on a torch
module while the run lasts is named by ``name_of(module, name)``; a parameter the optimiser
steps that was registered before the run (or never) is named ``"unnamed.<i>"``, so it loads
into no model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def default_name(module: Any, name: str) -> str:
    """``"<class of the module>.<parameter>"``, e.g. ``"Linear.weight"``."""
    return f"{type(module).__name__}.{name}"


def watch_training(run: Callable[[], Any], every: int,
                   name_of: Callable[[Any, str], str] = default_name) -> dict:
    """``run()`` with torch's optimisers watched. Returns plain data:

    - ``"returned"``: what ``run()`` returned;
    - ``"steps"``: how many optimiser steps were taken (every optimiser counts);
    - ``"checkpoints"``: ``[step, params]`` before steps 1, ``every`` + 1, 2·``every`` + 1, …
      (the parameters the loss of that update was computed with), ``params`` a dict of CPU
      copies by name;
    - ``"final"``: the parameters of the optimiser that stepped last, after ``run()`` returned
      (``{}`` when none stepped).

    Two parameters with one name keep both, the second as ``"<name>#2"`` (a model of that shape
    loads neither)."""
    from torch.nn.modules.module import register_module_parameter_registration_hook
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    names: dict[int, tuple[Any, str]] = {}  # id -> (the parameter, kept alive; its name)
    watched: dict[str, Any] = {"steps": 0, "checkpoints": [], "params": []}

    def on_register(module: Any, name: str, param: Any) -> None:
        if param is not None:
            names[id(param)] = (param, name_of(module, name))

    def before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        watched["steps"] += 1
        watched["params"] = [p for group in optimizer.param_groups for p in group["params"]]
        if (watched["steps"] - 1) % every == 0:
            watched["checkpoints"].append([watched["steps"], _copies(watched["params"], names)])

    hooks = [register_module_parameter_registration_hook(on_register),
             register_optimizer_step_pre_hook(before_step)]
    try:
        returned = run()
    finally:
        for hook in hooks:
            hook.remove()
    return {"returned": returned, "steps": watched["steps"],
            "checkpoints": watched["checkpoints"],
            "final": _copies(watched["params"], names)}


def _copies(params: list, names: dict[int, tuple[Any, str]]) -> dict:
    out: dict[str, Any] = {}
    for i, param in enumerate(params):
        known = names.get(id(param))
        base = known[1] if known is not None and known[0] is param else f"unnamed.{i}"
        name, copies = base, 1
        while name in out:
            copies += 1
            name = f"{base}#{copies}"
        out[name] = param.detach().to("cpu", copy=True)
    return out

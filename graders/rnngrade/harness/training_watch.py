"""Watch a training run from outside the code that trains (the worker side of a test graded by
outcome): which parameters a torch optimiser steps, how often, and their values at checkpoints.

The figures a training function reports are never graded as they are: the trusted side measures
the parameters this watch copies (with the reference's forward pass, on the grader's data) and
compares the reported figures with its measurements. Every parameter registered on a torch
module while the run lasts is named by ``name_of(module, name)``; a parameter the optimiser
steps that was registered before the run (or never) is named ``"unnamed.<i>"``, so it loads
into no model.

A run whose verdict can be decided before its end (a band "reached by update N") is stopped by
the watch: at each checkpoint the watch asks ``stop(params)`` about its own copies (never about
a figure the run reports) and, once it answers yes, refuses every further optimiser step. The
trusted side measures the copies of that checkpoint and confirms the decision itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class StopTraining(BaseException):
    """Raised into the training run by an optimiser step the watch refuses. A BaseException, so
    that ``except Exception`` in the run does not swallow it; a run that swallows it anyway is
    refused every later step, and what it returns is ignored."""


def default_name(module: Any, name: str) -> str:
    """``"<class of the module>.<parameter>"``, e.g. ``"Linear.weight"``."""
    return f"{type(module).__name__}.{name}"


def watch_training(run: Callable[[], Any], every: int,
                   name_of: Callable[[Any, str], str] = default_name,
                   stop: Callable[[dict], bool] | None = None) -> dict:
    """``run()`` with torch's optimisers watched. Returns plain data:

    - ``"returned"``: what ``run()`` returned (None when the watch stopped it);
    - ``"steps"``: how many optimiser steps were taken (every optimiser counts);
    - ``"checkpoints"``: ``[step, params]`` before steps 1, ``every`` + 1, 2·``every`` + 1, …
      (the parameters the loss of that update was computed with), ``params`` a dict of CPU
      copies by name;
    - ``"final"``: the parameters of the optimiser that stepped last, after ``run()`` returned
      (``{}`` when none stepped), or those of the checkpoint where the run was stopped;
    - ``"stopped"``: the number of updates after which the watch stopped the run (None when it
      ran to its end).

    ``stop``: asked at every checkpoint after the first, with that checkpoint's copies, whether
    the run may end there; the step it would take is refused (``StopTraining``) and so is every
    later one, and whatever the run raises or returns afterwards is ignored. A ``stop`` that
    raises answers no from then on.

    Two parameters with one name keep both, the second as ``"<name>#2"`` (a model of that shape
    loads neither)."""
    from torch.nn.modules.module import register_module_parameter_registration_hook
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    names: dict[int, tuple[Any, str]] = {}  # id -> (the parameter, kept alive; its name)
    watched: dict[str, Any] = {"steps": 0, "checkpoints": [], "params": [], "stopped": None,
                               "stop": stop}

    def on_register(module: Any, name: str, param: Any) -> None:
        if param is not None:
            names[id(param)] = (param, name_of(module, name))

    def before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if watched["stopped"] is not None:
            raise StopTraining
        watched["steps"] += 1
        watched["params"] = [p for group in optimizer.param_groups for p in group["params"]]
        if (watched["steps"] - 1) % every == 0:
            copies = _copies(watched["params"], names)
            watched["checkpoints"].append([watched["steps"], copies])
            if watched["steps"] > 1 and _asks_to_stop(watched, copies):
                watched["steps"] -= 1  # this step is not taken
                watched["stopped"], watched["final"] = watched["steps"], copies
                raise StopTraining

    hooks = [register_module_parameter_registration_hook(on_register),
             register_optimizer_step_pre_hook(before_step)]
    returned: Any = None
    try:
        returned = run()
    except BaseException:
        if watched["stopped"] is None:
            raise
        # stopped: whatever the run did after the refused step (re-raising, another error) is
        # past the decision
    finally:
        for hook in hooks:
            hook.remove()
    if watched["stopped"] is not None:
        return {"returned": None, "steps": watched["steps"],
                "checkpoints": watched["checkpoints"], "final": watched["final"],
                "stopped": watched["stopped"]}
    return {"returned": returned, "steps": watched["steps"],
            "checkpoints": watched["checkpoints"],
            "final": _copies(watched["params"], names), "stopped": None}


def _asks_to_stop(watched: dict, copies: dict) -> bool:
    """``stop(copies)``; a predicate that fails is asked no more (the run goes to its end)."""
    if watched["stop"] is None:
        return False
    try:
        return bool(watched["stop"](copies))
    except Exception:  # noqa: BLE001 - e.g. the submission's module breaks the evaluation
        watched["stop"] = None
        return False


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

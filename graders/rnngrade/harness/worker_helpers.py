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
arguments (and of the module it calls). A lab's helpers import ``rnngrade.suite.worker`` only
(the decorators, ``watch_training``): the worker loads it before the jail, after which it reads no
grader file.
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

from rnngrade.harness.capture import capture_call
from rnngrade.harness.checks.compare import UNFINISHED, to_numpy
from rnngrade.harness.checks.seeding import seed_everything
from rnngrade.harness.checks.threads import pin_threads
from rnngrade.harness.training_watch import watch_training  # noqa: F401 - for labs' helpers

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Registry:
    """Helpers (called with the student's module first) and ``FunctionRef`` factories, by name."""

    helpers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    functions: dict[str, Callable[..., Callable]] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # a lab's platform modules: source

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


def platform_module(name: str, source: str) -> None:
    """Register ``source`` as the module a submission's ``import name`` gets (a lab's own
    platform module, such as lab 12's classic ``utils``; ``rnngrade.lab_helpers`` writes the
    call)."""
    if not name.isidentifier() or name in _collecting[-1].modules:
        raise ValueError(f"a platform module named {name!r} is impossible or registered twice")
    _collecting[-1].modules[name] = source


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
    return Registry({**GENERIC.helpers, **lab.helpers}, {**GENERIC.functions, **lab.functions},
                    dict(lab.modules))


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
def capture_locals(module: Any, target: str, call: str, is_helper: bool, args: tuple,
                   kwargs: dict, head: int | None = None) -> tuple[Any, dict]:
    """``(value, locals)``: ``module.call(*args, **kwargs)`` (a generic helper's when
    ``is_helper``) and the numeric locals of ``module.target`` when it returned
    (``rnngrade.harness.capture``); only the first ``head`` items of a tuple value."""
    if is_helper:
        value, taken = capture_call(getattr(module, target, None),
                                    lambda: GENERIC.helpers[call](module, *args, **kwargs))
    else:
        value, taken = capture_call(getattr(module, target, None),
                                    lambda: getattr(module, call)(*args, **kwargs))
    if head is not None and type(value) in (tuple, list):
        value = value[:head]
    return value, taken


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
    def steps(x: np.ndarray, indices: list) -> Any:
        for index in indices:
            index = tuple(int(i) for i in index)
            original = x[index]
            yield index, original + eps, original - eps, original

    return _losses_along(module, function, args, weights, targets, steps)


@helper
def directional_losses(module: Any, function: str, args: tuple, weights: list,
                       targets: list, eps: float) -> Any:
    """``perturbed_losses`` along whole-array directions: ``targets`` pairs a path with a list
    of directions ``v`` (arrays of the target's shape), and the answer gives, per target,
    ``[L(x + εv), L(x − εv)]`` for each direction (the whole array moves at once)."""
    def steps(x: np.ndarray, directions: list) -> Any:
        for v in directions:
            v = np.asarray(v, dtype=np.float64)
            original = x.copy()
            yield ..., original + eps * v, original - eps * v, original

    return _losses_along(module, function, args, weights, targets, steps)


def _losses_along(module: Any, function: str, args: tuple, weights: list, targets: list,
                  steps: Callable[[np.ndarray, list], Any]) -> Any:
    """Per target ``[path, spec]``: ``[L(plus), L(minus)]`` for each ``(where, plus, minus,
    original)`` that ``steps(x, spec)`` yields, the array ``x`` at ``path`` set to ``plus``
    and ``minus`` at ``where`` and restored to ``original`` after."""
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
        for path, spec in targets:
            x: Any = args  # then an entry inside the arguments, then the array itself
            for step in path:
                x = x[step]
            losses = []
            for where, plus_value, minus_value, original in steps(x, spec):
                x[where] = plus_value
                plus = loss()
                x[where] = minus_value
                minus = loss()
                x[where] = original
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



# ---------------------------------------------------------------- stand-ins for a failing callee

class _StandIn:
    """Installed as ``module.<name>`` while another function of the module is graded: a call
    that the module's own code makes (its frame's globals are the module's) goes to ``answer``
    first; any other call, and any call ``answer`` declines, goes to the module's own function.

    ``answered`` counts the calls ``answer`` took (for a replay: the distinct recorded calls)."""

    def __init__(self, module: Any, name: str, own: Any,
                 answer: Callable[[Any, tuple], tuple[bool, Any]]) -> None:
        self.module, self.name, self.own, self.answer = module, name, own, answer
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import sys

        if sys._getframe(1).f_globals is self.module.__dict__:
            found, value = self.answer(self.own, _positional(self.own, args, kwargs))
            if found:
                return value
        if not callable(self.own):
            raise NameError(f"name {self.name!r} is not defined")
        return self.own(*args, **kwargs)


def _positional(own: Any, args: tuple, kwargs: dict) -> tuple:
    """The call's arguments by position (keywords bound through the own function's signature,
    else appended in their order)."""
    if not kwargs:
        return args
    import inspect

    try:
        bound = inspect.signature(own).bind(*args, **kwargs)
        return tuple(bound.arguments.values())
    except (TypeError, ValueError):
        return (*args, *kwargs.values())


def _close(a: Any, b: Any, atol: float, rtol: float) -> bool:
    """Whether two argument trees agree: containers item by item, arrays and tensors within
    ``atol + rtol·|b|`` with the same shape, anything else by equality."""
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(
            _close(a[k], b[k], atol, rtol) for k in b)
    if isinstance(b, tuple | list):
        return isinstance(a, tuple | list) and len(a) == len(b) and all(
            _close(x, y, atol, rtol) for x, y in zip(a, b))
    x, y = to_numpy(a), to_numpy(b)
    if x is None or y is None:
        try:
            return x is None and y is None and bool(a == b)
        except Exception:  # noqa: BLE001 - an argument without a usable ==
            return False
    if x.shape != y.shape:
        return False
    if x.dtype.kind not in "fciub" or y.dtype.kind not in "fciub":
        return bool(np.array_equal(x, y))
    if (x == y).all():  # the usual case, the very numbers recorded: 5x cheaper than allclose
        return True
    return bool(np.allclose(x, y, atol=atol, rtol=rtol, equal_nan=True))


class _Replay:
    """The answers to known calls: ``calls`` is a list of ``[args, result]``; a call whose
    arguments agree with a recorded call's gets a fresh copy of its result."""

    def __init__(self, calls: list, atol: float, rtol: float) -> None:
        self.calls, self.atol, self.rtol = calls, atol, rtol
        self.taken: set[int] = set()
        self.next = 0

    def __call__(self, own: Any, args: tuple) -> tuple[bool, Any]:
        order = [*range(self.next, len(self.calls)), *range(self.next)]
        for i in order:
            recorded_args, result, *slopes = self.calls[i]
            if _close(args, tuple(recorded_args), self.atol, self.rtol):
                self.taken.add(i)
                self.next = (i + 1) % len(self.calls)
                value = _fresh(result)
                return True, _linearised(value, args, slopes[0]) if slopes else value
        return False, None

    @property
    def answered(self) -> int:
        return len(self.taken)


def _linearised(value: Any, args: tuple, slopes: dict) -> Any:
    """``value`` (a tensor or a tuple of tensors) plus ``J · (x − x)`` for each argument ``x``
    that takes part in autograd: the same numbers, with the recorded Jacobians ``J`` as their
    derivatives (complex tensors as pairs of reals)."""
    import torch

    def real(t: Any) -> Any:
        return torch.view_as_real(t) if t.is_complex() else t

    leaves = [value] if isinstance(value, torch.Tensor) else list(value)
    moved = []
    for k, leaf in enumerate(leaves):
        delta = None
        for i, block in zip(slopes["wrt"], slopes["blocks"][k]):
            x = args[i]
            if not (isinstance(x, torch.Tensor) and x.requires_grad):
                continue
            dx = real(x) - real(x).detach()  # zero, carrying x's gradient
            step = (block.to(dx.device, dx.dtype).reshape(-1, dx.numel()) @ dx.reshape(-1))
            delta = step if delta is None else delta + step
        if delta is None:
            moved.append(leaf)
            continue
        shaped = delta.reshape(real(leaf).shape)
        moved.append(leaf + (torch.view_as_complex(shaped.contiguous()) if leaf.is_complex()
                             else shaped))
    return moved[0] if isinstance(value, torch.Tensor) else type(value)(moved)


class _Always:
    """Answers every call with a grader function (a lab's built-in stand-in)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn, self.answered = fn, 0

    def __call__(self, own: Any, args: tuple) -> tuple[bool, Any]:
        self.answered += 1
        return True, self.fn(*args)


@function
def replay(calls: list, atol: float, rtol: float) -> _Replay:
    """A stand-in's answers: the recorded results of ``calls`` (``[args, result]`` pairs)."""
    return _Replay(calls, float(atol), float(rtol))


_INSTALLED: dict[int, list[tuple[str, Any, _StandIn]]] = {}  # id(module) → what was replaced


def _own(module: Any, name: str) -> Any:
    """What the module's own code finds under ``name``: its global, else its builtins' (where a
    course platform's helper such as ``rnn_utils.softmax`` lives); None when neither has it."""
    found = module.__dict__.get(name)
    if found is None:
        builtins = module.__dict__.get("__builtins__")
        found = builtins.get(name) if isinstance(builtins, dict) else getattr(builtins, name, None)
    return found


@helper
def install_stand_in(module: Any, name: str, answers: Any) -> None:
    """Put a stand-in for ``module.<name>`` in place (see ``_StandIn``); ``answers`` is a
    ``replay`` or any callable, which then answers every call the module's code makes."""
    answer = answers if isinstance(answers, _Replay) else _Always(answers)
    stand_in = _StandIn(module, name, _own(module, name), answer)
    # what goes back afterwards: the module's global (None: none, a builtin stays a builtin)
    _INSTALLED.setdefault(id(module), []).append((name, module.__dict__.get(name), stand_in))
    setattr(module, name, stand_in)


@helper
def remove_stand_ins(module: Any) -> dict:
    """Put the module's own functions back; return, per replaced name, how many calls its
    stand-in answered."""
    answered = {}
    for name, own, stand_in in reversed(_INSTALLED.pop(id(module), [])):
        if own is None:
            module.__dict__.pop(name, None)
        else:
            setattr(module, name, own)
        answered[name] = int(stand_in.answer.answered)
    return answered


@helper
def call_each(module: Any, function: str, calls: list, head: int | None = None,
              changes: bool = False) -> list:
    """``module.function(*args)`` for each ``args`` in ``calls``; only the first ``head`` items
    of a tuple result (None: all of it). changes: each item is ``[result, changed]`` instead,
    changed telling whether the call wrote into an array among its arguments."""
    target = getattr(module, function)

    def first(value: Any) -> Any:
        return value[:head] if head is not None and isinstance(value, tuple | list) else value

    if not changes:
        return [first(target(*args)) for args in calls]
    results = []
    for args in calls:
        try:
            before = copy.deepcopy(args)
        except Exception:  # noqa: BLE001 - a value that cannot be copied: not compared
            before = None
        value = first(target(*args))
        results.append([value, before is not None and arrays_differ(before, args)])
    return results


def arrays_differ(before: Any, after: Any) -> bool:
    """Whether an array inside ``after`` (tuples, lists, dicts) holds other values than the same
    entry of ``before``, its copy from before a call; other objects are not compared."""
    if isinstance(before, tuple | list) and isinstance(after, tuple | list):
        return len(before) != len(after) or any(arrays_differ(b, a)
                                                for b, a in zip(before, after))
    if isinstance(before, dict) and isinstance(after, dict):
        return any(arrays_differ(v, after[k]) for k, v in before.items() if k in after)
    b, a = to_numpy(before), to_numpy(after)
    if b is None or a is None:
        return False
    return b.shape != a.shape or not np.array_equal(b, a, equal_nan=b.dtype.kind in "fc")


# ------------------------------------------------------------------ tests graded by outcome

@helper
def prepare_outcome(module: Any, seed: int) -> dict[str, bool]:
    """Before a test graded by outcome (in its own fresh worker): one thread everywhere, and
    NumPy's, ``random``'s and torch's global generators seeded with ``seed``, TF32 off."""
    pinned = pin_threads()
    seed_everything(seed)
    return pinned

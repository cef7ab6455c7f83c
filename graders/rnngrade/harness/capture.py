"""Capturing a function's local values at its return (runs beside the student's code).

``capture_call`` runs one call with a profile hook on the frame of one function and copies that
frame's numeric locals, and its return value, as it returns: plain float64 NumPy arrays, bounded
in count and size, never the student's objects. Only exact NumPy arrays (or the base array of a
subclass, viewed without the subclass's code), exact torch tensors and parameters, Python and
NumPy numbers, and those one level inside a dict, tuple or list are read; anything else is
skipped without touching it. The grader compares the copies with the reference's intermediate
values (``rnngrade.diagnosis.localise``); nothing captured is shown to a student as it is.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

MAX_NAMES = 64  # captured leaves per call
MAX_ELEMENTS = 100_000  # elements of one captured array
MAX_TOTAL = 500_000  # elements over all captured arrays (4 MB as float64)
MAX_ITEMS = 16  # items read inside one dict, tuple or list
MAX_SEEN = 256  # locals looked at per frame
MAX_NAME_CHARS = 60
RETURN = "return"  # the label of the return value among the captured leaves

_NUMBERS = (int, float, np.float64, np.float32, np.float16, np.int64, np.int32)


def capture_call(function: Any, run: Callable[[], Any]) -> tuple[Any, dict[str, np.ndarray]]:
    """``(run(), locals)``: the locals of the first call of ``function`` (a plain function) made
    while ``run`` runs, as they were when it returned, with its return value under ``RETURN``.
    Empty when ``function`` is not a plain function or was not called; whatever ``run``
    raises is raised."""
    if type(function) is not types.FunctionType:
        return run(), {}
    code = function.__code__
    state: dict[str, Any] = {"frame": None, "taken": None}

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        try:
            if event == "call" and state["frame"] is None and frame.f_code is code:
                state["frame"] = frame
            elif event == "return" and frame is state["frame"]:
                state["taken"] = snapshot(frame.f_locals, arg)
                state["frame"] = False  # done: later calls are not captured
        except BaseException:  # noqa: BLE001 - never let the capture change the call
            state["frame"] = False

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        value = run()
    finally:
        sys.setprofile(previous)
        state["frame"] = None
    return value, state["taken"] or {}


def snapshot(frame_locals: Any, returned: Any) -> dict[str, np.ndarray]:
    """Copies of the numeric leaves of a frame's locals and of its return value."""
    taken: dict[str, np.ndarray] = {}
    total = [0]
    try:
        items = list(dict.items(dict(frame_locals)))[:MAX_SEEN]
    except BaseException:  # noqa: BLE001 - a frame whose locals cannot be listed
        items = []
    for name, value in [*items, (RETURN, returned)]:
        if len(taken) >= MAX_NAMES:
            break
        if type(name) is not str or len(name) > MAX_NAME_CHARS:
            continue
        for label, leaf in _leaves(name, value):
            array = _copy(leaf, total)
            if array is not None and len(taken) < MAX_NAMES:
                taken[label] = array
    return taken


def _leaves(name: str, value: Any) -> Iterator[tuple[str, Any]]:
    """``(label, value)`` for ``value`` and, one level down, the items of a plain dict (string
    or integer keys), tuple or list."""
    kind = type(value)
    if kind is dict:
        for key, item in list(dict.items(value))[:MAX_ITEMS]:
            if type(key) is int or (type(key) is str and len(key) <= MAX_NAME_CHARS):
                yield f"{name}[{key!r}]", item
    elif kind is tuple or kind is list:
        for index, item in enumerate(list(value)[:MAX_ITEMS]):
            yield f"{name}[{index}]", item
    else:
        yield name, value


def _copy(value: Any, total: list[int]) -> np.ndarray | None:
    """A float64 copy of a numeric array, tensor or number; None for anything else or anything
    too large."""
    kind = type(value)
    if kind is bool or kind is np.bool_:
        return None
    if kind in _NUMBERS:
        try:
            number = float(value)
        except (OverflowError, ValueError, TypeError):
            return None
        return _counted(np.array(number), total)
    if issubclass(kind, np.ndarray):
        base = np.ndarray.view(value, np.ndarray)  # the subclass's own code never runs
        if (base.dtype.kind not in "biuf" or base.dtype.fields is not None
                or base.size > MAX_ELEMENTS or total[0] + base.size > MAX_TOTAL):
            return None
        return _counted(base.astype(np.float64, copy=True), total)
    return _tensor(value, total)


def _tensor(value: Any, total: list[int]) -> np.ndarray | None:
    torch = sys.modules.get("torch")
    if torch is None or type(value) not in (torch.Tensor, torch.nn.Parameter):
        return None
    tensor = torch.Tensor.detach(value)
    if (tensor.layout != torch.strided or tensor.device.type not in ("cpu", "cuda")
            or tensor.is_complex() or tensor.dtype == torch.bool
            or tensor.numel() > MAX_ELEMENTS or total[0] + tensor.numel() > MAX_TOTAL):
        return None
    return _counted(tensor.to(device="cpu", dtype=torch.float64, copy=True).numpy(), total)


def _counted(array: np.ndarray, total: list[int]) -> np.ndarray:
    total[0] += max(1, array.size)
    return np.ascontiguousarray(array)

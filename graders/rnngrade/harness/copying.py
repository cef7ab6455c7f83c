"""Deep copies of the plain data that travels between a check and a function it calls."""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np

_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.generic)


def copy_tree(value: Any, _arrays: dict[int, Any] | None = None) -> Any:
    """A deep copy of plain data (dicts, lists, tuples, arrays, tensors), faster than
    ``copy.deepcopy`` (several times for tensors); anything else goes through
    ``copy.deepcopy``. An array or tensor met twice is copied once and stays shared in the copy,
    as ``copy.deepcopy`` keeps it (every cache of a recorded forward pass holds the same
    parameters: the sandbox then sends them once)."""
    kind = type(value)
    if isinstance(value, _IMMUTABLE):
        return value
    if _arrays is None:
        _arrays = {}
    if kind is dict:
        return {k: copy_tree(v, _arrays) for k, v in value.items()}
    if kind is list:
        return [copy_tree(v, _arrays) for v in value]
    if kind is tuple:
        return tuple(copy_tree(v, _arrays) for v in value)
    found = _arrays.get(id(value))
    if found is not None:
        return found
    if kind is np.ndarray and not value.dtype.hasobject:
        copied = value.copy(order="K")
    else:
        torch = sys.modules.get("torch")
        if torch is not None and kind is torch.Tensor and not value.requires_grad \
                and value.grad is None and value.layout == torch.strided:
            copied = value.clone()
        else:
            return copy.deepcopy(value)
    _arrays[id(value)] = copied  # ``value`` outlives this copy: its id stays its own
    return copied

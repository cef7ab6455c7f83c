"""Worker side: whether a call left its arguments exactly as they arrived.

The grader checks that student functions do not modify their inputs, so a reply carries the
arguments as they were after the call. Most calls change nothing, and then sending them back
(and the grader decoding and comparing them) is pure cost. The decoded arrays and tensors of a
request share memory with the request's buffer (``decode`` reports when one does not), so
"unchanged" is: the buffer holds the bytes that arrived, and every container, array and tensor
reachable from the arguments is the same object with the same items, shape, strides and dtype
(and, for a tensor, storage and ``requires_grad``) as before the call. When that holds the
worker replies ``None`` for the arguments and the grader takes its own copy as the state after
the call.

A student who fools this check (by patching torch, say) only hides an in-place modification of
the worker's own copy, which never reaches the grader's; nothing is gained by lying. Whatever
it cannot vouch for (an object behind a handle, an array that does not share the buffer, a large
message) makes it answer "changed", and the arguments travel back as before.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from rnngrade.harness.runner.base import ArgRef, FunctionRef

LIMIT = 64 << 20  # larger requests are not copied to compare: their arguments travel back

_IMMUTABLE = frozenset({type(None), bool, int, float, complex, str, bytes, ArgRef})
_CONTAINERS = frozenset({list, tuple})


class ArgumentGuard:
    """Taken before a call on its decoded ``(args, kwargs)``; ``unchanged()`` after it.
    ``in_place``: whether every decoded array and tensor shares ``buffer``'s memory."""

    def __init__(self, values: Any, buffer: bytearray, in_place: bool) -> None:
        self.values = values
        self.buffer = buffer
        self.entries: list | None = None
        self.saved: bytes | None = None
        if not in_place or len(buffer) > LIMIT:
            return
        try:
            self.entries = _snapshot(values)
            self.saved = bytes(buffer)
        except Exception:  # noqa: BLE001 - anything unexpected: the arguments travel back
            self.entries = self.saved = None

    def unchanged(self) -> bool:
        if self.entries is None or self.saved is None:
            return False
        try:
            if self.buffer != self.saved:
                return False
            after = _snapshot(self.values)
        except BaseException:  # noqa: BLE001 - e.g. a patched torch.Tensor attribute
            return False
        if len(after) != len(self.entries):
            return False
        for (obj, kind, extra), (obj2, kind2, extra2) in zip(self.entries, after):
            if obj is not obj2 or kind != kind2:
                return False
            if kind == "items":
                if len(extra) != len(extra2) or not all(x is y for x, y in zip(extra, extra2)):
                    return False
            elif kind == "dict":
                if len(extra) != len(extra2) or not all(
                        k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(extra, extra2)):
                    return False
            elif extra != extra2:
                return False
        return True


def _snapshot(values: Any) -> list:
    """(object, kind, what must stay the same) for every mutable object reachable from
    ``values``, in a fixed order; raises ValueError for anything it cannot vouch for."""
    entries: list = []
    seen: set[int] = set()
    torch = sys.modules.get("torch")
    tensor_type = torch.Tensor if torch is not None else None
    stack = [values]
    while stack:
        value = stack.pop()
        t = type(value)
        if t in _IMMUTABLE:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if t in _CONTAINERS:
            entries.append((value, "items", tuple(value)))
            stack.extend(value)
        elif t is dict:
            items = tuple(dict.items(value))
            entries.append((value, "dict", items))
            stack.extend(v for _, v in items)
        elif t is np.ndarray:
            entries.append((value, "array", (value.shape, value.strides, value.dtype)))
        elif tensor_type is not None and t is tensor_type:
            if value.grad is not None:
                raise ValueError("a tensor with a gradient")
            entries.append((value, "tensor", (
                value.shape, value.stride(), value.dtype, value.data_ptr(),
                value.storage_offset(), value.requires_grad)))
        elif isinstance(value, np.generic) and t.__module__ == "numpy":
            continue
        elif t is FunctionRef:
            stack.append(value.args)
        else:  # a handle's object, or anything else: nothing to vouch for
            raise ValueError(f"cannot vouch for a {t.__name__}")
    return entries

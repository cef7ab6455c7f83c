"""Memoising the trusted side's values across the submissions one grader process grades.

Every submission meets the same hidden tests with the same seeded inputs, so the reference's
result (and each mutant's, for diagnosis) is the same for all of them; a long-lived grader computes
it once. The key must capture *everything* the value depends on, or a student would be compared
with the wrong expectation, so it is a SHA-256 over:

- the check's name and the role ("reference", "oracle", "mutant <name>");
- the probe or oracle function: its code (bytecode, constants, names), default arguments and the
  *contents* of its closure cells (a probe closing over a student proxy or a random generator is
  not memoised at all);
- the argument bytes (dtype, shape, strides, device and raw bytes of every array or tensor);
- for a computation that draws from the global generators (``random``, NumPy, torch CPU and
  initialised CUDA devices), their states just before the call; the states just after are stored
  with the value and restored on a hit, so a hit leaves the process exactly as a computation
  would have. (A computation that leaves every generator as it found it drew nothing from them.)

Anything the digest does not understand (an arbitrary object, a generator, a proxy) makes the
call uncacheable: it then simply runs. Stored values are deep-copied on the way in and out, and
the memo is a bounded LRU (by bytes), so memory stays flat however many submissions are graded.

A grader's memo (``ExpectationMemo(disk=DiskScope(...))``) also keeps what it computes on disk,
for the next grading process of the same lab version (``grading.reference_cache``: the lab's
content digest, the grader's source and version, the device, the library versions and the kind
of CPU are in the key beside the memo's own): a value is kept when plain data holds it exactly,
and one that drew from the global generators is kept under their states before the call, with
the states after it to restore. A failing computation, or a value plain data cannot hold, is
simply computed again by the next process. Every process returns the value as decoded from its
plain form, cached or not, so a result is the same with a cold or a warm cache.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import hashlib
import os
import random
import sys
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from rnngrade.harness.copying import copy_tree

DEFAULT_MAX_BYTES = 256 << 20
_MAX_DEPTH = 12


class Undigestable(Exception):
    """A value whose content cannot be hashed safely; the call is not memoised."""


def _feed(h: Any, obj: Any, depth: int = 0) -> None:
    """Feed a canonical, type-tagged encoding of ``obj`` into the hash ``h``.

    Plain builtins and containers (the common case) are encoded here; the other families are
    tried in a fixed order, each helper saying whether ``obj`` was one of its kinds."""
    if depth > _MAX_DEPTH:
        raise Undigestable("too deep")
    kind = type(obj)
    tag = _TAGS.get(kind)
    if tag is None:
        tag = _type_tag(kind)
    h.update(tag)
    if obj is None or obj is Ellipsis or kind in (bool, int, float, complex, range, slice):
        h.update(repr(obj).encode() + b"\0")
    elif kind is str:
        data = obj.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little") + data)
    elif kind in (bytes, bytearray):
        h.update(len(obj).to_bytes(8, "little") + bytes(obj))
    elif kind in (tuple, list, frozenset, set):
        items = sorted(obj, key=repr) if kind in (set, frozenset) else obj
        h.update(len(items).to_bytes(8, "little"))
        for item in items:
            _feed(h, item, depth + 1)
    elif kind is dict:
        h.update(len(obj).to_bytes(8, "little"))
        for key, value in obj.items():  # insertion order matters to iterating code
            _feed(h, key, depth + 1)
            _feed(h, value, depth + 1)
    elif not (_feed_array(h, obj, kind) or _feed_callable(h, obj, kind, depth)
              or _feed_object(h, obj, depth)):
        raise Undigestable(f"cannot digest a {kind.__qualname__}")


_TAGS: dict[type, bytes] = {}  # a type -> its length-prefixed name, as _feed encodes it
_HEADERS: dict[tuple, bytes] = {}  # (dtype, shape, strides) -> an array's header, encoded
_CACHE_LIMIT = 4096  # entries per cache of encodings: a full cache starts again


def _cache(cache: dict, key: Any, value: Any) -> Any:
    """Keep ``value`` under ``key`` in one of the encoding caches; return it."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
    return value


def _type_tag(kind: type) -> bytes:
    name = f"{kind.__module__}.{kind.__qualname__}".encode()
    return _cache(_TAGS, kind, len(name).to_bytes(2, "little") + name)


def _feed_array(h: Any, obj: Any, kind: type) -> bool:
    """NumPy arrays, scalars and dtypes, and torch tensors, dtypes and devices; False for
    anything else."""
    if kind is np.ndarray:
        if obj.dtype.hasobject:
            raise Undigestable("object array")
        layout = (obj.dtype, obj.shape, obj.strides)
        header = _HEADERS.get(layout)
        if header is None:
            header = f"{obj.dtype.str}|{obj.dtype.descr}|{obj.shape}|{obj.strides}".encode()
            if obj.dtype.fields is None:  # equal structured dtypes may still differ in descr
                _cache(_HEADERS, layout, header)
        h.update(header)
        flat = np.ascontiguousarray(obj)
        # a numeric array's buffer as it is; other kinds (datetimes have no buffer) as bytes
        h.update(flat.data if obj.size and obj.dtype.kind in "biufc" else flat.tobytes())
    elif isinstance(obj, np.generic) and kind.__module__ == "numpy":
        if isinstance(obj, np.object_):
            raise Undigestable("numpy object scalar")
        h.update(obj.dtype.str.encode() + obj.tobytes())
    elif isinstance(obj, np.dtype):
        h.update(obj.str.encode() + str(obj.descr).encode())
    elif _is_torch(obj):
        _feed_torch(h, obj)
    else:
        return False
    return True


def _feed_callable(h: Any, obj: Any, kind: type, depth: int) -> bool:
    """Functions, code, partials, builtins, ufuncs, classes and modules; False for anything
    else."""
    if kind is types.FunctionType:
        _feed_function(h, obj, depth)
    elif kind is types.CodeType:
        _feed_code(h, obj, depth)
    elif kind is functools.partial:
        _feed(h, (obj.func, obj.args, obj.keywords), depth + 1)
    elif kind in (types.BuiltinFunctionType, np.ufunc) or isinstance(obj, type):
        h.update(f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)}"
                 .encode())
    elif kind is types.ModuleType:
        h.update(obj.__name__.encode())
    else:
        return False
    return True


def _feed_object(h: Any, obj: Any, depth: int) -> bool:
    """Enum members and dataclass instances (field by field); False for anything else."""
    if isinstance(obj, enum.Enum):
        h.update(repr(obj).encode())
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            _feed(h, f.name, depth + 1)
            _feed(h, getattr(obj, f.name), depth + 1)
    else:
        return False
    return True


def _is_torch(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor | torch.dtype | torch.device)


def _feed_torch(h: Any, obj: Any) -> None:
    import torch

    if not isinstance(obj, torch.Tensor):
        h.update(str(obj).encode())
        return
    if type(obj) not in (torch.Tensor, torch.nn.Parameter) or obj.layout != torch.strided \
            or obj.is_quantized or obj.device.type == "meta":
        raise Undigestable("not a dense strided tensor")
    h.update(f"{obj.dtype}|{tuple(obj.shape)}|{obj.stride()}|{obj.device}|"
             f"{obj.requires_grad}|{obj.is_leaf}".encode())
    flat = obj.detach().resolve_conj().resolve_neg().to("cpu").contiguous().reshape(-1)
    h.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")


def _feed_function(h: Any, fn: types.FunctionType, depth: int) -> None:
    h.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    _feed_code(h, fn.__code__, depth)
    _feed(h, fn.__defaults__, depth + 1)
    _feed(h, fn.__kwdefaults__, depth + 1)
    cells = fn.__closure__ or ()
    try:
        contents = tuple(cell.cell_contents for cell in cells)
    except ValueError:  # an empty cell (a closure variable not yet bound)
        raise Undigestable("unbound closure variable") from None
    _feed(h, contents, depth + 1)


_CODE_DIGESTS: dict[int, tuple[types.CodeType, bytes]] = {}  # id -> (the code, its digest)


def _feed_code(h: Any, code: types.CodeType, depth: int) -> None:
    """A code object's digest (computed once per code object: it is immutable, and a probe
    written as a lambda is a new function around the same code on every call)."""
    known = _CODE_DIGESTS.get(id(code))
    if known is None or known[0] is not code:
        inner = hashlib.sha256(
            code.co_code + repr((code.co_names, code.co_varnames, code.co_freevars,
                                 getattr(code, "co_qualname", code.co_name))).encode())
        for const in code.co_consts:
            _feed(inner, const, depth + 1)
        known = _cache(_CODE_DIGESTS, id(code), (code, inner.digest()))
    h.update(known[1])


def digest(*parts: Any) -> str:
    """The SHA-256 of ``parts``; raises Undigestable for content it cannot encode safely."""
    h = hashlib.sha256()
    _feed(h, parts)
    return h.hexdigest()


def _rng_state() -> tuple:
    state: list[Any] = [random.getstate(), np.random.get_state()]
    torch = sys.modules.get("torch")
    if torch is not None:
        state.append(torch.get_rng_state())
        if torch.cuda.is_initialized():
            state.append(torch.cuda.get_rng_state_all())
    return tuple(state)


def _set_rng_state(state: tuple) -> None:
    random.setstate(state[0])
    np.random.set_state(state[1])
    if len(state) > 2:
        import torch

        torch.set_rng_state(state[2])
        if len(state) > 3:
            torch.cuda.set_rng_state_all(state[3])


def _same_rng(a: tuple, b: tuple) -> bool:
    if len(a) != len(b) or a[0] != b[0]:
        return False
    (name_a, keys_a, *rest_a), (name_b, keys_b, *rest_b) = a[1], b[1]
    if name_a != name_b or rest_a != rest_b or not np.array_equal(keys_a, keys_b):
        return False
    if len(a) > 2:
        import torch

        tensors_a = [a[2], *(a[3] if len(a) > 3 else [])]
        tensors_b = [b[2], *(b[3] if len(b) > 3 else [])]
        return len(tensors_a) == len(tensors_b) and all(
            torch.equal(x, y) for x, y in zip(tensors_a, tensors_b))
    return True


def _restored(after: tuple | None, before: tuple) -> bool:
    """Put the generators in the states ``after`` a computation read from disk (None: it drew
    nothing); False, with the states ``before`` put back, when they cannot be set."""
    if after is None:
        return True
    try:
        _set_rng_state(after)
    except Exception:  # noqa: BLE001 - a state that does not load: compute instead
        _set_rng_state(before)
        return False
    return True


def _is_rng_state(state: Any) -> bool:
    """Whether ``state`` has the form ``_rng_state`` gives (read back from disk)."""
    if not isinstance(state, tuple) or len(state) not in (2, 3, 4):
        return False
    if not (isinstance(state[0], tuple) and isinstance(state[1], tuple)):
        return False
    if len(state) == 2:
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(state[2], torch.Tensor) and (
        len(state) == 3 or isinstance(state[3], list))


def _rng_digest(state: tuple) -> str:
    version, internal, gauss = state[0]
    h = hashlib.sha256(repr((version, gauss)).encode())
    h.update(np.array(internal, dtype=np.uint64).tobytes())
    _feed(h, tuple(state[1]))
    for extra in state[2:]:
        _feed(h, extra)
    return h.hexdigest()


def _nbytes(value: Any, _counted: set[int] | None = None) -> int:
    """About the memory ``value`` holds (a shared array counted once)."""
    counted = set() if _counted is None else _counted
    if isinstance(value, tuple | list):
        return 64 + sum(_nbytes(v, counted) for v in value)
    if isinstance(value, dict):
        return 64 + sum(_nbytes(v, counted) for v in value.values())
    if id(value) in counted:
        return 8
    if isinstance(value, np.ndarray):
        counted.add(id(value))
        return value.nbytes + 128
    if _is_torch(value) and hasattr(value, "element_size"):
        counted.add(id(value))
        return value.element_size() * value.numel() + 256
    return 64


@dataclasses.dataclass
class _Entry:
    ok: bool  # False: ``value`` is the exception the computation raised
    value: Any
    rng_after: tuple | None  # None: the computation left every generator as it found it
    size: int
    rng_dependent: bool = False  # a marker: look the value up under the RNG state too


@dataclasses.dataclass(frozen=True)
class DiskScope:
    """Where a grader's memo keeps its values on disk: one lab version, on one device."""

    lab: str
    digest: str  # the lab's content digest (``LabAssets.digest``)
    device: str

    def key(self, entry: str) -> dict:
        """The on-disk key of the memo's ``entry``, with this process's thread settings (a
        float sum split over other threads may round otherwise)."""
        from rnngrade.grading.reference_cache import memo_key

        return memo_key(lab=self.lab, digest=self.digest, device=self.device, entry=entry,
                        threads=_threads())


def _threads() -> list:
    """torch's thread count (None before torch is imported) and the thread variables."""
    from rnngrade.sandbox.isolation import THREAD_VARIABLES

    torch = sys.modules.get("torch")
    return [torch.get_num_threads() if torch is not None else None,
            *(os.environ.get(name) for name in THREAD_VARIABLES)]


class ExpectationMemo:
    """A bounded LRU of trusted values keyed by role, check, function, arguments and, for
    computations that draw random numbers, the global random state; with ``disk``, also kept
    on disk for the next process (see the module docstring).

    A computation that leaves every global generator exactly as it found it is taken not to
    depend on them (it drew nothing); one that moved a generator is keyed by the states before
    it, and a hit restores the states after it.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, disk: DiskScope | None = None
                 ) -> None:
        self.max_bytes = max_bytes
        self.disk = disk
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.uncacheable = self.disk_hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(name: str, fn: Any, args: tuple, extra: Any = None) -> str | None:
        """The key of a computation ``fn`` of ``args`` for check ``name`` (``extra``: further
        plain data it depends on); None when something in it cannot be digested safely."""
        try:
            return digest(name, fn, args, extra)
        except Undigestable:
            return None

    def compute(self, key: str | None, role: str, run: Callable[[], Any], *,
                shared: bool = False) -> Any:
        """``run()``, or the memoised result of the same computation (``role`` tells apart the
        reference, an oracle and each mutant sharing one key).

        shared: a hit returns the stored value itself, not a copy, for a caller that only
        reads it."""
        if key is None:
            self.uncacheable += 1
            return run()
        base = f"{role}|{key}"
        entry = self._entries.get(base)
        if entry is not None and not entry.rng_dependent:
            return self._hit(base, entry, shared)
        before = _rng_state()
        if entry is not None:  # known to draw random numbers: key by the state as well
            found = self._entries.get(f"{base}|{_rng_digest(before)}")
            if found is not None:
                return self._hit(f"{base}|{_rng_digest(before)}", found, shared)
        stored = self._from_disk(base, before)
        if stored is not None and _restored(stored[1], before):
            self.disk_hits += 1
            self._remember(base, before, True, stored[0])
            return stored[0]
        self.misses += 1
        try:
            value = run()
        except Exception as exc:
            self._remember(base, before, False, exc)
            raise
        value = self._to_disk(base, before, value)
        self._remember(base, before, True, value)
        return value

    def _from_disk(self, base: str, before: tuple) -> tuple[Any, tuple | None] | None:
        """``(value, the generators' states after it or None)`` kept on disk for ``base``
        (under ``before`` when the computation draws); None when there is none."""
        if self.disk is None:
            return None
        from rnngrade.grading.reference_cache import lookup

        found = lookup(self.disk.key(base))
        kept = found[0] if found is not None else None
        if not isinstance(kept, dict) or type(kept.get("draws")) is not bool:
            return None
        if not kept["draws"]:
            return (kept["value"], None) if "value" in kept else None
        found = lookup(self.disk.key(f"{base}|{_rng_digest(before)}"))
        kept = found[0] if found is not None else None
        if not isinstance(kept, dict) or "value" not in kept \
                or not _is_rng_state(kept.get("after")):
            return None
        return kept["value"], kept["after"]

    def _to_disk(self, base: str, before: tuple, value: Any) -> Any:
        """Keep ``value`` (just computed from the generators' states ``before``) on disk when
        plain data holds it exactly; the value as decoded from it (else ``value`` itself)."""
        if self.disk is None:
            return value
        from rnngrade.grading.reference_cache import keep

        after = _rng_state()
        if _same_rng(before, after):
            return keep(self.disk.key(base), {"draws": False, "value": value})["value"]
        keep(self.disk.key(base), {"draws": True})
        kept = keep(self.disk.key(f"{base}|{_rng_digest(before)}"),
                    {"value": value, "after": after})
        return kept["value"]

    def _hit(self, key: str, entry: _Entry, shared: bool) -> Any:
        self.hits += 1
        self._entries.move_to_end(key)
        if entry.rng_after is not None:
            _set_rng_state(entry.rng_after)
        if not entry.ok:
            raise copy.copy(entry.value).with_traceback(None)
        return entry.value if shared else copy_tree(entry.value)

    def _remember(self, base: str, before: tuple, ok: bool, value: Any) -> None:
        after = _rng_state()
        try:
            stored = copy_tree(value) if ok else copy.copy(value)
        except Exception:  # noqa: BLE001 - an uncopyable value is just not memoised
            return
        size = _nbytes(stored) if ok else 256
        if _same_rng(before, after):
            self._store(base, _Entry(ok, stored, None, size))
        else:
            self._store(base, _Entry(True, None, None, 64, rng_dependent=True))
            self._store(f"{base}|{_rng_digest(before)}", _Entry(ok, stored, after, size))

    def _store(self, key: str, entry: _Entry) -> None:
        if entry.size > self.max_bytes // 4:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old.size
        self._entries[key] = entry
        self.bytes += entry.size
        while self.bytes > self.max_bytes and self._entries:
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= evicted.size

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0


EXPECTATION_MEMO = pytest.StashKey[ExpectationMemo]()

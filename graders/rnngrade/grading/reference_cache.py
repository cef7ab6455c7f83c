"""The reference's outcome figures on disk, shared by every grading process of one lab version.

A test graded by outcome compares the student's training run with the reference's own
(``OutcomeRun.reference_value``). The reference's run is the same for every submission, so it is
computed once per *lab version* and kept in one JSON file per entry under ``cache_dir()``:

- ``$RNNGRADE_CACHE_DIR`` when set (set but empty: no disk cache, every value is computed),
  else ``$XDG_CACHE_HOME/rnngrade``, else ``~/.cache/rnngrade``. It is read and written by the
  grader's trusted process only; the sandbox hides it from workers (``sandbox.zygote.client``).
- The key (``entry_key``) holds everything a figure depends on: the lab's content digest (what
  ``grader_version`` records: any edit to its suite, reference or metadata changes it), the
  package version and the digest of its source (an edit to the grader's own code, version or
  not), the test's id (or none for a value shared by the lab's tests), the outcome seed, the
  caller's key, the device, the torch and NumPy versions and the kind of CPU. The file is
  named by the key's SHA-256 and records the key; a file whose key differs is never trusted.
- The same files keep the values a grader's memo computes on the trusted side (the
  reference's, an oracle's, a mutant's results of a check: ``grading.memo``), under
  ``memo_key``: the same facts, the memo's own digest of the check, its probe and its
  arguments (and of the global generators' states when the computation draws from them), and
  the process's thread settings (torch's thread count and the thread variables).
- Values are plain data: None, bools, ints, finite floats, strings, lists, tuples, dicts with
  string keys (kept in their order: code that iterates over a dict depends on it), and NumPy
  arrays and scalars and CPU torch tensors of numeric dtypes (raw bytes, base64). A value is
  kept only when decoding its encoding gives it back exactly (same types, floats bit for bit,
  arrays of the same dtype, shape, strides and bytes); anything else is simply computed every
  time. The value handed back is the decoded one on a cold cache too, so
  a graded result is the same with a cold or a warm cache.
- Files are written atomically (a temporary file, then ``os.replace``); an unreadable, corrupt or
  foreign file is ignored and recomputed; a location that cannot be written costs one note on
  stderr and the value is computed every time.
- Files sit in one folder per grader generation and lab version; what this grader can no longer
  hit is removed when a grading run starts, and the rest is kept under a size cap
  (``$RNNGRADE_CACHE_MAX``), least recently used first (``grading.cache_eviction``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from rnngrade.files import write_atomic
from rnngrade.grading import cache_eviction
from rnngrade.paths import CACHE_ENV as ENV
from rnngrade.paths import cache_dir

FORMAT = 2  # 2: a value's dicts keep their order on disk (1 sorted their keys)
_TAGS = ("$tuple", "$ndarray", "$npscalar", "$tensor")
_TORCH_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool")
_warned = False


class _Uncacheable(Exception):
    """A value (or key) that plain data cannot hold exactly; it is computed, not cached."""


def library_versions() -> dict[str, str]:
    """The versions a trained figure may depend on, and the kind of CPU (read on first use:
    facts of this machine, not of any course file)."""
    if not _LIBRARIES:
        _LIBRARIES.update(_library_facts())
    return dict(_LIBRARIES)


def _library_facts() -> dict[str, str]:
    try:
        torch = metadata.version("torch")  # without importing torch
    except metadata.PackageNotFoundError:
        torch = "none"
    return {"torch": torch, "numpy": np.__version__, "cpu": _cpu_kind()}


def _cpu_kind() -> str:
    """The processor's architecture, model and instruction sets, digested: float32 kernels
    differ by CPU (AVX-512 against AVX2), and a training run carries the difference into its
    figures, so a cache shared between machines keeps one entry per kind of CPU."""
    import platform

    facts = [platform.machine()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith(("model name", "flags", "Features")):
                    facts.append(line.strip())
                if len(facts) >= 3:
                    break
    except OSError:
        pass
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:16]


_LIBRARIES: dict[str, str] = {}


def package_digest() -> str:
    """SHA-256 over the grader package's Python source (read once per process): values kept
    on disk are computed by the grader's own code too (the watch of a training run, the
    promotion of a check's arguments), so any edit to it starts a fresh cache."""
    if not _PACKAGE:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            data = path.read_bytes()
            name = path.relative_to(root).as_posix().encode()
            h.update(name + b"\0" + len(data).to_bytes(8, "little") + data)
        _PACKAGE.append(h.hexdigest())
    return _PACKAGE[0]


_PACKAGE: list[str] = []


def _common(lab: str, digest: str, device: str) -> dict:
    from rnngrade import __version__

    return {"format": FORMAT, "lab": lab, "digest": digest, "rnngrade": __version__,
            "source": package_digest(), "device": device, **library_versions()}


def entry_key(*, lab: str, digest: str, test: str, seed: int, key: Any, device: str) -> dict:
    """The full key of one entry (``test`` is "" for a value shared by the lab's tests)."""
    return {**_common(lab, digest, device), "test": test, "seed": seed, "key": key}


def memo_key(*, lab: str, digest: str, device: str, entry: str, threads: list) -> dict:
    """The full key of a memo's entry (``entry``: the memo's digest of the computation;
    ``threads``: the process's thread settings)."""
    return {**_common(lab, digest, device), "memo": entry, "threads": threads}


def value_of(key: dict, compute: Callable[[], Any]) -> Any:
    """The value stored under ``key``, else ``compute()`` (stored when it is plain data)."""
    found = lookup(key)
    if found is not None:
        return found[0]
    return keep(key, compute())


def lookup(key: dict) -> tuple[Any] | None:
    """``(value,)`` stored under ``key``; None when there is none (or no readable one)."""
    named = _named(key)
    if named is None or named[1] is None:
        return None
    found = _read(named[1], json.loads(named[0]))
    if found is not None:
        cache_eviction.used(named[1])
    return found


def keep(key: dict, value: Any) -> Any:
    """Store ``value`` under ``key`` when plain data holds it exactly, and return it as decoded
    from that plain form (else ``value`` itself, not stored)."""
    named = _named(key)
    if named is None:
        return value
    key_text, path = named
    try:
        encoded = encode(value)
        # the key canonical (sorted: it names the file), the value in its own order
        text = _dumps({"key": json.loads(key_text), "value": encoded}, sort_keys=False)
        restored = decode(encoded)
    except (_Uncacheable, ValueError, TypeError):
        return value
    if not same(value, restored):
        return value
    if path is not None:
        _write(path, text)
    return restored


def _named(key: dict) -> tuple[str, Path | None] | None:
    """The key's canonical text and its file (None when the cache is off); None for a key
    that is not plain data (it names no file)."""
    try:
        key_text = _dumps(encode(key))
    except _Uncacheable:
        return None
    root = cache_dir()
    if root is None:
        return key_text, None
    name = f"{hashlib.sha256(key_text.encode()).hexdigest()}.json"
    return key_text, cache_eviction.folder_of(root, key) / name


def _dumps(data: Any, sort_keys: bool = True) -> str:
    try:
        return json.dumps(data, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise _Uncacheable(str(exc)) from exc


def _read(path: Path, key: Any) -> tuple[Any] | None:
    """``(value,)`` from the file at ``path`` when it is whole and records ``key``; else None."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, dict) or data.get("key") != key or "value" not in data:
            return None
        return (decode(data["value"]),)
    except Exception:  # noqa: BLE001 - anything unreadable is recomputed and overwritten
        return None


def _write(path: Path, text: str) -> None:
    global _warned
    try:
        for attempt in range(3):
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                write_atomic(path, text)
                break
            except (FileNotFoundError, FileExistsError):
                # another process's tidy removed the folder meanwhile (mkdir says it exists,
                # then finds no folder there)
                if attempt == 2:
                    return  # not kept this time: the next process computes it again
        cache_eviction.wrote(path.parents[2], len(text))
    except OSError as exc:
        if not _warned:
            _warned = True
            print(f"rnngrade: cannot keep the reference's figures in {path.parent} "
                  f"({exc.strerror or exc}); they are computed for every submission "
                  f"(set {ENV} to another folder, or to nothing to switch this off)",
                  file=sys.stderr)


# ------------------------------------------------------------------------ plain data, exactly

def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data (tuples, arrays and tensors tagged); _Uncacheable otherwise."""
    if depth > 32:
        raise _Uncacheable("nested too deeply")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _Uncacheable("not a finite float")
        return value
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v, depth + 1) for v in value]}
    if kind is dict:
        if not all(type(k) is str and not k.startswith("$") for k in value):
            raise _Uncacheable("a dict key that is not a plain string")
        return {k: encode(v, depth + 1) for k, v in value.items()}
    if kind is np.ndarray:
        return {"$ndarray": _array(value)}
    if isinstance(value, np.generic) and kind.__module__ == "numpy":
        return {"$npscalar": _array(np.asarray(value))}
    torch = sys.modules.get("torch")
    if torch is not None and kind is torch.Tensor:
        dtype = str(value.dtype).removeprefix("torch.")
        if (dtype not in _TORCH_DTYPES or value.device.type != "cpu" or value.requires_grad
                or not value.is_contiguous()):
            raise _Uncacheable("a tensor that is not a plain contiguous CPU tensor")
        data = value.numpy(force=False)
        return {"$tensor": {"dtype": dtype, "shape": list(value.shape),
                            "data": base64.b64encode(data.tobytes()).decode("ascii")}}
    raise _Uncacheable(f"a {kind.__qualname__} is not plain data")


def _array(array: np.ndarray) -> dict:
    if array.dtype.kind not in "biufc" or not array.flags.c_contiguous:
        raise _Uncacheable("an array that is not a contiguous numeric array")
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii")}


def decode(data: Any) -> Any:
    """The value ``encode`` gave ``data`` for; ValueError (or another error) for malformed data."""
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(v) for v in data]
    if kind is not dict:
        raise ValueError(f"unexpected {kind.__qualname__}")
    tags = [t for t in _TAGS if t in data]
    if not tags:
        return {k: decode(v) for k, v in data.items()}
    if len(data) != 1:
        raise ValueError("a tag beside other keys")
    body = data[tags[0]]
    if tags[0] == "$tuple":
        if type(body) is not list:
            raise ValueError("a tuple that is not a list")
        return tuple(decode(v) for v in body)
    if tags[0] == "$tensor":
        import torch

        if body["dtype"] not in _TORCH_DTYPES:
            raise ValueError("unknown tensor dtype")
        array = _unarray({**body, "dtype": np.dtype(body["dtype"]).str})
        return torch.from_numpy(array)
    array = _unarray(body)
    return array if tags[0] == "$ndarray" else array[()]


def _unarray(body: dict) -> np.ndarray:
    dtype = np.dtype(body["dtype"])
    if dtype.kind not in "biufc":
        raise ValueError("not a numeric dtype")
    shape = tuple(int(n) for n in body["shape"])
    raw = base64.b64decode(body["data"], validate=True)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def same(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` exactly: the same types all the way down, floats bit for bit,
    arrays and tensors of the same dtype, shape, strides and bytes."""
    kind = type(a)
    if type(b) is not kind:
        return False
    if a is None or kind in (bool, int, str):
        return bool(a == b)
    if kind is float:
        return repr(a) == repr(b) and float(repr(b)) == a
    if kind in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if kind is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if kind is np.ndarray or isinstance(a, np.generic):
        return (a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
                and a.tobytes() == b.tobytes())
    torch = sys.modules.get("torch")
    if torch is not None and kind is torch.Tensor:
        return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
                and a.device == b.device and a.requires_grad == b.requires_grad
                and a.numpy().tobytes() == b.numpy().tobytes())
    return False

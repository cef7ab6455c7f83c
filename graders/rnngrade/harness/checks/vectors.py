"""Public test vectors: nested inputs and outputs stored in one ``.npz`` per lab.

Nested values (tuples, lists, dicts, arrays, torch tensors, numbers, strings, None) are stored as
a JSON manifest describing the structure plus one array entry per leaf array. No pickle: the file
is loaded with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST = "__manifest__"


def encode_tree(value: Any, key: str, arrays: dict[str, np.ndarray]) -> Any:
    """Describe ``value`` as JSON; its arrays go into ``arrays`` under keys derived from ``key``."""
    if value is None or isinstance(value, bool | str):
        return {"t": "lit", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": value}
    if isinstance(value, float):
        return {"t": "float", "v": repr(value)}
    if isinstance(value, np.ndarray | np.generic):
        arrays[key] = np.asarray(value)
        return {"t": "ndarray", "k": key}
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        arrays[key] = value.detach().cpu().numpy()
        return {"t": "tensor", "k": key, "grad": bool(value.requires_grad)}
    if isinstance(value, tuple | list):
        return {"t": type(value).__name__,
                "v": [encode_tree(v, f"{key}/{i}", arrays) for i, v in enumerate(value)]}
    if isinstance(value, dict):
        return {"t": "dict", "v": {str(k): encode_tree(v, f"{key}/{k}", arrays)
                                   for k, v in value.items()}}
    raise TypeError(f"{key}: cannot store a value of type {type(value).__name__} in test vectors")


def decode_tree(node: Any, arrays: Any) -> Any:
    kind = node["t"]
    if kind == "lit":
        return node["v"]
    if kind == "int":
        return int(node["v"])
    if kind == "float":
        return float(node["v"])
    if kind == "ndarray":
        return np.array(arrays[node["k"]])
    if kind == "tensor":
        import torch

        tensor = torch.from_numpy(np.array(arrays[node["k"]]))
        return tensor.requires_grad_(node["grad"])
    if kind in ("tuple", "list"):
        items = [decode_tree(v, arrays) for v in node["v"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: decode_tree(v, arrays) for k, v in node["v"].items()}
    raise ValueError(f"unknown node type {kind!r} in test vectors")


def dump_vectors(cases: dict[str, dict[str, Any]]) -> bytes:
    """Serialise ``{case: {"function": str, "args": tuple, "outputs": ...}}`` to npz bytes."""
    arrays: dict[str, np.ndarray] = {}
    manifest = {
        name: {
            "function": case["function"],
            "args": encode_tree(tuple(case["args"]), f"{name}/args", arrays),
            "outputs": encode_tree(case["outputs"], f"{name}/outputs", arrays),
        }
        for name, case in cases.items()
    }
    arrays[MANIFEST] = np.frombuffer(json.dumps(manifest, sort_keys=True).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    # Written entry by entry with a fixed timestamp so the same vectors give the same bytes.
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, array in sorted(arrays.items()):
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, entry.getvalue())
    return buffer.getvalue()


@dataclass
class Case:
    name: str
    function: str
    args: tuple
    outputs: Any


class PublicVectors:
    """The public test vectors of one lab."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            raise FileNotFoundError(f"public test vectors not found: {path}")
        with np.load(path, allow_pickle=False) as data:
            self._arrays = {k: data[k] for k in data.files}
        self._manifest = json.loads(self._arrays.pop(MANIFEST).tobytes().decode())

    def names(self) -> list[str]:
        return sorted(self._manifest)

    def case(self, name: str) -> Case:
        """A fresh copy of one case's inputs and expected outputs."""
        entry = self._manifest[name]
        return Case(name, entry["function"], decode_tree(entry["args"], self._arrays),
                    decode_tree(entry["outputs"], self._arrays))

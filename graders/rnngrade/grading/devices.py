"""Which device a grading run uses: ``cpu``, ``cuda`` or ``auto`` (CUDA when it is usable)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from rnngrade.errors import GraderError, UsageError
from rnngrade.harness.checks.devices import cuda_unavailable_reason

DEVICES = ("cpu", "cuda", "auto")


def resolve_device(device: str) -> str:
    """``cpu`` or ``cuda``. UsageError for a name that is not a device; GraderError when CUDA is
    asked for and this machine cannot provide it."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    if device == "cpu":  # nothing to check (and torch need not be imported for it)
        return device
    if device == "auto" and torch_without_gpu_support():
        return "cpu"
    reason = cuda_unavailable_reason()
    if device == "cuda" and reason:
        raise GraderError(f"--device cuda was asked for but {reason}")
    if device == "auto":
        return "cpu" if reason else "cuda"
    return device


def torch_without_gpu_support() -> bool:
    """Whether the installed torch is a build without CUDA and ROCm (so no GPU can be used),
    read from its ``version.py`` without importing torch, which takes a second or more. False
    when that cannot be told: the caller then asks torch itself."""
    spec = importlib.util.find_spec("torch")  # finds the package, imports nothing
    if spec is None or not spec.submodule_search_locations:
        return False
    try:
        tree = ast.parse((Path(next(iter(spec.submodule_search_locations))) / "version.py")
                         .read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            values[node.target.id] = node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return all(isinstance(values.get(name), ast.Constant)
               and values[name].value is None  # type: ignore[attr-defined]
               for name in ("cuda", "hip"))

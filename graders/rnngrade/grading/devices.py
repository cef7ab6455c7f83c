"""Which device a grading run uses: ``cpu``, ``cuda`` or ``auto`` (CUDA when it is usable)."""

from __future__ import annotations

from rnngrade.errors import GraderError, UsageError
from rnngrade.harness.checks.devices import cuda_unavailable_reason

DEVICES = ("cpu", "cuda", "auto")


def resolve_device(device: str) -> str:
    """``cpu`` or ``cuda``. UsageError for a name that is not a device; GraderError when CUDA is
    asked for and this machine cannot provide it."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    reason = cuda_unavailable_reason()
    if device == "cuda" and reason:
        raise GraderError(f"--device cuda was asked for but {reason}")
    if device == "auto":
        return "cpu" if reason else "cuda"
    return device

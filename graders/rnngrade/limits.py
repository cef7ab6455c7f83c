"""Resource limits of one sandboxed worker process, and how a lab or a test writes them."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def default_processes() -> int:
    """RLIMIT_NPROC counts threads too: room for BLAS/torch thread pools, not for a fork bomb."""
    return max(64, 4 * (os.cpu_count() or 1))


@dataclass(frozen=True)
class Limits:
    """What one worker may use. Every limit is enforced by the kernel (setrlimit) or by the
    grader (the clocks of ``cpuclock``), never by code running beside the student's.

    A call's limit is CPU time (``call_seconds``), which a busy machine does not use up; a call
    that uses little CPU (sleeping, blocked) is stopped after ``wall_limit()`` seconds of waiting
    instead, the time the worker waited for a CPU not counted."""

    call_seconds: float = 10.0  # CPU time per call, and for loading the submission
    cpu_seconds: int = 60  # CPU time of the worker process over its life (RLIMIT_CPU)
    memory_bytes: int = 4 << 30  # address space (RLIMIT_AS; RLIMIT_DATA for CUDA workers)
    file_bytes: int = 64 << 20  # largest file the worker may write (RLIMIT_FSIZE)
    open_files: int = 256  # RLIMIT_NOFILE
    processes: int = field(default_factory=default_processes)  # RLIMIT_NPROC, threads included
    output_bytes: int = 8 << 10  # stdout and stderr kept per call and stream
    disk_bytes: int = 128 << 20  # the worker's tmpfs: working dir, /tmp and /dev/shm together
    wall_seconds: float | None = None  # the wall-clock fallback of a call (see wall_limit)

    def __post_init__(self) -> None:
        for name in FIELDS:
            value = getattr(self, name)
            if not (value is None and name == "wall_seconds") and not value > 0:
                raise ValueError(f"Limits.{name} must be positive")

    def wall_limit(self, cpu_seconds: float | None = None) -> float:
        """Seconds a call given ``cpu_seconds`` of CPU time (default ``call_seconds``) may wait
        for its reply: ``wall_seconds`` for a call of ``call_seconds``, in proportion for
        another; by default twice its CPU time and 10 s more, a generous fallback that only code
        which sleeps or blocks reaches."""
        cpu = self.call_seconds if cpu_seconds is None else cpu_seconds
        if self.wall_seconds is not None:
            return self.wall_seconds * cpu / self.call_seconds
        return WALL_FACTOR * cpu + WALL_GRACE

    def as_wire(self) -> dict:
        """The limits the worker applies to itself, as plain data."""
        return {"cpu_seconds": int(self.cpu_seconds), "memory_bytes": int(self.memory_bytes),
                "file_bytes": int(self.file_bytes), "open_files": int(self.open_files),
                "processes": int(self.processes), "disk_bytes": int(self.disk_bytes)}

    def overridden(self, values: Mapping[str, Any], where: str) -> Limits:
        """These limits with ``values`` (field name → number, or a size such as ``"512 MiB"``
        for the ``*_bytes`` fields) in place; ``where`` names the source in the ValueError
        raised for an unknown field or a bad value."""
        changes: dict[str, Any] = {}
        for name, value in values.items():
            if name not in FIELDS:
                raise ValueError(f"{where}: unknown limit {name!r}; the limits are "
                                 + ", ".join(FIELDS))
            changes[name] = _parse(name, value, where)
        return dataclasses.replace(self, **changes)


WALL_FACTOR = 2.0
WALL_GRACE = 10.0
FIELDS = tuple(f.name for f in dataclasses.fields(Limits))
_UNITS = {"": 1, "b": 1, "bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def _parse(name: str, value: Any, where: str) -> float | int:
    """One limit's value: seconds as a number, sizes as a number of bytes or ``"4 GiB"``."""
    if name.endswith("_bytes") and isinstance(value, str):
        match = _SIZE.match(value)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _UNITS:
            raise ValueError(f"{where}: {name} must be a number of bytes or a size such as "
                             f"'512 MiB' or '4 GiB', not {value!r}")
        value = float(match.group(1)) * _UNITS[unit]
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{where}: {name} must be a positive number, not {value!r}")
    return float(value) if name.endswith("_seconds") and name != "cpu_seconds" else int(value)


def describe_bytes(n: int) -> str:
    """``4 GiB``, ``64 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def describe_seconds(s: float) -> str:
    """``10 s``, ``0.5 s``."""
    return f"{s:g} s"

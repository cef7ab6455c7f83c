"""One thread for every thread pool of this process: what the course's figures were measured
with, and what makes a training run give the same figures on every machine."""

from __future__ import annotations

import ctypes
import os
import sys

_BLAS_THREAD_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
                        "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
                        "MKL_Set_Num_Threads")


def pin_threads() -> dict[str, bool]:
    """One thread for every pool this process may use: ``OMP_NUM_THREADS=1`` for pools that
    start later, torch's intra-op pool, and the BLAS library NumPy loaded (found in
    ``/proc/self/maps``, set through its own ``*_set_num_threads``). Returns what was pinned."""
    os.environ["OMP_NUM_THREADS"] = "1"
    pinned = {"torch": False, "blas": False}
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
        pinned["torch"] = torch.get_num_threads() == 1
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps
                     if "blas" in line.lower() or "libmkl_rt" in line}
    except OSError:
        paths = set()
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _BLAS_THREAD_SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(1)
                pinned["blas"] = True
    return pinned

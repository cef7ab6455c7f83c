"""The grader's side of a lab's own worker helpers (``graders/suites/labN/helpers.py``).

The file is read here, on the trusted side, and run once to check it (a broken one is the
grader's fault: ``SuiteError``). Its source then travels to the sandboxed worker with the
submission and runs there beside the generic helpers (``rnngrade.worker_helpers``); the suite
folder is never made visible to the worker. In-process runners (reference, mutants,
``--inprocess``) use the registry built here.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SuiteError
from rnngrade.labs import Lab, get_lab
from rnngrade.worker_helpers import GENERIC, Registry, with_lab_helpers

HELPERS_FILE = "helpers.py"


@dataclass(frozen=True)
class LabHelpers:
    """A lab's helper source (``""``: the lab has none) and every helper it may call."""

    source: str
    filename: str
    registry: Registry = field(default_factory=lambda: GENERIC, compare=False)


_BUILT: dict[tuple[str, str], LabHelpers] = {}  # (file, sha256 of its text): content-addressed
_LOCK = threading.Lock()


def lab_helpers(lab: Lab | str) -> LabHelpers:
    """The helpers of ``lab`` as its ``helpers.py`` reads now (none: the generic ones only)."""
    lab = get_lab(lab) if isinstance(lab, str) else lab
    path = lab.suite_dir() / HELPERS_FILE
    if not path.is_file():
        return LabHelpers("", "")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read it ({exc})") from None
    return helpers_from_source(lab, path, source)


def helpers_from_source(lab: Lab, path: Path, source: str) -> LabHelpers:
    """The helpers of ``lab`` whose ``helpers.py`` (at ``path``) reads ``source``."""
    key = (str(path), hashlib.sha256(source.encode()).hexdigest())
    with _LOCK:
        if key not in _BUILT:
            try:
                registry = with_lab_helpers(source, f"<{lab.name} helpers>")
            except Exception as exc:
                raise SuiteError(f"{path}: the lab's helpers do not load: "
                                 f"{type(exc).__name__}: {exc}") from exc
            _BUILT[key] = LabHelpers(source, f"<{lab.name} helpers>", registry)
        return _BUILT[key]

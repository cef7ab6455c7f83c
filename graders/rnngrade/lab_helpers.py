"""The grader's side of a lab's own worker helpers (``graders/suites/labN/helpers.py``).

The file is read here, on the trusted side, and run once to check it (a broken one is the
grader's fault: ``SuiteError``). Its source then travels to the sandboxed worker with the
submission and runs there beside the generic helpers (``rnngrade.harness.worker_helpers``);
the suite folder is never made visible to the worker. In-process runners (reference, mutants,
``--inprocess``) use the registry built here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SuiteError
from rnngrade.harness.worker_helpers import GENERIC, Registry, with_lab_helpers
from rnngrade.labs import Lab, get_lab

HELPERS_FILE = "helpers.py"


@dataclass(frozen=True)
class LabHelpers:
    """A lab's helper source (``""``: the lab has none) and every helper it may call."""

    source: str
    filename: str
    registry: Registry = field(default_factory=lambda: GENERIC, compare=False)


def lab_helpers(lab: Lab | str) -> LabHelpers:
    """The helpers of ``lab`` as its ``helpers.py`` reads now (none: the generic ones only).

    Built afresh on every call: the grader keeps the built helpers in the lab's assets
    (``LabAssets.helpers``), keyed with everything else by the course files' digest."""
    lab = get_lab(lab) if isinstance(lab, str) else lab
    path = lab.suite_dir() / HELPERS_FILE
    if not path.is_file():
        return LabHelpers("", "")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read it ({exc})") from None
    return build_lab_helpers(lab.name, source, path)


def build_lab_helpers(lab_name: str, source: str | None, path: Path) -> LabHelpers:
    """``LabHelpers`` from the text of ``path`` (None: the lab has no helpers file)."""
    if source is None:
        return LabHelpers("", "")
    filename = f"<{lab_name} helpers>"
    try:
        registry = with_lab_helpers(source, filename)
    except Exception as exc:
        raise SuiteError(f"{path}: the lab's helpers do not load: "
                         f"{type(exc).__name__}: {exc}") from exc
    return LabHelpers(source, filename, registry)

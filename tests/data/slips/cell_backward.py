"""Formula slips inside a cell's backward pass (``cell_backward.yaml``), each one edit of the
course's reference.

``old`` → ``new`` is the slip in the reference's source; ``named`` is the sentence the grader's
edit diagnosis gives it (``rnngrade.diagnosis.edits``), or, for a slip a known mistake describes
(``known``), that mistake's name; the public tests must give the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Slip:
    name: str
    lab: str
    function: str
    old: str
    new: str
    named: str
    known: bool = False


SLIPS = [Slip(**entry) for entry in
         yaml.safe_load(Path(__file__).with_suffix(".yaml").read_text(encoding="utf-8"))]

"""Real students' mistakes (``variants.yaml``), each reproduced as our own edit of the course's
reference.

``seen`` says what the public code did; ``edits`` turn the reference into the variant (each
``old`` → ``new`` once); ``verdicts`` gives each wrong function and the name of its mistake
(every other function of the variant is correct); ``accepted`` lists further diagnosis names
that describe the same mistake correctly (a structural pattern, a second known mistake that the
combination contains).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Variant:
    name: str
    lab: str
    seen: str
    edits: tuple[tuple[str, str], ...]
    verdicts: dict[str, str]
    accepted: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _variant(entry: dict) -> Variant:
    return Variant(entry["name"], entry["lab"], entry["seen"],
                   tuple((edit["old"], edit["new"]) for edit in entry["edits"]),
                   entry["verdicts"],
                   {f: tuple(names) for f, names in entry.get("accepted", {}).items()})


VARIANTS = [_variant(entry) for entry in
            yaml.safe_load(Path(__file__).with_suffix(".yaml").read_text(encoding="utf-8"))]

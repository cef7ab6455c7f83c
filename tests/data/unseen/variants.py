"""One-bug variants no mutant, edit-corpus entry, corpus variant or cell slip describes
(``variants.yaml``), each our own edit of the course's reference.

``kind`` is the issue's kind of mistake (1 formula, 2 contract, 3 aliasing and in-place writes,
4 sequence, 5 torch's leaf error); ``function`` the one wrong function; ``edits`` turn the
reference into the variant (each ``old`` → ``new`` once); ``named`` the phrases a headline that
names this mistake holds (any one of them, in a diagnosis's text or name; for kind 5, in the
failure's message); ``unnamed`` why the grader names it by no headline yet (an empty string:
it does name it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Unseen:
    name: str
    lab: str
    kind: int
    function: str
    seen: str
    edits: tuple[tuple[str, str], ...]
    named: tuple[str, ...]
    unnamed: str = ""


def _unseen(entry: dict) -> Unseen:
    return Unseen(entry["name"], entry["lab"], int(entry["kind"]), entry["function"],
                  entry["seen"], tuple((e["old"], e["new"]) for e in entry["edits"]),
                  tuple(entry["named"]), entry.get("unnamed", ""))


UNSEEN = [_unseen(entry) for entry in
          yaml.safe_load(Path(__file__).with_suffix(".yaml").read_text(encoding="utf-8"))]

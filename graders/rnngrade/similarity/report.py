"""The similarity report: ``index.html`` (ranked pairs, each student's share matching the
reference) and one side-by-side page per listed pair, the matching code highlighted.

Student code is hostile: every character of it goes through ``html.escape``, control and
direction-changing characters are shown as U+FFFD (they could make code read differently from
what runs), and the pages carry no script.
"""

from __future__ import annotations

import html
import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from rnngrade.files import write_atomic
from rnngrade.results.render import render
from rnngrade.results.sanitize import clean_name, clean_text
from rnngrade.similarity import DEFAULT_THRESHOLD, DEFAULT_TOP
from rnngrade.similarity.detect import Comparison, Pair


@dataclass
class PairView:
    rank: int
    a: str
    b: str
    similarity_a: float
    similarity_b: float
    tokens: int
    page: str
    code_a: Markup
    code_b: Markup


def shown_code(text: str) -> str:
    """``text`` escaped for HTML, with control and bidirectional-format characters replaced."""
    cleaned = "".join(ch if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf")
                      else "\ufffd" for ch in text)
    return html.escape(cleaned)


def highlighted(text: str, ranges: list[tuple[int, int]]) -> Markup:
    """``text`` as escaped HTML with ``ranges`` (character offsets) in ``<mark>``."""
    parts, at = [], 0
    for start, end in sorted(ranges):
        start, end = max(start, at), min(end, len(text))
        if end <= start:
            continue
        parts.append(shown_code(text[at:start]))
        parts.append("<mark>" + shown_code(text[start:end]) + "</mark>")
        at = end
    parts.append(shown_code(text[at:]))
    return Markup("".join(parts))


def write_report(done: Comparison, out: Path, threshold: float = DEFAULT_THRESHOLD,
                 top: int = DEFAULT_TOP) -> Path:
    """Write the report into ``out``; the path of its ``index.html``."""
    listed = [p for p in done.pairs if p.score >= threshold][:top]
    views = [_view(i + 1, pair) for i, pair in enumerate(listed)]
    for view in views:
        write_atomic(out / view.page, render("similarity_pair.html.j2", lab=done.lab, p=view))
    rows = [{"student": clean_name(s.student), "origin": clean_name(s.origin),
             "reference": done.reference.get(s.student, 0.0)} for s in done.sources]
    index = render("similarity.html.j2", lab=done.lab, pairs=views, threshold=threshold,
                   compared=len(done.sources), total_pairs=len(done.pairs),
                   over=sum(1 for p in done.pairs if p.score >= threshold), rows=rows,
                   skipped={clean_name(k): v for k, v in done.skipped.items()},
                   notes=[clean_text(note, 300) for note in done.notes])
    data = {"lab": done.lab, "threshold": threshold,
            "pairs": [{"a": p.a.student, "b": p.b.student, "similarity_a": p.similarity_a,
                       "similarity_b": p.similarity_b, "tokens": p.tokens}
                      for p in done.pairs if p.score >= threshold],
            "reference": done.reference, "not_compared": done.skipped,
            "pairs_not_compared": [list(pair) for pair in done.not_compared],
            "notes": done.notes}
    write_atomic(out / "similarity.json", json.dumps(data, indent=1, ensure_ascii=True) + "\n")
    return write_atomic(out / "index.html", index)


def _view(rank: int, pair: Pair) -> PairView:
    return PairView(rank, clean_name(pair.a.student), clean_name(pair.b.student),
                    pair.similarity_a, pair.similarity_b, pair.tokens, f"pair-{rank:03d}.html",
                    highlighted(pair.a.text, pair.slices_a),
                    highlighted(pair.b.text, pair.slices_b))

"""Hostile output attacks (fixtures/submissions/hostile/output/) and what every report must be.

``check_reports`` is the one definition of a valid, inert, bounded set of reports: JSON that
parses and fits the schema, junit.xml that parses, feedback.html whose elements are all the
template's own, feedback.md whose headings, table rows, links, images and HTML are all the
template's own, and every file under ``REPORT_BOUND`` bytes.
"""

from __future__ import annotations

import csv
import io
import json
import re
import runpy
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from rnngrade.results.render import load_schema

from ..conftest import SUBMISSIONS

HOSTILE = SUBMISSIONS / "hostile" / "output"
ODD = runpy.run_path(str(HOSTILE / "odd_entries.py"))
STATIC = sorted(p.name for p in HOSTILE.iterdir() if p.is_dir() and not p.name.startswith("_"))

# The bound on every report file. The grader keeps at most REPORT_LIMIT (64,000) characters of
# free text per result; a character takes at most 6 bytes once escaped (JSON's \uXXXX, HTML's
# &quot;) and a text appears at most twice in one report, so 768 KB plus the template's own.
REPORT_BOUND = 1024 * 1024
SOFTMAX_POINTS = 5.0  # lab1's softmax tests: what every attack entry earns honestly
# lab1's rnn_forward tests: each static entry's honest loop over its attacked cell earns them,
# graded with a correct cell in place of the one that raises (rnngrade/grading/stand_ins.py)
RNN_FORWARD_POINTS = 7.0
LAB1_POINTS = 24.0

# entry name → the score the attack entry must get (never more) and whether it loads
EXPECTED: dict[str, tuple[float, str]] = {
    **{name: (SOFTMAX_POINTS + RNN_FORWARD_POINTS, "graded") for name in STATIC},
    **{name: (SOFTMAX_POINTS if kind == "graded" else 0.0, kind)
       for name, kind in ODD["EXPECTED"].items()},
}

# The template's own elements; a student's text must never add one.
HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "div", "small",
             "span", "h1", "strong", "ul", "li", "table", "colgroup", "col", "thead", "tr", "th",
             "tbody", "td", "pre", "h2", "details", "summary", "section", "code"}
MD_HTML = re.compile(r"^(?:<details( open)?>|</details>|<summary>|</summary>|<b>|</b>|<br>|<sub>|"
                     r"</sub>|<!-- rnngrade:feedback -->)$")


@pytest.fixture(scope="session")
def attack_entries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every attack as the entry it arrives as: entry name → path (a folder or a file)."""
    folder = tmp_path_factory.mktemp("attacks")
    entries = {name: shutil.copytree(HOSTILE / name, folder / name) for name in STATIC}
    entries.update(ODD["write_entries"](folder))
    return entries


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on") or name == "href"
                          or name == "src"]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def html_elements(text: str) -> _Elements:
    parser = _Elements()
    parser.feed(text)
    parser.close()
    return parser


def check_html(text: str, allowed: set[str] = HTML_TAGS) -> str:
    """Assert ``text`` holds only ``allowed`` elements, no handler, link or source; its text."""
    parsed = html_elements(text)
    assert set(parsed.tags) <= allowed, set(parsed.tags) - allowed
    assert not parsed.handlers
    return "".join(parsed.text)


def check_markdown(text: str, headings: list[str] | None = None) -> list:
    """Assert ``text`` renders with no image, link, HTML or heading of the student's; returns the
    block tokens. ``headings``: the exact headings expected (None: do not compare)."""
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    tokens = md.parse(text)
    found = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            found.append(tokens[i + 1].content)
        if token.type == "html_block":
            for line in token.content.splitlines():
                for tag in re.findall(r"<[^>]*>", line):
                    assert MD_HTML.match(tag), tag
        for child in token.children or []:
            assert child.type not in ("image", "link_open"), child
            if child.type == "html_inline":
                assert MD_HTML.match(child.content), child.content
    if headings is not None:
        assert found == headings
    # GitHub also links bare URLs outside code: none may remain unescaped
    outside_code = "".join(t.content for t in tokens if t.type not in ("fence", "code_block"))
    assert not re.search(r"(?i)https?://|www\.", outside_code)
    return tokens


def table_rows(tokens: list) -> list[str]:
    """The text of each body row of the first table."""
    rows, row, inside = [], [], False
    for token in tokens:
        if token.type == "tbody_open":
            inside = True
        elif token.type == "tbody_close":
            break
        elif inside and token.type == "tr_close":
            rows.append(" | ".join(row))
            row = []
        elif inside and token.type == "inline":
            row.append(token.content)
    return rows


def check_reports(folder: Path, score: float) -> dict:
    """Every report in ``folder`` valid, inert and bounded, at ``score``; results.json's data."""
    for name in ("results.json", "feedback.html", "feedback.md", "junit.xml"):
        size = (folder / name).stat().st_size
        assert size <= REPORT_BOUND, (name, size)
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, load_schema())
    assert data["score"] == score
    ET.parse(folder / "junit.xml")
    check_html((folder / "feedback.html").read_text(encoding="utf-8"))
    markdown = (folder / "feedback.md").read_text(encoding="utf-8")
    title = f"{data['lab']} — RNN forward, step by step: {score:g} / {data['max_score']:g}"
    failing = [t for t in data["tests"] if t["outcome"] != "passed"]
    tokens = check_markdown(markdown, [title] + (["What to fix"] if failing else []))
    rows = table_rows(tokens)
    assert len(rows) == len(data["tests"])
    passed = sum(1 for t in data["tests"] if t["outcome"] == "passed")
    assert sum(row.startswith("✅") for row in rows) == passed
    return data


def csv_cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def check_csv(text: str) -> list[list[str]]:
    """No cell of ``text`` starts a spreadsheet formula; the rows."""
    rows = csv_cells(text)
    for row in rows:
        for cell in row:
            assert not cell.lstrip().startswith(("=", "+", "-", "@")), cell
            assert not cell.startswith(("\t", "\r")), cell
    return rows

"""Escaping cleaned text for each format a report is written in.

Every function takes any text (it is cleaned first: see ``sanitize.clean_text``) and returns
text that the format shows literally: nothing a student wrote becomes markup, a formula, a
terminal control or a workflow command. HTML and XML need no function here: their templates are
autoescaped by Jinja2, and cleaned text holds no character XML 1.0 forbids.
"""

from __future__ import annotations

import re

from rnngrade.results.sanitize import FIELD_LIMIT, clean_text

# What makes inline Markdown live, each escaped with a backslash (CommonMark shows any escaped
# ASCII punctuation literally, and GitHub and GitLab follow it) only where it could act, so that
# ordinary text stays readable, raw or rendered. No HTML entities: inside a code span or fence
# they would show as typed ("&lt;"), and raw text is read too.
_MD_ALWAYS = r"\\`*\[\]|~@$!#"  # code, emphasis, links and images, tables, strikethrough,
#                                   mentions and e-mail autolinks, math, headings, issue links
_MD_LIVE = re.compile(
    rf"[{_MD_ALWAYS}]"
    r"|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"  # "_" opens emphasis only at a word's edge
    r"|:(?=\S)"  # "https://", "mailto:x", ":emoji:" (a colon before a space is plain)
    r"|(?<=www)\.|(?<=WWW)\."  # "www.example.org" autolinks
    r"|<(?=[A-Za-z/!?])"  # an HTML tag, comment or declaration, an autolink ("a < b" is plain)
    r"|&(?=[A-Za-z#])"  # an entity or character reference ("&lt;", "&#60;"; "a & b" is plain)
    r"|^[-+=>]"  # a list, a setext underline or a block quote at the start of the text
)
_ORDERED_LIST = re.compile(r"^(\d+)([.)])")  # "1." or "1)" at the start: an ordered list
_BACKTICKS = re.compile(r"`+")
CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_inline(value: object, limit: int = FIELD_LIMIT) -> str:
    """Text for a Markdown paragraph, list item or table cell: no emphasis, link, image, heading,
    HTML, autolink, mention or table column comes of it; a line break is ``<br>``."""
    text = clean_text(value, limit).replace("\t", " ").strip()
    text = _MD_LIVE.sub(lambda m: "\\" + m.group(0), text)
    text = _ORDERED_LIST.sub(r"\1\\\2", text)
    return text.replace("\n", "<br>")


def md_code(value: object, limit: int = 2 * FIELD_LIMIT) -> str:
    """A fenced code block holding ``value`` literally: the fence is longer than any run of
    backticks in the text, so nothing inside can close it."""
    text = clean_text(value, limit)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def csv_cell(value: object, limit: int = FIELD_LIMIT) -> str:
    """A CSV cell a spreadsheet reads as text: a cell that would start a formula (``= + - @``,
    or a tab or carriage return before one) is prefixed with an apostrophe."""
    text = clean_text(value, limit)
    formula = text.startswith(CSV_FORMULA_START) or text.lstrip().startswith(CSV_FORMULA_START)
    return "'" + text if formula else text


def terminal_text(value: object, limit: int = FIELD_LIMIT) -> str:
    """Text for a terminal: escape sequences and control characters removed (rich markup is
    escaped by handing rich a ``Text``, never a markup string: see ``gradebook.console``)."""
    return clean_text(value, limit)


def log_line(value: object, limit: int = FIELD_LIMIT) -> str:
    """Text for one line of a CI log: cleaned, on one line (a workflow command such as
    ``::error`` is only read at the start of a line; ``ci.github.commands_stopped`` also turns
    them off around the whole run)."""
    return clean_text(value, limit).replace("\n", " ⏎ ").replace("\t", " ")

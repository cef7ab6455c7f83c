"""One string made safe to store and to hand to any renderer.

``clean_text`` gives:

- valid Unicode that encodes as UTF-8: lone surrogates (``"\\ud800"``, or the ``"\\udcff"``
  Python uses for an undecodable byte) become U+FFFD, and bytes are decoded with replacement;
- terminal escape sequences (CSI, OSC) removed whole, then every other control character except
  newline and tab, the characters XML 1.0 forbids (U+FFFE, U+FFFF) and the bidirectional
  overrides that make text display in another order than it is read;
- ``\\r\\n`` and a lone ``\\r`` read as a newline;
- at most ``limit`` characters, a cut marked with ``TRUNCATED`` (the marker counts in the limit,
  so cleaning twice changes nothing).

``clean_name`` is the same on one line. Escaping for a format is the renderers' job.
"""

from __future__ import annotations

import re

FIELD_LIMIT = 4_000  # characters of one message, note or error
NAME_LIMIT = 200  # characters of a name: a file, a student id, a test, a lab
TRUNCATED = " […truncated]"

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # any other two-character escape
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
)
_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls but tab and newline, DEL, C1 controls, bidirectional overrides and isolates,
# the two non-characters XML 1.0 forbids.
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
_ANY_SUSPECT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff]")


def clean_text(value: object, limit: int = FIELD_LIMIT) -> str:
    """``value`` as safe, bounded text (see the module docstring); ``None`` gives ``""``."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    elif isinstance(value, str):
        text = value
    else:
        text = str(value)
    if len(text) > 4 * limit + 64:  # cut early: the rules below never lengthen the text
        text = text[: 4 * limit + 64]
    if _ANY_SUSPECT.search(text) is None:  # the usual case: nothing to replace or remove
        return truncate(text, limit)
    text = _SURROGATE.sub("\ufffd", text)
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _FORBIDDEN.sub("", text)
    return truncate(text, limit)


def clean_name(value: object, limit: int = NAME_LIMIT) -> str:
    """A name on one line: ``clean_text`` with newlines and tabs as spaces."""
    return clean_text(value, limit).replace("\n", " ").replace("\t", " ")


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked."""
    if len(text) <= limit:
        return text
    if limit <= len(TRUNCATED):
        return text[:limit]
    return text[: limit - len(TRUNCATED)] + TRUNCATED

"""The notes a worker sends after loading a submission, split into the grader's and the student's.

The worker writes its loading notes (a name that came from a course platform's helper module, a
top-level statement that raised) after student code ran, so the trusted side cannot take their
text on trust. A note whose facts parse (identifiers, a known helper module, line numbers, an
exception's type) is written anew by the grader from those facts alone and shown as the
grader's; what the student's code itself produced (an exception's message) and anything that
does not parse stays quoted as the student's own output.
"""

from __future__ import annotations

import builtins
import re

from rnngrade.harness.source.module_builder import failure_note, platform_note

_NAME = r"[A-Za-z_]\w{0,63}"
_PLATFORM_NOTE = re.compile(
    rf"^((?:`{_NAME}`)(?: and `{_NAME}`)*) comes? from `(rnn_utils|utils)` ")
_FAILURE = re.compile(r"^line (\d{1,7}): top-level code (?:raised (.*); skipped \(functions are "
                      r"still graded\)|uses something that still looks unfinished \((.*)\); "
                      r"skipped \(functions are still graded\))$", re.DOTALL)
_TYPE = re.compile(r"^[A-Za-z_][\w.]{0,99}$")
# exception types the grader names in its own words: Python's; a class of the student's own (any
# name it likes) is "an exception"
_PYTHONS = frozenset(name for name, value in vars(builtins).items()
                     if isinstance(value, type) and issubclass(value, BaseException))
_MORE = re.compile(r"^\d{1,7} more top-level statement\(s\) raised as well \(lines \d{1,7}"
                   r"(?:, \d{1,7})*(?:, \.\.\.)?\); skipped \(demo code does not affect the "
                   r"grade\)$")


def split_worker_notes(notes: list[str]) -> tuple[list[str], list[str]]:
    """``(grader's notes, the student's output)`` of a worker's loading notes."""
    grader: list[str] = []
    student: list[str] = []
    for note in notes:
        ours, theirs = _split(note)
        if ours:
            grader.append(ours)
        if theirs:
            student.append(theirs)
    return grader, student


def _split(note: str) -> tuple[str, str]:
    platform = _PLATFORM_NOTE.match(note)
    if platform:
        names = re.findall(r"`[^`]+`", platform.group(1))
        rendered = platform_note(platform.group(2), names)
        return (rendered, "") if rendered == note else ("", note)
    if _MORE.match(note):
        return note, ""
    failure = _FAILURE.match(note)
    if failure:
        line, kind = int(failure.group(1)), failure.group(2) or failure.group(3) or ""
        exception = kind.split(":", 1)[0].strip()
        if _TYPE.match(exception):
            ours = failure_note(line, exception if exception in _PYTHONS else "an exception",
                                unfinished=failure.group(3) is not None)
            return ours, "" if kind.strip() == exception else f"line {line}: {kind}"
    return "", note

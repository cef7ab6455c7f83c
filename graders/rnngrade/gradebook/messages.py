"""The messages between a batch's coordinator and its grading processes (local or Dask): one
small frozen type per kind, and the one decoder the coordinator reads them through.

    coordinator -> grading process           grading process -> coordinator
    (key, Payload.to_wire())  a task         Ready(pid)               once, when its grader is built
    None                      stop           Fatal(message, worker)   its grader cannot grade
                                             Done(key, outcome)       answers a task

An outcome says what became of one submission: ``Graded`` (whatever its score), ``NotGraded``
(the grader could not finish it: ``status`` error or timeout, or load_error for an entry that
could not be read), ``GraderFault`` (trusted code failed on it: recorded as a grader error) or
``Fatal`` (the grader itself is broken, a bad suite or another grader version: the batch stops).
Both sides run the grader's own code, so the messages travel pickled; ``decode`` still checks
that each is one of these before the coordinator acts on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rnngrade.errors import GraderError
from rnngrade.results.model import EntryStatus


@dataclass(frozen=True)
class Graded:
    """The submission was graded: its ``GradeResult.to_dict()``."""

    result: dict[str, Any]
    worker: str = ""
    grader_version: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class NotGraded:
    """The grader could not finish the submission, and why (told to the student)."""

    status: EntryStatus  # ERROR, TIMEOUT or LOAD_ERROR
    error: str
    worker: str = ""


@dataclass(frozen=True)
class GraderFault:
    """Trusted code failed on this submission: ``detail`` is for the instructor."""

    detail: str
    worker: str = ""


@dataclass(frozen=True)
class Fatal:
    """The grader cannot grade anything."""

    message: str
    worker: str = ""


@dataclass(frozen=True)
class Ready:
    pid: int


@dataclass(frozen=True)
class Done:
    key: str
    outcome: Outcome


Outcome = Graded | NotGraded | GraderFault | Fatal
Message = Ready | Fatal | Done


class GraderBroken(GraderError):
    """The grader cannot grade anything: a ``Fatal`` message, or one that is no message."""


def decode(message: object) -> Message:
    """``message`` as received from a grading process, checked to be one of the messages."""
    if isinstance(message, Ready | Fatal):
        return message
    if isinstance(message, Done) and isinstance(message.outcome, Graded | NotGraded
                                                             | GraderFault | Fatal):
        return message
    raise GraderBroken(f"a grading process sent {type(message).__name__}, not a message")


def decode_outcome(outcome: object) -> Outcome:
    """``outcome`` as returned by a grading task (Dask), checked to be one of the outcomes."""
    if isinstance(outcome, Graded | NotGraded | GraderFault | Fatal):
        return outcome
    raise GraderBroken(f"a grading task returned {type(outcome).__name__}, not an outcome")

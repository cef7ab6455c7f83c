"""Releasing on schedule: which labs are due out, and which shipped code would answer a lab
that students are still working on.

Later labs ship earlier labs' functions working (lab2's ``bptt.py`` has ``softmax``,
``rnn_cell_forward`` and ``rnn_forward``, lab1's graded functions), so releasing lab2 before
lab1's due date hands lab1's answers out. A lab's shipped Python files are read (never run) and
every top-level function with a real body is matched against the graded functions of every other
lab whose due date has not passed.
"""

from __future__ import annotations

import ast
import datetime as dt
from dataclasses import dataclass

from rnngrade.course.config import Course
from rnngrade.course.times import show_time
from rnngrade.labs import Lab


@dataclass(frozen=True)
class AnswerLeak:
    """``file`` (shipped with ``lab``) answers ``functions`` of ``answers``, still open."""

    lab: str
    file: str
    answers: str
    functions: tuple[str, ...]
    due: dt.datetime | None
    zone: dt.tzinfo = dt.timezone.utc  # the course's, which the due date is shown in

    def reason(self) -> str:
        when = (f"due {show_time(self.due, self.zone)}"
                if self.due else "with no due date in the course file")
        return (f"{self.lab}'s {self.file} ships working {', '.join(self.functions)}, graded "
                f"in {self.answers} ({when})")


def due_out(course: Course, labs: list[Lab], now: dt.datetime) -> tuple[list[Lab], list[str]]:
    """The labs whose release date has come, and why each other lab is held back."""
    ready, held = [], []
    for lab in labs:
        early = not_yet(course, lab, now)
        if course.plan(lab.name).release is None:
            held.append(f"{lab.name}: no release date in {course.path.name} "
                        "(release it by name with --lab)")
        elif early:
            held.append(early)
        else:
            ready.append(lab)
    return ready, held


def not_yet(course: Course, lab: Lab, now: dt.datetime) -> str | None:
    """Why ``lab`` may not go out at ``now`` (its release date is still to come), or None."""
    release = course.plan(lab.name).release
    if release is None or release <= now:
        return None
    return f"{lab.name}: to be released on {show_time(release, course.zone)}"


def implemented_functions(source: str) -> set[str]:
    """Top-level functions of ``source`` whose body does more than a stub (docstring, ``pass``,
    ``...`` or ``raise NotImplementedError``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _stub(node)}


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return True
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def answer_leaks(course: Course, releasing: list[Lab], every_lab: list[Lab],
                 files: dict[str, bytes], now: dt.datetime) -> list[AnswerLeak]:
    """What the shipped ``files`` (release path → bytes) of ``releasing`` give away of labs
    whose due date has not passed (or that have none)."""
    open_labs = []
    for other in every_lab:
        due = course.plan(other.name).due
        if due is None or due > now:
            open_labs.append((other, due))
    leaks = []
    for lab in releasing:
        prefix = f"assignments/{lab.name}/"
        for path, content in sorted(files.items()):
            if not (path.startswith(prefix) and path.endswith(".py")):
                continue
            shipped = implemented_functions(content.decode("utf-8", "replace"))
            for other, due in open_labs:
                if other.name == lab.name:
                    continue
                found = tuple(f for f in other.functions if f in shipped)
                if found:
                    leaks.append(AnswerLeak(lab.name, path, other.name, found, due,
                                            course.zone))
    return leaks

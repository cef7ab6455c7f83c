"""``rnngrade gradescope-run``: grade the submission Gradescope placed under the autograder root.

The root is ``$AUTOGRADER_ROOT`` (default ``/autograder``): the submission is read from
``ROOT/submission`` and Gradescope's results are written to ``ROOT/results/results.json``. The
student's code runs in the sandbox (or, for a bundle built with ``--inprocess``, in this process,
unprotected); which protections were in force is printed (Gradescope shows what this command
prints to instructors only), stated in one line of the results' output and kept in their
``extra_data``.

A submission that cannot be loaded is graded as such (results written, exit 0: the student reads
why). A failure of the grader itself writes no ``results.json``, so Gradescope reports the
autograder as failed instead of scoring the student; the details are printed, and the command
exits 4.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rnngrade.errors import ExitCode, GraderError, UsageError, error_line
from rnngrade.files import write_atomic
from rnngrade.results.model import GradeResult, Status

DEFAULT_ROOT = "/autograder"


def autograder_root(environ: dict[str, str] | None = None) -> Path:
    """``$AUTOGRADER_ROOT``, or Gradescope's ``/autograder``."""
    env = os.environ if environ is None else environ
    return Path(env.get("AUTOGRADER_ROOT") or DEFAULT_ROOT)


@dataclass
class AutograderRun:
    exit_code: int
    result: GradeResult | None = None
    results_json: Path | None = None


def protection_lines(result: GradeResult, inprocess: bool) -> list[str]:
    """For the instructor: every protection and whether it was in force."""
    if inprocess:
        return ["isolation: none (--inprocess): the student's code ran in the grader's process"]
    if not result.protections:
        return ["isolation: sandbox (no student code ran, so no protection was measured)"]
    lines = ["isolation: sandbox; protections measured inside the worker:"]
    lines += [f"  [{'x' if on else ' '}] {name}" for name, on in sorted(result.protections.items())]
    return lines


def protection_note(result: GradeResult, inprocess: bool) -> str:
    """One line for the results' output: how the student's code was isolated."""
    if inprocess:
        return "Your code ran in the grader's own process (no sandbox)."
    if not result.protections:
        return ""
    on = [name for name, active in result.protections.items() if active]
    off = sorted(name for name, active in result.protections.items() if not active)
    line = (f"Your code ran in rnngrade's sandbox: {len(on)} of {len(result.protections)} "
            "protections in force")
    return line + (f" (not available here: {', '.join(off)})." if off else ".")


def run_autograder(root: Path, lab: str, *, device: str = "auto", inprocess: bool = False,
                   budget: float | None = None,
                   say: Callable[[str], None] = print) -> AutograderRun:
    """Grade ``root/submission`` into ``root/results/results.json`` (see the module docstring)."""
    from rnngrade.grading.engine import grade
    from rnngrade.results.render import render_results_json
    from rnngrade.results.sanitize import clean_result

    submission = root / "submission"
    results = root / "results"
    if not submission.is_dir():
        raise UsageError(f"{submission} is not a folder: Gradescope places the submission there "
                         "(set AUTOGRADER_ROOT to grade a folder laid out the same way)")
    results.mkdir(parents=True, exist_ok=True)
    target = results / "results.json"
    target.unlink(missing_ok=True)  # never leave an earlier run's results to be uploaded
    result = clean_result(grade(submission, lab, device=device, inprocess=inprocess,
                                budget=budget))
    head = [f"rnngrade {lab}: {result.score:g}/{result.max_score:g} ({result.status})",
            *protection_lines(result, inprocess)]
    if result.status == Status.GRADER_ERROR:
        detail = result.grader_detail.strip() or result.error
        for line in [*head, detail]:
            say(line)
        say(f"rnngrade gradescope-run: {error_line(GraderError(detail.splitlines()[0]))}; "
            "no results.json was written, so the student is not scored")
        return AutograderRun(ExitCode.GRADER, result)
    note = protection_note(result, inprocess)
    shown = dataclasses.replace(result, notes=[*result.notes, note] if note else result.notes)
    # written before anything is printed: a closed stdout loses nothing
    write_atomic(target, render_results_json(shown))
    for line in [*head, f"results: {target}"]:
        say(line)
    return AutograderRun(ExitCode.OK, shown, target)

"""Every error the grader raises on purpose, and the exit code each one maps to.

Three kinds of failure, told apart everywhere:

- ``UsageError`` (exit 2): the command line or its arguments are wrong (unknown lab, missing path).
- ``SubmissionError`` (exit 3): the submission cannot be loaded at all; reports are still written
  and say why. Never raised for a mistake *inside* loadable code: that is graded as 0 per test.
- ``GraderError`` (exit 4): trusted code failed (a rubric, a hidden suite, a mutant, the sandbox,
  a renderer). It is never scored against the student and never quoted to them; the instructor
  sees the details.

``ExitCode``, ``RnngradeError`` and ``SubmissionError`` live with the student side
(``rnngrade.harness.errors``), which raises them too. ``exit_code_for`` is the one place that
maps an exception to an exit code.
"""

from __future__ import annotations

from pathlib import Path

from rnngrade.harness.errors import ExitCode, RnngradeError, SubmissionError


class UsageError(RnngradeError):
    """The command line asks for something that does not exist or cannot work."""

    exit_code = ExitCode.USAGE


class GraderError(RnngradeError):
    """Trusted code failed: never the student's fault, never shown to the student."""

    exit_code = ExitCode.GRADER

    #: What a student reads instead of the details.
    STUDENT_MESSAGE = "internal grading error: the instructor has been told"


class RubricError(GraderError):
    """A rubric is malformed or does not match its suite."""


class SuiteError(GraderError):
    """A hidden suite does not collect or breaks while it runs (a fixture, a helper)."""


class MutantError(GraderError):
    """A mutant's edit does not apply to the reference, or the mutant table is malformed."""


class SandboxError(GraderError):
    """The sandbox cannot start on this machine, or its trusted side failed."""


class RenderError(GraderError):
    """A report could not be rendered or written."""


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code a command returns when ``exc`` ends it."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, RnngradeError):
        return exc.exit_code
    return ExitCode.GRADER  # anything unexpected is the grader's fault, never exit 1


def file_line(exc: BaseException, path: Path) -> str:
    """``path:line`` of the deepest frame of ``exc`` in ``path`` (or of a syntax error): where a
    trusted file that does not load is to be fixed (``path`` alone when no line is known)."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{path}:{exc.lineno}"
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{path}:{line}" if line else str(path)


def error_line(exc: BaseException) -> str:
    """The one line a command prints for an error that ends it (no traceback)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, GraderError):
        return f"the grader is broken: {text}"
    return text


__all__ = ["ExitCode", "GraderError", "MutantError", "RenderError",
           "RnngradeError", "RubricError", "SandboxError", "SubmissionError", "SuiteError",
           "UsageError", "error_line", "exit_code_for", "file_line"]

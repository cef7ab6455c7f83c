"""The errors and exit codes both sides share: the exit-code contract students and scripts
see, the base of every deliberate error, and the one a submission that cannot be loaded raises.
The grader's own errors (``rnngrade.errors``) build on these."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of every ``rnngrade`` command."""

    OK = 0  # the command did its job (grading completed, whatever the score)
    FAILURES = 1  # validate / generate --check / release found problems to fix
    USAGE = 2  # bad arguments: unknown lab, unknown device, missing path
    UNLOADABLE = 3  # the submission could not be loaded at all (reports are still written)
    GRADER = 4  # the grader itself failed (suite, rubric, mutant, sandbox, renderer, device)
    GITHUB = 5  # ci: the GitHub API refused the token or kept failing
    INTERRUPTED = 130  # Ctrl-C; what finished is kept on disk


class RnngradeError(Exception):
    """Base of every error the grader raises on purpose."""

    exit_code: ExitCode = ExitCode.GRADER


class SubmissionError(RnngradeError):
    """The submission cannot be loaded at all (not JSON, unsafe archive, nothing to grade)."""

    exit_code = ExitCode.UNLOADABLE

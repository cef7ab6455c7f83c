"""One error hierarchy, and every exit code from one place."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import rnngrade
from rnngrade.cli import main
from rnngrade.errors import (
    ExitCode,
    GraderError,
    MutantError,
    RnngradeError,
    RubricError,
    SubmissionError,
    UsageError,
    exit_code_for,
)

PACKAGE = Path(rnngrade.__file__).parent
# Exceptions that are not errors of a command: outcomes of a student's call or check (graded,
# never raised out of the grader) and internal signals (sandbox, memo, a watched training run's
# refused step), handled where raised.
NOT_ERRORS = {"StudentError", "CheckFailure", "ProtocolError", "ChannelClosed", "ChannelTimeout",
              "IsolationError", "Undigestable", "StopTraining"}


def exception_classes() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages([str(PACKAGE)], "rnngrade."):
        if info.name.startswith(("rnngrade.sandbox.worker",
                                 "rnngrade.harness.checks.notebook_tests")):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - optional extras (dask) may be missing
            continue
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__ and not name.startswith("_")):
                found.append(value)
    return found


def test_every_error_of_the_grader_has_the_one_base():
    classes = exception_classes()
    assert len(classes) > 15
    strays = [f"{c.__module__}.{c.__name__}" for c in classes
              if not any(base.__name__ in NOT_ERRORS for base in c.__mro__)
              and not issubclass(c, RnngradeError)]
    assert strays == []


@pytest.mark.parametrize(("exc", "code"), [
    (UsageError("x"), ExitCode.USAGE), (SubmissionError("x"), ExitCode.UNLOADABLE),
    (GraderError("x"), ExitCode.GRADER), (RubricError("x"), ExitCode.GRADER),
    (MutantError("x"), ExitCode.GRADER), (ValueError("x"), ExitCode.GRADER),
    (KeyboardInterrupt(), ExitCode.INTERRUPTED)])
def test_exit_code_for(exc, code):
    assert exit_code_for(exc) == code


def test_old_names_are_the_hierarchy():
    from rnngrade.gradebook.batch import BatchError, GraderFailure
    from rnngrade.labs import UnknownLabError
    from rnngrade.sandbox import SandboxUnavailable
    from rnngrade.submission.load import SubmissionError as LoadError

    assert issubclass(UnknownLabError, UsageError) and issubclass(BatchError, UsageError)
    assert issubclass(LoadError, SubmissionError)
    assert issubclass(GraderFailure, GraderError)
    assert issubclass(SandboxUnavailable, GraderError)


def test_no_module_declares_its_own_exit_codes():
    declared = re.compile(r"^\s*EXIT_\w+\s*(,\s*EXIT_\w+\s*)*=\s*\d", re.MULTILINE)
    assert [p.name for p in PACKAGE.rglob("*.py") if declared.search(p.read_text())] == []


def test_an_unknown_lab_is_a_usage_error_without_traceback(tmp_path, capsys):
    assert main(["grade", str(tmp_path), "--lab", "lab99", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "unknown lab 'lab99'" in err and "Traceback" not in err

"""Tests graded by outcome, on the student's side: training runs in the public tests.

A public test marked ``@pytest.mark.outcome(...)`` is a training run: ``pytest assignments/labN``
skips it unless asked with ``--outcome``, and while it runs, ``progress(student, function,
every, total)`` prints a line every ``every`` calls of ``function`` (e.g. one line per 100
updates when ``function`` is the per-update loss). Before it runs, ``pin_threads`` gives torch,
OpenMP and NumPy's BLAS one thread each, as the grader does, so the figures match the grader's
and a busy machine is not made busier by idle thread pools (they stay pinned for the rest of the
session). What it prints is shown when it passes too, without ``-s``: its figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rnngrade.harness import markers
from rnngrade.harness.checks.threads import pin_threads

__all__ = ["MARKER", "PUBLIC_SKIP", "pin_threads", "progress"]

MARKER = markers.OUTCOME.name
PUBLIC_SKIP = "a training run: run it with  pytest --outcome  (it takes a while)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("rnngrade").addoption(
        "--outcome", action="store_true", default=False, dest="run_outcome",
        help="also run the tests graded by outcome (training runs; they take a while)")


def pytest_configure(config: pytest.Config) -> None:
    markers.register(config, markers.OUTCOME)
    _CONFIG[:] = [config]


_CONFIG: list[pytest.Config] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Outcome tests outside the hidden suites run only with ``--outcome``."""
    if config.getoption("run_outcome", default=False):
        return
    for item in items:
        if _public(item):
            item.add_marker(pytest.mark.skip(reason=PUBLIC_SKIP))


def _public(item: pytest.Item) -> bool:
    """Whether ``item`` is a training run of the public tests (not of a hidden suite)."""
    return item.get_closest_marker(MARKER) is not None and "suites" not in Path(item.path).parts


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _public(item):
        pin_threads()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A training run that passed: what it printed (its figure), shown as pytest shows a
    failure's output only."""
    made: Any = yield
    report = made.get_result()
    if report.when == "call" and report.passed and _public(item):
        for line in report.capstdout.splitlines():
            if line.strip():
                _say(f"  {item.name}: {line}")


def _say(line: str) -> None:
    """One line on the terminal now, past pytest's output capture."""
    config = _CONFIG[0] if _CONFIG else None
    reporter = config.pluginmanager.get_plugin("terminalreporter") if config else None
    capture = config.pluginmanager.get_plugin("capturemanager") if config else None
    if reporter is None:
        return
    if capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    else:
        reporter.write_line(line)


@contextmanager
def progress(student: Any, function: str, every: int, total: int,
             label: str = "update") -> Iterator[None]:
    """While the block runs, a line every ``every`` calls of the student's ``function`` (the
    module's own function, as the student's code looks it up): ``update 100/500``. Only for
    a module run in this process; elsewhere the block runs without lines."""
    module = _module_of(student)
    original = getattr(module, function, None) if module is not None else None
    if not callable(original):
        yield
        return
    calls = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        calls[0] += 1
        if calls[0] % every == 0:
            _say(f"  {label} {calls[0]}/{total}")
        return result

    setattr(module, function, counted)
    try:
        yield
    finally:
        setattr(module, function, original)


def _module_of(student: Any) -> Any:
    runner: Callable | Any = getattr(student, "runner", None)
    while runner is not None:
        module = getattr(runner, "module", None)
        if module is not None:
            return module
        runner = getattr(runner, "runner", None)
    return None

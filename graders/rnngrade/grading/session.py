"""Driving pytest for the grader: the only module that touches pytest's internals.

Two ways to run a hidden suite:

- ``run_fresh``: one whole ``pytest.main`` session (public API only).
- ``ReusableSession``: a session that collects once and then runs every collected item again for
  each submission through pytest's own ``pytest_runtest_protocol`` hook (same fixtures, seeding,
  capture and reports), the last item with no successor so every fixture is torn down before the
  next submission.

pytest has no public API for the second, so it uses these private symbols (pytest is pinned to
the range in ``pyproject.toml``; ``make test-pytest-range`` runs the reusable-session tests on the
lowest and the highest version of that range):

- ``_pytest.config._prepareconfig(args, plugins)``: a ``Config`` from a command line, as
  ``pytest.main`` builds it;
- ``_pytest.main.Session.from_config(config)``: the session object ``pytest.main`` would create;
- ``Config._do_configure()`` and ``Config._ensure_unconfigure()``: the configure / unconfigure
  steps of ``pytest.main``;
- ``Item._report_sections``: the captured output sections of an item, reset before each run
  (as a freshly collected item has it) and read when building a short report
  (``report_sections``).

Public but session-level: ``Session.exitstatus``, ``Session.testsfailed``, ``Session.items``,
the hooks ``pytest_sessionstart``, ``pytest_collection``, ``pytest_runtest_protocol`` and
``pytest_sessionfinish``, and unregistering the ``terminalreporter`` plugin.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

import pytest

from rnngrade.errors import SuiteError


@contextlib.contextmanager
def _streams_kept() -> Iterator[None]:
    """Restore ``sys.stdin/stdout/stderr`` afterwards: pytest's capture manager saves the streams
    it found when the session started and puts those back whenever it suspends, which in a
    long-lived session would be streams of the past (another command's, or a closed file)."""
    saved = sys.stdin, sys.stdout, sys.stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _no_plugin_autoload() -> Iterator[None]:
    """pytest loads no plugin from the installed packages' entry points while it configures: a
    hidden suite uses pytest's own plugins and the ones it is given (scanning every installed
    distribution's metadata and importing xdist and the like costs a grader start ~0.1 s)."""
    name = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    saved = os.environ.get(name)
    os.environ[name] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


SUITE_PACKAGE = "graders.suites"  # the name of a hidden suite's modules: its path from the root


def _forget_suite_modules() -> None:
    """Drop the hidden suites' modules from ``sys.modules`` before a session collects: pytest
    names a test module by its path from the course's root and reuses a module already imported
    under that name, so a second course in this process, or an edited suite collected again,
    would run the test functions of the first."""
    for name in [n for n in sys.modules if n == SUITE_PACKAGE or n.startswith(f"{SUITE_PACKAGE}.")
                 or n == "graders"]:
        del sys.modules[name]


def report_sections(item: pytest.Item) -> list[tuple[str, str, str]]:
    """The ``(when, key, content)`` output sections captured for ``item`` so far."""
    return list(item._report_sections)


def run_fresh(args: list[str], plugins: list[object], log: io.StringIO, what: str) -> None:
    """Run ``pytest.main(args)`` with ``plugins``, its terminal output into ``log``; SuiteError
    when the session itself did not run (internal, usage error, interrupted)."""
    _forget_suite_modules()
    with contextlib.redirect_stdout(log), _no_plugin_autoload():
        code = pytest.main(args, plugins=plugins)
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                pytest.ExitCode.INTERRUPTED):
        raise SuiteError(f"{what} did not run (pytest exit {int(code)}):\n"
                         + log.getvalue()[-3000:])


class ReusableSession:
    """A pytest session collected once and run again and again (see the module docstring).

    ``what`` names the suite in errors. Raises SuiteError when the suite does not start or
    collect; after a failure while running, the session is closed."""

    def __init__(self, args: list[str], plugins: list[object], what: str) -> None:
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        self.what = what
        self._config: pytest.Config | None = None
        self._session: pytest.Session | None = None
        self.items: list[pytest.Item] = []
        log = io.StringIO()
        with _streams_kept(), contextlib.redirect_stdout(log):
            try:
                _forget_suite_modules()
                with _no_plugin_autoload():
                    config = _prepareconfig(args, plugins=plugins)
            except Exception as exc:
                raise SuiteError(f"cannot start {what}: {exc}") from exc
            session = Session.from_config(config)
            session.exitstatus = pytest.ExitCode.OK
            self._config, self._session = config, session
            try:
                config._do_configure()
                config.hook.pytest_sessionstart(session=session)
                config.hook.pytest_collection(session=session)
            except BaseException as exc:
                self.close()
                if isinstance(exc, Exception):
                    raise SuiteError(f"{what} did not collect: {exc}\n"
                                     f"{log.getvalue()[-3000:]}") from exc
                raise
        if session.testsfailed or not session.items:
            self.close()
            raise SuiteError(f"{what} did not collect:\n" + log.getvalue()[-3000:])
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # nobody reads it, and it would keep every report
            config.pluginmanager.unregister(reporter)
        self.items = list(session.items)

    @property
    def closed(self) -> bool:
        return self._config is None

    def run(self, log: io.StringIO) -> None:
        """Run every collected item once, in order, their output into ``log``."""
        if self._config is None:
            raise SuiteError(f"{self.what}: the session is closed")
        hook = self._config.hook
        items = self.items
        cwd = os.getcwd()
        try:
            with _streams_kept(), contextlib.redirect_stdout(log):
                for i, item in enumerate(items):
                    item.user_properties = []  # per run, as a fresh item would have
                    item._report_sections = []
                    # The last item has no successor, so every fixture (the module-scoped
                    # student proxy included) is torn down before the next run.
                    nextitem = items[i + 1] if i + 1 < len(items) else None
                    hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        except Exception as exc:
            self.close()
            raise SuiteError(f"{self.what} broke: {exc}") from exc
        finally:
            os.chdir(cwd)

    def close(self) -> None:
        """End the pytest session (idempotent)."""
        config, session = self._config, self._session
        self._config = self._session = None
        self.items = []
        if config is None:
            return
        with _streams_kept(), contextlib.redirect_stdout(io.StringIO()):
            try:
                if session is not None:
                    config.hook.pytest_sessionfinish(session=session, exitstatus=0)
            finally:
                config._ensure_unconfigure()

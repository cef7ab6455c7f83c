"""The pytest plugin behind ``pytest assignments/labN``: the ``student`` fixture, short failure
messages instead of tracebacks, per-test seeding, and the closing points summary.

A public test module names the file it tests with ``STUDENT_MODULE = "rnn"``; the ``student``
fixture loads that file from the test's folder and calls it in this process, so ``pdb`` works. In
the grader the same fixture returns a proxy for the submission under grading instead.
"""

from __future__ import annotations

import re
import types
from collections import defaultdict
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

from rnngrade.harness import markers
from rnngrade.harness.checks.arguments import WriteCheckingProxy
from rnngrade.harness.checks.callees import failed_callees, note
from rnngrade.harness.checks.compare import CheckFailure
from rnngrade.harness.checks.mistakes import explain
from rnngrade.harness.checks.seeding import seed_everything, seed_from_name
from rnngrade.harness.checks.vectors import PublicVectors
from rnngrade.harness.formatting import format_points
from rnngrade.harness.runner.base import MISSING_FUNCTION, NOT_IMPLEMENTED, StudentError
from rnngrade.harness.runner.inprocess import UNFINISHED, InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy

if TYPE_CHECKING:
    import numpy as np

# Set by the grader: a function of the fixture request returning the student's ModuleProxy, or
# None to fall back to the module next to the test (public tests).
STUDENT_PROVIDER = pytest.StashKey[Callable[[pytest.FixtureRequest], ModuleProxy | None]]()
POINTS = pytest.StashKey[dict]()
_ITEM_POINTS = pytest.StashKey[dict]()
FAILURE_KEY = "rnngrade_failure"
_WRITES = pytest.StashKey[list]()  # lines on argument writes seen during a failed test
# A public test module may list the functions whose contract lets them change their arguments
# (``MAY_MODIFY = ("clip",)``: in-place clipping is allowed); their writes are not reported.
MAY_MODIFY = "MAY_MODIFY"
pytest_plugins = ["rnngrade.harness.checks.outcome"]  # training runs: skipped unless --outcome


def pytest_configure(config: pytest.Config) -> None:
    markers.register(config, markers.POINTS, markers.CUDA)
    config.stash[POINTS] = defaultdict(lambda: [0.0, 0.0])


def lab_of(path: Path) -> str:
    """The lab a test file belongs to: the nearest ``labN`` folder above it."""
    for part in reversed(path.parts[:-1]):
        if part.startswith("lab") and part[3:].isdigit():
            return part
    return path.parent.name


def _local_student(request: pytest.FixtureRequest) -> ModuleProxy:
    module_name = getattr(request.module, "STUDENT_MODULE", None)
    if module_name is None:
        raise pytest.UsageError(f"{request.path}: set STUDENT_MODULE = '<file name without .py>'")
    path = Path(request.path).parent / f"{module_name}.py"
    source = path.read_text(encoding="utf-8")
    return WriteCheckingProxy(InProcessRunner.from_source(source, str(path), capture=False))


@pytest.fixture(scope="module")
def student(request: pytest.FixtureRequest) -> ModuleProxy:
    """The student's module, called through the runner the grader chose (in-process here)."""
    provider = request.config.stash.get(STUDENT_PROVIDER, None)
    proxy = provider(request) if provider is not None else None
    return proxy if proxy is not None else _local_student(request)


def find_course_root(start: Path) -> Path:
    for parent in [start, *start.parents]:
        if (parent / "fixtures" / "public").is_dir():
            return parent
    raise FileNotFoundError(f"no fixtures/public folder above {start}")


@pytest.fixture(scope="module")
def vectors(request: pytest.FixtureRequest) -> PublicVectors:
    """The public test vectors of this test's lab."""
    path = Path(request.path)
    return PublicVectors(find_course_root(path.parent) / "fixtures" / "public"
                         / f"{lab_of(path)}.npz")


_RUNNING: list[pytest.Item] = []  # the test being set up or run in this process


def current_item() -> pytest.Item:
    """The test whose fixtures are being set up (cheaper for a fixture than asking for
    ``request``, which pytest builds anew for every fixture that takes it)."""
    return _RUNNING[-1]


def item_id(item: pytest.Item) -> str:
    """A test's id within its file: the same seed wherever the course is checked out."""
    return item.nodeid.split("::", 1)[-1]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every test starts from seeds derived from its own id: same numbers on every run."""
    _RUNNING[:] = [item]
    seed_everything(seed_from_name(item_id(item)))


@pytest.fixture
def rng() -> np.random.Generator:
    """A NumPy Generator seeded from the test's id."""
    import numpy as np

    return np.random.default_rng(seed_from_name(item_id(current_item())))


def short_failure(exc: BaseException) -> dict[str, Any] | None:
    """A student-facing summary of a failure, or None for failures that are the harness's own."""
    if isinstance(exc, CheckFailure):
        return {"kind": "check", "message": exc.message, "diagnosis": list(exc.diagnosis),
                "hint": exc.hint}
    if isinstance(exc, StudentError):
        message = exc.message
        if exc.kind == NOT_IMPLEMENTED and UNFINISHED in message:
            pass  # a template's None placeholder: the message names the function and variable
        elif exc.kind == NOT_IMPLEMENTED:
            # A stub raises "<function>: not implemented yet ..."; name that function, not the
            # grader helper (autograd, set_on_module) through which it was called.
            stub = re.search(r"(\w+): not implemented yet", message)
            message = f"not implemented yet: {stub.group(1) if stub else exc.function or message}"
        elif exc.function and exc.function not in message and exc.kind != MISSING_FUNCTION:
            message = f"{exc.function} raised {message}"
        return {"kind": exc.kind, "message": message,
                "diagnosis": list(getattr(exc, "diagnosis", [])), "hint": getattr(exc, "hint", "")}
    if isinstance(exc, NotImplementedError):
        return {"kind": NOT_IMPLEMENTED, "message": f"not implemented yet: {exc}",
                "diagnosis": [], "hint": ""}
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Argument writes: the student's functions run on copies of what a public test passes, so
    an in-place write leaves the test's arrays alone and its values may still pass. Each call's
    arguments as passed are compared with the copies after it as the call returns
    (``WriteCheckingProxy``); after the test, a write by a
    function the test is about (named in the test's name; every function called when none is)
    fails the test; on a test that fails anyway, every write is reported with the failure."""
    proxy = _local_proxy(item)
    start = len(proxy.calls) if proxy is not None else 0
    try:
        outcome = yield
    except BaseException:
        if proxy is not None:
            item.stash[_WRITES] = [line for _, line in _writes(item, proxy, start)]
        raise
    if proxy is not None:
        writes = _writes(item, proxy, start)
        called = {c.function for c in proxy.calls[start:]}
        own = [line for function, line in writes if _is_subject(function, item, called)]
        if own:
            raise CheckFailure("\n".join(own))
    return outcome


def _local_proxy(item: pytest.Item) -> WriteCheckingProxy | None:
    """The ``student`` fixture of a public test run by the student: the module next to the
    test (the grader checks the arguments of its own calls)."""
    funcargs = getattr(item, "funcargs", {})
    proxy = funcargs.get("student") if isinstance(funcargs, dict) else None
    return proxy if isinstance(proxy, WriteCheckingProxy) else None


def _writes(item: pytest.Item, proxy: WriteCheckingProxy, start: int) -> list[tuple[str, str]]:
    """``(function, line)``: the first argument write of each function the test called
    (from the call at index ``start`` on), but those the test module's ``MAY_MODIFY`` lists."""
    allowed = set(getattr(getattr(item, "module", None), MAY_MODIFY, ()))
    found: dict[str, str] = {}
    for index, function, line in proxy.writes:
        if index >= start and function not in allowed:
            found.setdefault(function, line)
    return list(found.items())


def _is_subject(function: str, item: pytest.Item, called: set[str]) -> bool:
    """Whether ``function`` is what the test is about: named in the test's name, or any
    function when the test's name names none of those it ``called`` (a test of
    ``lstm_cell_backward`` that runs your ``lstm_cell_forward`` for its cache is no test of the
    forward step's arguments)."""
    named = {f for f in called if re.search(rf"(^|_){re.escape(f)}(_|$)", item.name)}
    return function in named if named else True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None:
        return
    summary = short_failure(call.excinfo.value)
    if summary is None:
        return
    proxy = _local_proxy(item) if call.when == "call" else None
    module = getattr(proxy.runner, "module", None) if proxy is not None else None
    function, blamed = (failed_callees(item, module) if isinstance(module, types.ModuleType)
                        else ("", []))
    if blamed:  # a mistake of a function it calls: none of its own is named
        summary["diagnosis"] = []
        summary["hint"] = note(function, blamed)
    elif not summary["diagnosis"]:
        summary["diagnosis"] = explain_public_failure(call.excinfo.value, item)
    summary["diagnosis"] += [w for w in item.stash.get(_WRITES, [])
                             if w not in summary["diagnosis"] and w not in summary["message"]]
    report.user_properties.append((FAILURE_KEY, summary))
    text = summary["message"]
    text += "".join(f"\nthis looks like: {d}" for d in summary["diagnosis"])
    if summary["hint"]:
        text += f"\nhint: {summary['hint']}"
    report.longrepr = text


def explain_public_failure(exc: BaseException, item: pytest.Item) -> list[str]:
    """For a failed public check: the known mistake its result shows, or where along time it
    goes wrong (``rnngrade.harness.checks.mistakes``); [] for anything else."""
    observed = getattr(exc, "observed", None) if isinstance(exc, CheckFailure) else None
    if observed is None:
        return []
    path = Path(item.path)
    try:
        vectors = find_course_root(path.parent) / "fixtures" / "public" / f"{lab_of(path)}.npz"
    except FileNotFoundError:
        vectors = None
    got, want, tol, name, names = observed
    return explain(got, want, tol, name, names, vectors)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    totals = config.stash[POINTS]
    config.stash[_ITEM_POINTS] = {}
    for item in items:
        marker = item.get_closest_marker(markers.POINTS.name)
        if marker is None:
            continue
        lab = lab_of(Path(item.path))
        config.stash[_ITEM_POINTS][item.nodeid] = (lab, float(marker.args[0]))
        totals[lab][1] += float(marker.args[0])


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> None:
    item_points = config.stash.get(_ITEM_POINTS, {})
    if report.when == "call" and report.passed and report.nodeid in item_points:
        lab, points = item_points[report.nodeid]
        config.stash[POINTS][lab][0] += points


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    totals = config.stash.get(POINTS, {})
    for lab, (earned, possible) in sorted(totals.items()):
        if possible:
            terminalreporter.write_line(f"{lab}: {format_points(earned, 1)}/"
                                        f"{format_points(possible, 1)} public points", bold=True)

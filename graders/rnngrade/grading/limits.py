"""Sandbox limits per hidden test: the lab's (``lab.yaml``), or a test's own by marker.

A hidden test may say ``@pytest.mark.limits(call_seconds=30)`` (any field of ``Limits``; sizes as
bytes or ``"512 MiB"``) to override its lab's limits for its own calls; a module-level
``pytestmark`` applies to every test of the file, a test's own marker wins over it. Registered as a
pytest plugin by the course's root ``conftest.py``: before each hidden test's body runs, the
student proxy gets that test's limits (``ModuleProxy.use_limits``), so the per-call wall clock
travels with every call and a worker under other kernel limits is replaced.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pluggy
import pytest

from rnngrade.errors import SuiteError
from rnngrade.harness import markers
from rnngrade.harness.checks.plugin import lab_of
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.labs import Lab, UnknownLabError, get_lab
from rnngrade.limits import Limits

MARKER = markers.LIMITS.name
# An item's limits, worked out when it is collected (its markers and lab do not change after).
_ITEM_LIMITS = pytest.StashKey[Limits]()


def limits_for(lab: Lab, item: pytest.Item) -> Limits:
    """The limits of ``item``'s calls into the submission: ``lab.limits`` overridden by the
    ``limits`` markers on the item, the closest last. SuiteError for a malformed marker."""
    from rnngrade.grading.outcome import outcome_spec  # a plugin of its own: imported late

    limits = lab.limits
    spec = outcome_spec(item)  # a test graded by outcome: its own limits, a marker's override
    if spec is not None:
        try:
            limits = limits.overridden(spec.limits, f"{item.nodeid}: @pytest.mark.outcome")
        except ValueError as exc:
            raise SuiteError(str(exc)) from None
    for marker in reversed(list(item.iter_markers(MARKER))):  # farthest (module) first
        if marker.args:
            raise SuiteError(f"{item.nodeid}: @pytest.mark.limits takes keywords only, e.g. "
                             "limits(call_seconds=30)")
        try:
            limits = limits.overridden(marker.kwargs, f"{item.nodeid}: @pytest.mark.limits")
        except ValueError as exc:
            raise SuiteError(str(exc)) from None
    return limits


def _hidden_lab(item: pytest.Item) -> Lab | None:
    """The lab of a hidden-suite test (``graders/suites/labN/...``), else None."""
    path = Path(item.path)
    if "suites" not in path.parts:
        return None
    try:
        return get_lab(lab_of(path))
    except UnknownLabError:
        return None


def pytest_configure(config: pytest.Config) -> None:
    markers.register(config, markers.LIMITS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A malformed marker stops the suite before any submission is graded."""
    for item in items:
        lab = _hidden_lab(item)
        if lab is not None:
            item.stash[_ITEM_LIMITS] = limits_for(lab, item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, pluggy.Result[None], None]:
    yield
    student = getattr(item, "funcargs", {}).get("student")
    if not isinstance(student, ModuleProxy):
        return
    limits = item.stash.get(_ITEM_LIMITS, None)
    if limits is None:  # not collected through this plugin's hook
        lab = _hidden_lab(item)
        if lab is None:
            return
        limits = item.stash[_ITEM_LIMITS] = limits_for(lab, item)
    student.use_limits(limits)
    from rnngrade.grading.outcome import is_outcome, prepare_worker

    if is_outcome(item):
        prepare_worker(item, student)

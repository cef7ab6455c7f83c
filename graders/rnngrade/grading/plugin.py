"""Trusted-side pytest plugin for hidden suites: ``reference``, ``mutants`` and ``check``.

Registered by the course's root ``conftest.py``. Run a hidden suite directly as an instructor with
``pytest graders/suites/lab1`` (the student is then the reference solution) or
``pytest graders/suites/lab1 --submission path/to/rnn.py``; ``rnngrade grade`` runs the same suite
with the submission behind a sandboxed runner.

The reference and the mutants come from the session's ``LabAssets`` (``LAB_ASSETS`` in the
config's stash): the grader's own when it drives the session, else built once per session here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import Mutant
from rnngrade.grading.checker import Checker, CheckRecord
from rnngrade.grading.keys import LAB_ASSETS
from rnngrade.grading.lab_assets import LabAssets, load_lab_assets
from rnngrade.grading.memo import EXPECTATION_MEMO
from rnngrade.grading.stand_ins import StandIns
from rnngrade.harness.checks.plugin import STUDENT_PROVIDER, current_item, lab_of
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.harness.worker_helpers import Registry
from rnngrade.labs import get_lab

CHECK_KEY = "rnngrade_check"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rnngrade")
    group.addoption("--submission", default=None,
                    help="grade this submission (file or folder) in-process instead of the "
                         "reference when running a hidden suite directly")


def pytest_configure(config: pytest.Config) -> None:
    if LAB_ASSETS not in config.stash:
        built: dict[str, LabAssets] = {}  # this session's, never shared with another

        def assets(lab_name: str) -> LabAssets:
            if lab_name not in built:
                built[lab_name] = load_lab_assets(lab_name)
            return built[lab_name]

        config.stash[LAB_ASSETS] = assets
    if STUDENT_PROVIDER in config.stash:
        return  # the grader's session serves the student
    path = config.getoption("--submission", default=None)
    proxies: dict[str, ModuleProxy] = {}
    lab_assets = config.stash[LAB_ASSETS]

    def provider(request: pytest.FixtureRequest) -> ModuleProxy | None:
        """Hidden suites run directly: the --submission in-process, else the reference."""
        if "suites" not in Path(request.path).parts:
            return None
        lab = get_lab(lab_of(Path(request.path)))
        if lab.name not in proxies:
            if path:
                from rnngrade.submission.load import load_submission

                loaded = load_submission(Path(path), lab)
                runner = InProcessRunner.from_source(
                    loaded.source, loaded.filename, helpers=lab_assets(lab.name).helpers.registry)
            else:
                assets = lab_assets(lab.name)
                runner = InProcessRunner(assets.reference, helpers=assets.helpers.registry)
            proxies[lab.name] = ModuleProxy(runner)
        return proxies[lab.name]

    config.stash[STUDENT_PROVIDER] = provider


_LAB_NAME = pytest.StashKey[str]()


def _assets(item: pytest.Item) -> LabAssets:
    """The assets of the item's lab, from its session (the lab of a test file never changes)."""
    name = item.stash.get(_LAB_NAME, None)
    if name is None:
        name = item.stash[_LAB_NAME] = lab_of(Path(item.path))
    return item.config.stash[LAB_ASSETS](name)


def _helpers(item: pytest.Item) -> Registry:
    """The grader helpers of the item's lab (its own ``helpers.py`` and the generic ones)."""
    return _assets(item).helpers.registry


@pytest.fixture
def reference() -> ModuleProxy:
    """The lab's reference solution (trusted, in this process)."""
    item = current_item()
    return ModuleProxy(InProcessRunner(_assets(item).reference, helpers=_helpers(item)),
                       "reference")


@pytest.fixture
def check(student: ModuleProxy, reference: ModuleProxy) -> Checker:
    """Compare the student with the reference; diagnose failures with the lab's mutants."""
    item = current_item()
    helpers = _helpers(item)

    def mutants() -> list[tuple[Mutant, ModuleProxy]]:
        return [(m, ModuleProxy(InProcessRunner(module, helpers=helpers), m.name))
                for m, module in _assets(item).mutants]

    def record(entry: CheckRecord) -> None:
        item.user_properties.append((CHECK_KEY, entry.__dict__.copy()))

    memo = item.config.stash.get(EXPECTATION_MEMO, None)
    assets = _assets(item)
    graph = assets.callees
    builtins = frozenset(name.removeprefix("stand_in_") for name in helpers.functions
                         if name.startswith("stand_in_"))

    def stand_ins(proxy: ModuleProxy) -> StandIns:
        return StandIns(proxy, reference, graph, builtins, memo)

    return Checker(student, reference, mutants, record, memo=memo,
                   stand_ins=stand_ins if graph else None, callers=frozenset(graph),
                   graded=frozenset(assets.lab.functions),
                   reach=assets.reach, gates=assets.lab.structure.gates)

"""Trusted-side pytest plugin for hidden suites: ``reference``, ``mutants`` and ``check``.

Registered by the course's root ``conftest.py``. Run a hidden suite directly as an instructor with
``pytest graders/suites/lab1`` (the student is then the reference solution) or
``pytest graders/suites/lab1 --submission path/to/rnn.py``; ``rnngrade grade`` runs the same suite
with the submission behind a sandboxed runner.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from rnngrade.checks.plugin import STUDENT_PROVIDER, current_item, lab_of
from rnngrade.diagnosis.mutants import (
    Mutant,
    load_mutant_table,
    load_source_as_module,
    strip_markers,
)
from rnngrade.grading.checker import Checker, CheckRecord
from rnngrade.grading.memo import EXPECTATION_MEMO
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab
from rnngrade.runner.inprocess import InProcessRunner
from rnngrade.runner.proxy import ModuleProxy

CHECK_KEY = "rnngrade_check"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rnngrade")
    group.addoption("--submission", default=None,
                    help="grade this submission (file or folder) in-process instead of the "
                         "reference when running a hidden suite directly")


def pytest_configure(config: pytest.Config) -> None:
    if STUDENT_PROVIDER in config.stash:
        return  # the grader's session serves the student
    path = config.getoption("--submission", default=None)
    proxies: dict[str, ModuleProxy] = {}

    def provider(request: pytest.FixtureRequest) -> ModuleProxy | None:
        """Hidden suites run directly: the --submission in-process, else the reference."""
        if "suites" not in Path(request.path).parts:
            return None
        lab = get_lab(lab_of(Path(request.path)))
        if lab.name not in proxies:
            if path:
                from rnngrade.submission.load import load_submission

                loaded = load_submission(Path(path), lab)
                runner = InProcessRunner.from_source(loaded.source, loaded.filename,
                                                     helpers=lab_helpers(lab).registry)
            else:
                runner = InProcessRunner(reference_module(lab.name),
                                         helpers=lab_helpers(lab).registry)
            proxies[lab.name] = ModuleProxy(runner)
        return proxies[lab.name]

    config.stash[STUDENT_PROVIDER] = provider


@cache
def reference_module(lab_name: str):
    lab = get_lab(lab_name)
    source = lab.solution_path().read_text(encoding="utf-8")
    return load_source_as_module(strip_markers(source), f"_reference_{lab_name}",
                                 str(lab.solution_path()))


@cache
def lab_mutants(lab_name: str) -> tuple[tuple[Mutant, object], ...]:
    lab = get_lab(lab_name)
    path = lab.suite_dir() / "mutants.py"
    if not path.exists():
        return ()
    source = lab.solution_path().read_text(encoding="utf-8")
    return tuple(
        (m, load_source_as_module(m.apply(source), f"_mutant_{lab_name}_{m.name}",
                                  f"<mutant {m.name}>"))
        for m in load_mutant_table(path)
    )


@pytest.fixture
def reference() -> ModuleProxy:
    """The lab's reference solution (trusted, in this process)."""
    lab = lab_of(Path(current_item().path))
    return ModuleProxy(InProcessRunner(reference_module(lab), helpers=lab_helpers(lab).registry),
                       "reference")


@pytest.fixture
def check(student: ModuleProxy, reference: ModuleProxy) -> Checker:
    """Compare the student with the reference; diagnose failures with the lab's mutants."""
    item = current_item()
    lab = lab_of(Path(item.path))
    helpers = lab_helpers(lab).registry
    mutants = [(m, ModuleProxy(InProcessRunner(module, helpers=helpers), m.name))
               for m, module in lab_mutants(lab)]

    def record(entry: CheckRecord) -> None:
        item.user_properties.append((CHECK_KEY, entry.__dict__.copy()))

    return Checker(student, reference, mutants, record,
                   memo=item.config.stash.get(EXPECTATION_MEMO, None))

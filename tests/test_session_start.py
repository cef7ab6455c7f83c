"""Starting a hidden suite's pytest session: no plugin from the installed packages' entry
points (the suite gets pytest's own plugins and the grader's), the environment left as found."""

from __future__ import annotations

import os

from rnngrade.grading.collector import OutcomeCollector
from rnngrade.grading.engine import suite_args
from rnngrade.grading.lab_assets import load_lab_assets
from rnngrade.grading.session import ReusableSession


def test_a_suite_session_loads_no_entry_point_plugin_and_restores_the_environment(monkeypatch):
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    assets = load_lab_assets("lab1")
    session = ReusableSession(suite_args(assets.lab), [OutcomeCollector(None, "cpu", assets)],
                              "the lab1 hidden suite")
    try:
        assert session.items
        assert session._config is not None
        assert session._config.pluginmanager.list_plugin_distinfo() == []
    finally:
        session.close()
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ

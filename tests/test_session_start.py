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


SUITE = '''\
def test_double(check):
    check.expect("double(x)", lambda m, x: {probe}, (3.0,))
'''
LAB = ("title: Toy\nmodule: toy\nfunctions: [double]\nuses_torch: false\nbudget_seconds: 30\n")


def _course(probe: str) -> dict[str, str]:
    from .toy_course import TOY

    return {f"graders/suites/{TOY}/lab.yaml": LAB,
            f"graders/suites/{TOY}/rubric.yaml":
                f"lab: {TOY}\ntests:\n  test_double: {{points: 2}}\n",
            f"graders/suites/{TOY}/test_toy_hidden.py": SUITE.format(probe=probe),
            f"solutions/{TOY}/toy.py": "def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n"
                                       "    # END SOLUTION\n",
            f"assignments/{TOY}/README.md": "# Toy\n"}


def test_a_second_course_s_suite_of_the_same_name_is_the_one_run(tmp_path, cache):
    """Two courses in one process, each with lab90/test_toy_hidden.py: pytest names both
    modules alike, and the second session runs the second course's tests, not the first's
    (a probe that gives the reference's value there, a probe the submission fails here)."""
    from rnngrade.grading.engine import grade_isolated

    from .toy_course import TOY, toy_course

    submission = tmp_path / "toy.py"
    submission.write_text("def double(x):\n    return x + x if x < 4 else 0.0\n")
    for name, probe, score in (("a", "m.double(x)", 2.0), ("b", "m.double(x + 2.0)", 0.0)):
        (tmp_path / name).mkdir()
        with toy_course(tmp_path / name, _course(probe)):
            result = grade_isolated(submission, TOY, device="cpu", inprocess=True)
        assert result.score == score, [(t.name, t.message) for t in result.tests]

"""Registers the rnngrade pytest plugins for everything in this course repository: the student
fixtures and checks, the hidden suites' ``reference``/``check`` fixtures, and per-test limits."""

pytest_plugins = ["rnngrade.harness.checks.plugin", "rnngrade.grading.plugin",
                  "rnngrade.grading.limits", "rnngrade.grading.outcome"]

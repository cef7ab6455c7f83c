"""Registers the rnngrade pytest plugins for everything in this course repository."""

pytest_plugins = ["rnngrade.checks.plugin", "rnngrade.grading.plugin"]

"""``rnngrade.suite.worker``: what a lab's worker code imports (``helpers.py`` and the platform
modules ``platform_*.py`` under ``graders/suites``).

That code runs in the sandboxed worker beside the submission, after the jail, where it can import
only what the worker loaded before (``rnngrade.sandbox.worker`` loads this module): so this module
reaches the generic worker helpers and nothing of the grading engine.

- ``@helper``: registers ``name(module, *args, **kwargs)``, called through
  ``ModuleProxy.helper``; ``@function``: registers ``name(*args) -> callable``, the callable
  argument a ``FunctionRef("name", args)`` stands for;
- ``watch_training``: a training run with torch's optimisers watched (the parameters at
  checkpoints, as plain data for the trusted side to measure).

The rules: a helper's results cross the protocol like any student result and are checked like
one; helpers run on the reference and the mutants as well as on the student, and their results
are memoised across submissions, so a helper is a pure function of its arguments (and of the
module it calls); and nothing in them answers a function the lab grades, nor quotes the suite
(``rnngrade.release.worker_audit``: the docstrings and comments never reach the worker).
"""

from __future__ import annotations

from rnngrade.harness.training_watch import watch_training
from rnngrade.harness.worker_helpers import function, helper

__all__ = ["function", "helper", "watch_training"]

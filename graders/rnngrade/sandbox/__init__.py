"""Running student code in a jailed worker process.

``SandboxRunner`` (the ``StudentRunner`` the grader uses by default) talks to one worker per
submission over a no-pickle protocol (``codec``); workers are forked from a long-lived ``zygote``
and jailed by ``isolation`` within the ``Limits``.
"""

from rnngrade.limits import Limits
from rnngrade.sandbox.runner import SandboxRunner
from rnngrade.sandbox.zygote.client import SandboxUnavailable, close_shared_client

__all__ = ["Limits", "SandboxRunner", "SandboxUnavailable", "close_shared_client"]

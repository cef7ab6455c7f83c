"""A computation that counts its calls (the tests of the grader's caches)."""

from __future__ import annotations

from typing import Any


class Counted:
    """``Counted(value)()`` returns ``value`` (a callable ``value`` is called for a fresh result
    each time) and counts the calls in ``calls``."""

    def __init__(self, value: Any) -> None:
        self.value, self.calls = value, 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.value() if callable(self.value) else self.value

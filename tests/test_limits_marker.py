"""``limits_for``: a lab's limits, overridden by the ``limits`` markers of a hidden test (module
level first, the test's own last); a malformed marker is the suite's fault."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rnngrade.errors import SuiteError
from rnngrade.grading.limits import limits_for
from rnngrade.labs import get_lab


@dataclass
class FakeItem:
    """What limits_for reads of a pytest item: its id and its markers, closest first."""

    marks: list
    nodeid: str = "test_x.py::test_y"

    def iter_markers(self, name: str):
        return (m.mark for m in self.marks if m.mark.name == name)


def test_the_closest_marker_wins_and_the_rest_is_the_lab_s():
    lab = get_lab("lab1")
    own = pytest.mark.limits(call_seconds=2)
    module = pytest.mark.limits(call_seconds=30, memory_bytes="1 GiB")
    limits = limits_for(lab, FakeItem([own, module]))
    assert (limits.call_seconds, limits.memory_bytes) == (2.0, 1 << 30)
    assert limits.cpu_seconds == lab.limits.cpu_seconds
    assert limits_for(lab, FakeItem([])) == lab.limits


@pytest.mark.parametrize("mark, complaint", [
    (pytest.mark.limits(5), "keywords only"),
    (pytest.mark.limits(seconds=5), "unknown limit 'seconds'"),
    (pytest.mark.limits(call_seconds=-1), "call_seconds must be a positive number"),
])
def test_a_malformed_marker_is_a_suite_error(mark, complaint):
    with pytest.raises(SuiteError, match=complaint):
        limits_for(get_lab("lab1"), FakeItem([mark]))

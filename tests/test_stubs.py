"""Reference → stub: solution regions become friendly NotImplementedErrors."""

import ast

import pytest

from rnngrade.authoring.stubs import MarkerError, make_stub, solution_regions

REFERENCE = '''"""Docs."""

import numpy as np


def helper(x):
    return x + 1


def f(x):
    """Double x."""
    # BEGIN SOLUTION
    y = 2 * x
    return y
    # END SOLUTION


class Model:
    def g(self, x):
        """Triple."""
        # BEGIN SOLUTION
        return 3 * x
        # END SOLUTION
'''


def test_stub_replaces_each_region_and_keeps_docstrings_and_helpers():
    stub = make_stub(REFERENCE, "assignments/labX")
    tree = ast.parse(stub)
    assert "2 * x" not in stub and "3 * x" not in stub
    assert '"""Double x."""' in stub and '"""Triple."""' in stub
    assert "return x + 1" in stub
    assert 'raise NotImplementedError("f: not implemented yet' in stub
    assert 'raise NotImplementedError("g: not implemented yet' in stub
    assert "pytest assignments/labX" in stub
    assert ast.get_docstring(tree) == "Docs."


def test_regions_are_found_with_their_indentation():
    regions = solution_regions(REFERENCE)
    assert [indent for _, _, indent in regions] == ["    ", "        "]


@pytest.mark.parametrize("broken, message", [
    ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "never closed"),
    ("def f():\n    return 1\n    # END SOLUTION\n", "without BEGIN"),
    ("def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    # END SOLUTION\n", "inside"),
    ("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n", "inside a function"),
])
def test_unbalanced_or_misplaced_markers_are_refused(broken, message):
    with pytest.raises(MarkerError, match=message):
        make_stub(broken, "assignments/labX")

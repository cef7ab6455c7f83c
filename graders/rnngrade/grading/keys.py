"""Where a grading session keeps what its plugins and checks share (pytest's stash)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rnngrade.grading.lab_assets import LabAssets

# A function of a lab name returning that lab's assets for this session.
LAB_ASSETS = pytest.StashKey[Callable[[str], LabAssets]]()

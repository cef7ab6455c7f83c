"""The summary's Roster section in a real browser: its tables render, and a screenshot of the
page is not blank."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from rnngrade.gradebook.roster import parse_roster

from ..browser import dump_dom, needs_chromium, screenshot
from .conftest import EMPTY, FULL, batch, entries
from .test_roster import ROSTER


@pytest.mark.slow  # two Chromium runs; summary.html itself is rendered by tests/batch by default
@needs_chromium
def test_roster_section_renders(tmp_path, made_up_grading):
    out = tmp_path / "out"
    batch(entries(tmp_path / "subs", alice=FULL, Bob=EMPTY, mallory=FULL), "lab1", out,
          roster=parse_roster(ROSTER))
    page = out / "lab1" / "summary.html"
    dom = dump_dom(page)
    section = dom[dom.index("<h2>Roster</h2>"):]
    assert "3 students on the roster · 1 without a submission · 1 entry not on the roster" in \
        section
    assert re.search(r'id="missing".*?<code>dave</code>.*?missing', section, re.S)
    assert re.search(r'id="not-in-roster".*?<code>mallory</code>', section, re.S)
    png = screenshot(page, tmp_path / "summary.png", "1280,2400")
    shots = os.environ.get("RNNGRADE_SCREENSHOTS")
    if shots:  # keep it to look at: RNNGRADE_SCREENSHOTS=DIR make test-slow
        shutil.copy(png, Path(shots) / "summary-roster.png")
    assert png.stat().st_size > 40_000  # a blank page compresses to a few kilobytes

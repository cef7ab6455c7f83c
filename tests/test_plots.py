"""Pictures in feedback.html (rnngrade.results.plots): drawn from numbers only, bounded in size,
every text escaped, junk ignored, and rendered into the page."""

import math

import numpy as np

from rnngrade.results import plots
from rnngrade.results.model import GradeResult, Outcome, TestResult
from rnngrade.results.render import render_feedback_html


def a_figure(label="yours"):
    return plots.figure("Timeline", [plots.panel(
        "rolling RMS", [plots.line(label, np.r_[np.nan, np.arange(5.0)], x0=100)],
        spans=[(101, 103)], limits=[2.5],
        events=[plots.marks("alarms", np.arange(6) > 3, x0=100)])])


def test_downsampling_keeps_spikes_and_bounds_points():
    values = np.zeros(10_000)
    values[4321] = 7.0
    xs, ys = plots.downsample(values)
    assert len(xs) <= plots.MAX_POINTS and max(y for y in ys if y is not None) == 7.0
    assert 4321.0 in xs


def test_nan_and_inf_become_gaps():
    _, ys = plots.downsample([1.0, math.nan, math.inf, 2.0])
    assert ys == [1.0, None, None, 2.0]
    svg = str(plots.svg_figure(a_figure()))
    assert svg.count("<polyline") == 1 and "nan" not in svg.lower()


def test_texts_are_escaped_and_junk_is_dropped():
    svg = str(plots.svg_figure(a_figure(label="<script>alert(1)</script>")))
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert str(plots.svg_figure({"panels": "not a list"})) == ""
    assert str(plots.svg_figure("<svg onload=alert(1)>")) == ""
    junk = {"title": 5, "panels": [{"lines": [{"x": ["1", None, 2.0], "y": [True, 3.0, 4.0],
                                               "colour": "red"}],
                                    "spans": [["a", 2]], "limits": ["x", 1.0]}]}
    clean = plots.clean_figure(junk)
    assert clean["title"] == "" and clean["panels"][0]["spans"] == []
    assert clean["panels"][0]["lines"][0]["x"] == [None, None, 2.0]
    assert clean["panels"][0]["lines"][0]["y"] == [None, 3.0, 4.0]
    assert clean["panels"][0]["limits"] == [1.0]


def test_sizes_are_bounded_whatever_the_data():
    huge = {"title": "x" * 10_000, "panels": [
        {"title": "p", "lines": [{"x": list(range(50_000)), "y": [1.0] * 50_000}] * 50,
         "marks": [{"x": list(range(50_000))}] * 20}] * 20}
    clean = plots.clean_figure(huge)
    assert len(clean["panels"]) == plots.MAX_PANELS and len(clean["title"]) == plots.TEXT_LIMIT
    assert all(len(ln["x"]) <= plots.MAX_POINTS for p in clean["panels"] for ln in p["lines"])
    assert len(str(plots.svg_figure(huge))) < 1_000_000


def test_a_test_figure_appears_in_feedback_html():
    test = TestResult("test_monitors", "rolling_stat: the stream", 1.0, 2.0, Outcome.PARTIAL,
                      "visible", figures=[a_figure()])
    result = GradeResult("lab8", "Honest forecasting", "sub.py", 1.0, 2.0, 1.0, [test])
    page = render_feedback_html(result)
    assert "<h2>Pictures</h2>" in page and page.count("<svg") == 1 and "<polyline" in page

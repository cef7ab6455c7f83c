"""Pictures in feedback.html (rnngrade.results.plots): drawn from numbers only, bounded in size,
every text escaped, junk ignored, and rendered into the page."""

import math
import re

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


def test_a_log_axis_has_decade_ticks_and_gaps_where_values_are_not_positive():
    values = [1e-20, 1e-10, 0.0, -1.0, math.nan, math.inf, 1.0]
    data = plots.figure("gradients", [plots.panel("norm", [plots.line("yours", values)],
                                                  limits=[1e-5, -3.0], log_y=True)])
    svg = str(plots.svg_figure(data))
    assert ">1e-20</text>" in svg and ">1e0</text>" in svg and "nan" not in svg.lower()
    # two values before the gap make a line, the one after it a dot; a negative limit is dropped
    assert svg.count("<polyline") == 1 and svg.count("<circle") == 1
    assert svg.count('class="limit"') == 1
    linear = str(plots.svg_figure(plots.figure("g", [plots.panel("n", [plots.line("y", values)])])))
    assert "1e-20" not in linear and linear.count("<polyline") == 1  # 1e-20 .. -1 joined
    assert plots.clean_figure({"panels": [{"log_y": "yes"}]})["panels"][0]["log_y"] is False


def shaded_cells(svg: str) -> str:
    """The shaded cells of the first heatmap in ``svg``."""
    return svg.split(f'<g fill="{plots.HEATMAP_COLOUR}">', 1)[1].split("</g>", 1)[0]


def test_a_heatmap_shades_clamped_cells_and_leaves_nan_empty():
    data = plots.figure("attention", [plots.heatmap(
        "weights", [[0.0, 0.5, 2.0], [math.nan, -1.0, 1.0]], row_labels=["the", "cat"],
        col_labels=["a", "b", "c"])])
    assert data["panels"][0]["values"] == [[0.0, 0.5, 1.0], [None, 0.0, 1.0]]
    svg = str(plots.svg_figure(data))
    cells = shaded_cells(svg)
    assert cells.count('fill-opacity="1.00"') == 2 and cells.count('fill-opacity="0.50"') == 1
    assert cells.count("<rect") == 3  # a zero is white: no cell drawn
    empty = svg.split('class="empty"')[0].rsplit("<path", 1)[1]
    assert empty.count("M") == 1 and ">cat</text>" in svg and ">c</text>" in svg


def test_a_large_heatmap_is_averaged_down_in_blocks_and_loses_its_labels():
    grid = np.zeros((100, 7))
    grid[:50] = 1.0
    grid[0, 0] = np.nan
    data = plots.heatmap("big", grid, row_labels=[str(i) for i in range(100)], col_labels="abcdefg")
    assert len(data["values"]) <= plots.MAX_SIDE and len(data["values"][0]) == 7
    assert data["values"][0][0] == 1.0 and data["values"][-1][0] == 0.0  # NaN left out of a mean
    assert data["row_labels"] == [] and data["col_labels"] == list("abcdefg")
    try:
        plots.heatmap("flat", [0.1, 0.2])
    except ValueError as error:
        assert "2-D" in str(error)
    else:
        raise AssertionError("a 1-D heatmap must be refused")


def test_hostile_heatmaps_are_capped_escaped_and_typed():
    huge_row = [0.5] * 100_000
    junk = {"title": "<b>", "panels": [
        {"kind": "heatmap", "title": "<script>x</script>", "values": [huge_row] * 100_000,
         "row_labels": ["<img src=x onerror=alert(1)>" * 50] * 1000, "col_labels": "abc"},
        {"kind": "heatmap", "values": [["0.5", None, True, 10**400, -math.inf], "row", [0.25]],
         "row_labels": [5, "\ud800\x1b[2J"]},
        {"kind": "heatmap", "values": "not a grid"},
        {"kind": "heatmap", "values": [[]]}]}
    clean = plots.clean_figure(junk)
    assert len(clean["panels"]) == 2  # the last two hold no cell
    big, odd = clean["panels"]
    assert len(big["values"]) * len(big["values"][0]) == plots.MAX_CELLS
    assert all(len(t) <= plots.LABEL_LIMIT for t in big["row_labels"]) and big["col_labels"] == []
    assert odd["values"] == [[None, None, None, 1.0, None], [None] * 5, [0.25] + [None] * 4]
    assert odd["row_labels"] == ["", "\ufffd"]
    svg = str(plots.svg_figure(junk))
    assert "<script>" not in svg and "<img" not in svg and "\x1b" not in svg
    assert len(svg) < 300_000
    svg.encode("utf-8")  # a lone surrogate would make the page impossible to write


def test_numbers_too_large_for_a_picture_are_bounded():
    data = {"panels": [{"lines": [{"x": [0, 1, 2], "y": [-1.7e308, 1.7e308, 10**400]}],
                        "limits": [10**400]}]}
    clean = plots.clean_figure(data)
    assert clean["panels"][0]["lines"][0]["y"] == [-plots.VALUE_LIMIT] + [plots.VALUE_LIMIT] * 2
    svg = str(plots.svg_figure(data))
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


def test_a_heatmap_appears_in_feedback_html():
    data = plots.figure("Attention", [plots.heatmap("weights", np.eye(3))])
    test = TestResult("test_attention", "attend: weights", 1.0, 2.0, Outcome.PARTIAL,
                      "visible", figures=[data])
    page = render_feedback_html(GradeResult("lab11", "Attention", "sub.py", 1.0, 2.0, 1.0,
                                            [test]))
    assert shaded_cells(page).count('fill-opacity="1.00"') == 3 and "<h2>Pictures</h2>" in page


def test_the_histogram_axis_ends_on_a_round_step_at_or_above_the_tallest_bar():
    assert plots.histogram_scale([]) == [0, 1]
    assert plots.histogram_scale([0, 3, 2]) == [0, 1, 2, 3]
    assert plots.histogram_scale([7]) == [0, 2, 4, 6, 8]
    assert plots.histogram_scale([26]) == [0, 10, 20, 30]
    assert plots.histogram_scale([30_001]) == [0, 6001, 12002, 18003, 24004, 30005]


def test_the_histogram_draws_each_bar_to_scale_with_its_count_and_escaped_label():
    svg = str(plots.svg_histogram([("a<b", 2), ("50", 0), ("100", 4)], "scores & more", "chart"))
    assert svg.startswith('<svg id="chart" ') and 'aria-label="scores &amp; more"' in svg
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    plot_h = plots.HIST_H - plots.HIST_TOP - plots.HIST_BOTTOM
    assert heights == [plot_h / 2, 0.0, plot_h]  # the axis ends at 4: 2 is half of it
    assert [t for t in re.findall(r'class="count"[^>]*>(\d+)<', svg)] == ["2", "4"]
    assert "a&lt;b" in svg and "a<b" not in svg

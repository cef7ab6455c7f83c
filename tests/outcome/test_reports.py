"""A test graded by outcome reaches every report as a measurement against its band (never a bare
pass/fail), with the curves as a small, escaped inline SVG in feedback.html."""

from __future__ import annotations

import json
import math

import jsonschema

from rnngrade.results.model import Baseline, GradeResult, Measurement, Outcome, TestResult
from rnngrade.results.plots import outcome_figure, svg_figure
from rnngrade.results.render import (
    load_schema,
    render_feedback_html,
    render_feedback_md,
    render_junit,
    render_results_json,
)

SENTENCE = ("validation loss 0.391 nats/char after 500 updates; needs ≤ 0.42; a 5-gram model "
            "scores 0.476; no model can beat 0.310")


def loss_measurement(value: float | None = 0.3908, **changes) -> Measurement:
    fields = dict(name="validation loss", value=value, bound="≤", threshold=0.42, passed=True,
                  unit="nats/char", context="after 500 updates",
                  baselines=[Baseline("a 5-gram model scores", 0.476),
                             Baseline("no model can beat", 0.310)],
                  curve=[3.6 - 0.006 * i for i in range(500)],
                  reference_curve=[3.6 - 0.0061 * i for i in range(500)],
                  curve_label="training loss per update")
    fields.update(changes)
    return Measurement(**fields)


def result_with(measurement: Measurement, outcome: Outcome = Outcome.PASSED) -> GradeResult:
    score = 5.0 if outcome == Outcome.PASSED else 0.0
    test = TestResult("test_training_reaches_band", "train_tbptt, graded by outcome", score, 5.0,
                      outcome, "after_published", measurements=[measurement])
    return GradeResult("lab9", "Training a character model", "alice", score, 5.0, 1.0, [test])


def test_the_sentence_reads_as_the_issue_asks():
    assert loss_measurement().text == SENTENCE
    missing = loss_measurement(None, passed=False)
    assert missing.text.startswith("validation loss no figure after 500 updates; needs ≤ 0.42")
    share = Measurement("well-formed", 0.977, "≥", 0.9, True, unit="%")
    assert share.text == "well-formed 97.7%; needs ≥ 90%"


def test_every_report_shows_the_measurement():
    result = result_with(loss_measurement())
    html = render_feedback_html(result)
    assert "Graded by outcome" in html and SENTENCE in html and "<svg" in html
    assert "measured on cpu" in html
    md = render_feedback_md(result)
    assert "### Graded by outcome" in md and "0.391 nats/char" in md
    assert "0.391 nats/char" in render_junit(result)
    data = json.loads(render_results_json(result))
    jsonschema.validate(data, load_schema())
    measured = data["tests"][0]["measurements"][0]
    assert measured["text"] == SENTENCE and measured["device"] == "cpu"
    assert len(measured["curve"]) <= 100 and SENTENCE in data["tests"][0]["output"]


def test_a_missed_band_says_so_in_the_output():
    result = result_with(loss_measurement(0.61, passed=False), Outcome.FAILED)
    data = json.loads(render_results_json(result))
    assert data["tests"][0]["output"].startswith("missed: validation loss 0.610 nats/char")
    assert "✗" in render_feedback_html(result)


def test_the_picture_is_escaped_and_bounded():
    hostile = loss_measurement(
        name="<script>alert(1)</script>", curve_label='"><img src=x onerror=alert(1)>',
        curve=[math.nan, math.inf, -1e300, *range(200_000)],
        reference_curve=["<b>", None, 1.0])
    html = render_feedback_html(result_with(hostile))
    assert "<script>alert" not in html and "<img" not in html
    svg = str(svg_figure(outcome_figure(hostile)))
    # the reference curve keeps one number: a dot, not a line through one point
    assert len(svg) < 20_000 and svg.count("<polyline") == 1 and svg.count("<circle") == 1
    assert "nan" not in svg.lower() and "inf" not in svg.lower()
    assert outcome_figure(loss_measurement(curve=[], reference_curve=[math.nan])) is None
    assert str(svg_figure(outcome_figure(loss_measurement(curve=[], reference_curve=[])))) == ""


def test_results_round_trip_through_json():
    result = result_with(loss_measurement())
    again = GradeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.tests[0].measurements[0].text == SENTENCE
    assert again.tests[0].measurements[0].baselines[0] == Baseline("a 5-gram model scores",
                                                                   0.476)

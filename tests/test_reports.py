"""Reports: the HTML renders in a browser with the score visible; hidden values never leak."""

import json
import os
import re
import subprocess
import sys

import jsonschema

from rnngrade.results.model import CaseResult, Diagnosis, GradeResult, TestResult
from rnngrade.results.render import load_schema, render_feedback_md, write_reports

from .browser import element_visibility, needs_chromium, screenshot


def sample_result(n_tests=3):
    tests = [
        TestResult("test_a", "softmax: random columns", 2.0, 2.0, "passed", "after_published",
                   cases_passed=4, cases_total=4),
        TestResult("test_b", "rnn_forward: random sizes", 1.5, 3.0, "partial", "after_published",
                   message="case m1: check `rnn_forward`:\na: values differ beyond tolerance",
                   diagnosis=[Diagnosis("loop_feeds_a0", "every step is fed a0", "rnn_forward")],
                   hint="Only the first step should see a0.", cases_passed=2, cases_total=4,
                   cases=[CaseResult("m1", "failed", "…")]),
    ]
    tests += [TestResult(f"test_{i}", f"extra test {i} <b>&amp;</b>", 0.0, 1.0, "failed",
                         "after_published", message="x" * 400, hint="look at the axis")
              for i in range(n_tests - 2)]
    return GradeResult("lab1", "RNN forward", "alice", sum(t.score for t in tests),
                       sum(t.max_score for t in tests), 1.25, tests, notes=["graded rnn.py"],
                       grader_version="0.1.0", graded_at="2026-12-02T00:00:00+00:00")


def test_results_json_validates_and_escapes_html_in_titles(tmp_path):
    files = write_reports(sample_result(), tmp_path)
    data = json.loads(files["results.json"].read_text())
    jsonschema.validate(data, load_schema())
    assert data["score"] == 3.5 and data["tests"][1]["status"] == "failed"
    assert "<b>&amp;</b>" not in files["feedback.html"].read_text()


def test_markdown_stays_under_the_comment_limit_even_with_hundreds_of_failures():
    text = render_feedback_md(sample_result(400))
    assert len(text.encode()) < 64 * 1024
    assert "## lab1" in text


@needs_chromium
def test_feedback_html_renders_with_the_score_visible(tmp_path):
    page = write_reports(sample_result(), tmp_path)["feedback.html"]
    assert element_visibility(page, "#score", tmp_path) == "visible:3.5 / 6"
    png = screenshot(page, tmp_path / "feedback.png")
    assert png.stat().st_size > 20_000  # a blank page compresses to ~5 KB


PLANTED = 271.8281828


def test_a_planted_expected_value_never_appears_in_any_report(course_copy, tmp_path):
    """A hidden check whose expected value is planted; wrong submissions must not see it."""
    suite = course_copy / "graders" / "suites" / "lab1"
    (suite / "test_planted.py").write_text(
        "import numpy as np\n\n"
        "def test_planted(check):\n"
        "    x = np.array([[0.5, 1.5]])\n"
        f"    check.expect('planted', lambda m, x: m.softmax(x), (x,),\n"
        f"                 oracle=lambda x: np.full((1, 2), {PLANTED!r}))\n")
    with (suite / "rubric.yaml").open("a") as rubric:
        rubric.write("  test_planted: {points: 1, title: planted}\n")
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "rnn.py").write_text("import numpy as np\n\ndef softmax(x):\n"
                                  "    return np.full(np.shape(x), 7.0)\n")
    for submission in (wrong, course_copy / "fixtures" / "submissions" / "lab1" / "stub"):
        out = tmp_path / ("out-" + submission.name)
        env = {**os.environ, "RNNGRADE_ROOT": str(course_copy)}
        subprocess.run([sys.executable, "-m", "rnngrade.cli", "grade", str(submission), "--lab",
                        "lab1", "--out", str(out), "--inprocess"], env=env, check=True,
                       capture_output=True, timeout=300)
        results = json.loads((out / "results.json").read_text())
        planted = next(t for t in results["tests"] if t["test_id"] == "test_planted")
        assert planted["score"] == 0
        text = "".join(p.read_text() for p in out.iterdir())
        # digests (hex with a letter in it) may hold the digits of a form by chance
        text = re.sub(r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", "<digest>", text)
        for form in ("271.8", "2.718", "2718", f"{PLANTED:.3g}", f"{PLANTED:.2e}"):
            assert form not in text, f"planted value leaked as {form!r}"
        assert "planted" in text  # the check itself is named


def test_feedback_md_shows_a_students_angle_brackets_as_typed_and_never_as_html():
    """A note, a title and a message holding "<", ">" and "&": rendered (CommonMark, as GitHub
    and GitLab render feedback.md) each reads as written; the message's code fence holds it
    verbatim; no tag of the student's becomes HTML, and no HTML entity appears in the raw file."""
    from markdown_it import MarkdownIt

    note = "x < y <script>alert(1)</script> AT&T"
    result = sample_result(2)
    result.notes = [note]
    result.tests[1].message = "a_next: shape (5, 1) <b>expected</b> (5, 10) & more"
    text = render_feedback_md(result)
    assert "&lt;" not in text and "&gt;" not in text and "&amp;" not in text
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    html = [c.content for t in tokens for c in (t.children or []) if c.type == "html_inline"]
    html += [t.content for t in tokens if t.type == "html_block"]
    assert not any("script" in h or "<b>" in h for h in html), html
    shown = ["".join(c.content for c in t.children or [] if c.type == "text")
             for t in tokens if t.type == "inline"]
    assert note in shown
    fences = [t.content for t in tokens if t.type == "fence"]
    assert any(result.tests[1].message in f for f in fences), fences


def test_the_likely_mistake_and_hint_come_before_the_numbers_everywhere(tmp_path):
    """Gradescope's test output and the feedback pages lead with the likely mistake and the
    hint; the per-case numbers and the table of tests follow."""
    from rnngrade.results.gradescope import to_gradescope

    result = sample_result()
    numbers = "case m1: check `rnn_forward`:\na: values differ beyond tolerance"
    output = to_gradescope(result)["tests"][1]["output"]
    assert output.index("likely mistake: every step is fed a0") < output.index(
        "hint: Only the first step") < output.index(numbers)
    markdown = render_feedback_md(result)
    assert markdown.index("likely mistake:") < markdown.index("**Hint:**") \
        < markdown.index("| | test |")
    html = write_reports(result, tmp_path)["feedback.html"].read_text()
    assert html.index("likely mistake:") < html.index("<table>")

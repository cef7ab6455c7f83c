"""The sanitising boundary and the escapers, one rule at a time."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from rnngrade.results.escape import csv_cell, log_line, md_code, md_inline
from rnngrade.results.model import CaseResult, GradeResult, TestResult
from rnngrade.results.sanitize import (
    FIELD_LIMIT,
    MAX_NOTES,
    REPORT_LIMIT,
    TRUNCATED,
    clean_name,
    clean_notes,
    clean_result,
    clean_text,
    fair_cap,
)

from .conftest import check_markdown


def test_clean_text_makes_any_string_encodable_utf8():
    text = clean_text("a\ud800b\udcffc\ud83d\ude00")
    text.encode("utf-8")  # would raise on a surrogate
    assert text == "a\ufffdb\ufffdc\ufffd\ufffd"
    assert clean_text(b"caf\xe9 \xff") == "caf\ufffd \ufffd"
    assert clean_text(None) == "" and clean_text(3.5) == "3.5"


def test_clean_text_removes_controls_and_escape_sequences_but_keeps_newline_and_tab():
    raw = ("a\x00b\x07c\x0bd\x7fe\x85f\x9b31mg\x1b[2J\x1b[1;31mh\x1b]0;title\x07i\x1b]8;;u\x1b\\j"
           "\ufffe\uffffk\u202el\u2066m\tn\r\no\rp")
    assert clean_text(raw) == "abcdefghij" + "k" + "l" + "m\tn\no\np"


def test_clean_text_caps_each_field_and_is_idempotent():
    long = "x" * (FIELD_LIMIT * 3)
    cut = clean_text(long)
    assert len(cut) == FIELD_LIMIT and cut.endswith(TRUNCATED)
    assert clean_text(cut) == cut
    assert clean_text("short") == "short"


def test_clean_notes_keeps_at_most_twenty_and_counts_the_rest():
    notes = clean_notes([f"note {i}" for i in range(100)])
    assert len(notes) == MAX_NOTES and notes[-1] == "… and 81 more not shown"
    assert clean_notes(notes) == notes
    assert clean_notes(None) == [] and clean_notes("one") == ["one"]


def test_clean_name_is_one_line():
    assert clean_name("a\nb\tc\x1b[31m") == "a b c"
    assert len(clean_name("n" * 10_000)) == 200


@pytest.mark.parametrize("lengths, budget, cap", [
    ([10, 10, 10], 100, 10),  # under budget: nothing cut
    ([10, 1000, 1000], 110, 50),  # the short one whole, the long ones share the rest
    ([0, 0, 500], 100, 100),
    ([], 100, 100),
])
def test_fair_cap_keeps_short_texts_whole(lengths, budget, cap):
    assert fair_cap(lengths, budget) == cap
    assert sum(min(n, cap) for n in lengths) <= budget


def _result(message: str, tests: int = 24, cases: int = 10) -> GradeResult:
    return GradeResult(
        lab="lab1", lab_title="RNN", submission="s\ud800.py", score=1.0, max_score=24.0,
        execution_time=1.0, notes=["grader note"], student_notes=[message],
        tests=[TestResult(f"test_{i}", f"title {i}", 0.0, 1.0, "failed", "visible",
                          message=message, hint="a hint",
                          cases=[CaseResult(f"c{j}", "failed", message) for j in range(cases)])
               for i in range(tests)])


def test_clean_result_bounds_all_free_text_together_and_keeps_titles_and_scores():
    result = clean_result(_result("m" * 1_000_000))
    text = json.dumps(result.to_dict(), ensure_ascii=False)
    assert len(text) < REPORT_LIMIT + 60_000  # the rest: field names, titles, numbers
    assert [t.title for t in result.tests] == [f"title {i}" for i in range(24)]
    assert result.score == 1.0 and result.max_score == 24.0
    assert all(t.hint == "a hint" for t in result.tests)  # short texts are kept whole
    assert result.submission == "s\ufffd.py"
    assert clean_result(result) == result  # idempotent


def test_clean_result_leaves_a_clean_result_unchanged():
    result = _result("a short message", tests=3, cases=2)
    result = dataclasses.replace(result, submission="s.py")
    assert clean_result(result) == result


def test_md_inline_leaves_no_markup_and_stays_readable():
    hostile = ("# 24 / 24 ![x](https://evil.example/p.png) [a](http://e) <script>x</script> "
               "**b** _c_ `d` ~~e~~ $f$ a|b @teacher www.evil.example :tada:\n## head")
    text = md_inline(hostile)
    assert "\n" not in text
    for block in (f"- {text}\n", f"| x | {text} |\n|---|---|\n| {text} | y |\n"):
        tokens = check_markdown("| a | b |\n|---|---|\n" + block if block.startswith("|")
                                else block)
        inline = [c for t in tokens for c in (t.children or [])]
        assert not [c for c in inline if c.type in ("strong_open", "em_open", "code_inline",
                                                    "s_open")]
    assert md_inline("rnn_cell_forward: random sizes, m = 1") == \
        "rnn_cell_forward: random sizes, m = 1"
    for start in ("1. x", "- x", "+ x", "= x", "> x", "# x"):
        tokens = check_markdown(f"- {md_inline(start)}\n", headings=[])
        assert [t.type for t in tokens].count("bullet_list_open") == 1
        assert "ordered_list_open" not in [t.type for t in tokens]
        assert "blockquote_open" not in [t.type for t in tokens]


HOSTILE_TEXT = [
    "a < b and b > c, x <= y, AT & T",
    "<script>alert(1)</script> <img src=x onerror=alert(1)> <!-- c --> <?php x ?>",
    "</details><details open><summary>pwned</summary>",
    "<https://evil.example> <mailto:x@y.z>",
    "&lt;b&gt; &#60;i&#62; &amp; &#x3C;u&#x3E; &copy;",
    "> a block quote? and \\<b> after a backslash",
    "shape (5, 10) <- (5, 1)",
]


def _shown(markdown: str) -> str:
    """The text a CommonMark renderer shows for one list item: its text, ``<br>`` as a line
    break; any other HTML, link or image fails the test."""
    tokens = check_markdown(f"- {markdown}\n", headings=[])
    assert [t.type for t in tokens].count("bullet_list_open") == 1
    assert "blockquote_open" not in [t.type for t in tokens]
    inline = next(t for t in tokens if t.type == "inline")
    shown = []
    for child in inline.children or []:
        if child.type == "html_inline":
            assert child.content == "<br>", child.content
            shown.append("\n")
        else:
            assert child.type in ("text", "softbreak"), child
            shown.append(child.content)
    return "".join(shown)


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_md_inline_shows_angle_brackets_and_ampersands_as_typed_without_entities(text):
    """Rendered (CommonMark, as GitHub and GitLab do) the text reads exactly as it was written,
    and raw it holds no HTML entity: "<" is "<" (or "\\<" where it would open a tag)."""
    escaped = md_inline(text)
    assert _shown(escaped) == text
    assert not re.search(r"(?<!\\)&[A-Za-z#]", escaped), escaped  # no live reference
    for entity in ("&lt;", "&gt;", "&amp;"):
        assert escaped.count(entity) == text.count(entity), escaped  # none added


def test_md_inline_keeps_plain_comparisons_readable_raw():
    assert md_inline("a < b and b > c, AT & T") == "a < b and b > c, AT & T"
    assert md_inline("<b>x</b> &lt;") == "\\<b>x\\</b> \\&lt;"
    assert md_inline("line one\n<i>two</i>") == "line one<br>\\<i>two\\</i>"


def test_md_code_fence_is_longer_than_any_backtick_run():
    text = "a\n```\n## 24 / 24\n`````\nb"
    block = md_code(text)
    assert block.startswith("``````text\n") and block.endswith("\n``````")
    tokens = check_markdown(block + "\n\nafter\n", headings=[])
    assert tokens[0].type == "fence" and tokens[0].content == text + "\n"


@pytest.mark.parametrize("cell, expected", [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1", "'+1"), ("-2", "'-2"), ("@SUM(A1)",
                                                                              "'@SUM(A1)"),
    ("\t=1", "'\t=1"), (" =1", "' =1"), ("alice", "alice"), ("a=b", "a=b"),
])
def test_csv_cell_makes_formulas_text(cell, expected):
    assert csv_cell(cell) == expected


def test_log_line_is_one_line_without_escapes():
    line = log_line("x\n::error title=pwned::x\r\n::add-mask::y\x1b[2J")
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert not line.startswith("::")

"""Every output attack through `rnngrade grade`: exit 0 or 3, reports valid, inert and bounded,
no point gained, and what the attack aimed at (a terminal, a grader notice) left untouched.

In-process (``--inprocess``, ``main([...])``): what is asserted is the grader's handling of the
text it gets back, which the sandbox does not change (the sandbox has its own hostile suite).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode

from .conftest import EXPECTED, ODD, check_reports, html_elements

# A 6 MB message, 20 MB printed at load time, an 8 MB syntax-error line: each report stays a
# few tens of KB, far under REPORT_BOUND, and a cut message says so.
FLOODS = {"huge_message": "truncated", "print_flood_load": "truncated", "huge_syntax_line": ""}
FLOOD_BOUND = 64 * 1024

STUDENT_TEXT = {  # a piece of each attack's text that must reach the reports, inert
    "fence_forgery": "every hidden test passes",
    "html_injection": "<script>alert('pwned')</script>",
    "fake_grader_notice": "regraded to full marks",
}


def grade(entry: Path, out: Path, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = main(["grade", str(entry), "--lab", "lab1", "--out", str(out), "--inprocess",
                 "--device", "cpu"])
    return code, capsys.readouterr().out


# The 1 MB syntax-error line costs the grader a parse of its own (about 5 s): with the slow tests.
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)
                                  if name == "huge_syntax_line" else name
                                  for name in sorted(EXPECTED)])
def test_grade_survives_the_attack_and_writes_inert_bounded_reports(name, attack_entries,
                                                                    tmp_path, capsys):
    score, kind = EXPECTED[name]
    code, printed = grade(attack_entries[name], tmp_path / "out", capsys)
    assert code == (ExitCode.OK if kind == "graded" else ExitCode.UNLOADABLE)
    data = check_reports(tmp_path / "out", score)
    assert data["status"] == ("graded" if kind == "graded" else "load_error")
    # the terminal gets no escape sequence and no control character
    assert not any(ch in printed for ch in "\x1b\x00\x07\x9b")
    printed.encode("utf-8")
    if name in FLOODS:
        assert max(p.stat().st_size for p in (tmp_path / "out").iterdir()) < FLOOD_BOUND
        assert all(FLOODS[name] in t["output"] for t in data["tests"]
                   if t["test_id"].startswith("test_rnn_cell_forward"))
    if name in STUDENT_TEXT:  # shown, as text
        html = (tmp_path / "out" / "feedback.html").read_text()
        assert STUDENT_TEXT[name] in "".join(html_elements(html).text)


def test_a_fake_notice_is_quoted_as_the_submissions_output_never_a_grader_note(
        attack_entries, tmp_path, capsys):
    grade(attack_entries["fake_grader_notice"], tmp_path, capsys)
    data = json.loads((tmp_path / "results.json").read_text())
    assert not any("regraded" in note for note in data["notes"])
    forged = [n for n in data["student_notes"] if "regraded to full marks" in n]
    assert len(forged) == 2  # its exception and the note it slipped into the loader's list
    assert "not a message from the course staff" in data["output"]
    html = (tmp_path / "feedback.html").read_text()
    notice = html.split('<div class="notice">', 1)[-1].split("</div>", 1)[0]
    assert "regraded" not in notice
    quoted = html.split('<div class="quoted">', 1)[1].split("</div>", 1)[0]
    assert quoted.count("regraded to full marks") == 2
    markdown = (tmp_path / "feedback.md").read_text()
    before_table = markdown.split("| | test | points |")[0]
    listed = [line for line in before_table.splitlines() if line.startswith("- ")]
    assert not any("regraded" in line for line in listed)
    assert "not a message from the course staff" in before_table


def test_lone_surrogates_become_replacement_characters(attack_entries, tmp_path, capsys):
    for name in ("surrogate_message", "surrogate_note", ODD["SURROGATE_ID"]):
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        grade(attack_entries[name], out, capsys)
        text = (out / "results.json").read_text(encoding="utf-8")
        assert "\\ud8" not in text.lower() and "\\udc" not in text.lower()
        assert "\ufffd" in json.loads(text)["output"] + "".join(
            t["output"] for t in json.loads(text)["tests"])

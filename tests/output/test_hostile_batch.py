"""Every output attack in one class graded by `rnngrade batch`, beside honest classmates: the batch
finishes, the attackers get exactly what their honest code earns, the classmates are graded in
full, every export and report is valid and inert, the final table prints, and a re-run keeps
everything. A failure while writing one student's reports is that student's error alone.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode
from rnngrade.gradebook import batch as batch_module
from rnngrade.gradebook.batch import BatchOptions, run_batch
from rnngrade.gradebook.entries import student_id
from rnngrade.results.sanitize import clean_name

from ..batch.conftest import current
from ..conftest import SUBMISSIONS
from .conftest import EXPECTED, LAB1_POINTS, check_csv, check_html, check_reports

CLASSMATES = {"honest_alice": SUBMISSIONS / "lab1" / "reference",
              "honest_carol.zip": SUBMISSIONS / "lab1" / "reference.zip",
              "honest_dan.ipynb": SUBMISSIONS / "lab1" / "reference_lab1.ipynb"}
SUMMARY_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "div", "h1",
                "small", "h2", "section", "svg", "line", "text", "rect", "table", "thead", "tr",
                "th", "tbody", "td", "code", "span", "p", "footer", "br", "i", "strong"}


def _class(attack_entries: dict[str, Path], folder: Path) -> Path:
    folder.mkdir()
    for entry in list(attack_entries.values()) + list(CLASSMATES.values()):
        name = next((n for n, p in CLASSMATES.items() if p == entry), entry.name)
        (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, folder / name)
    return folder


def test_a_class_full_of_attacks_is_graded_and_reported_safely(attack_entries, tmp_path,
                                                              capsys):
    folder = _class(attack_entries, tmp_path / "class")
    out = tmp_path / "out"
    args = ["batch", str(folder), "--lab", "lab1", "--out", str(out), "--inprocess", "-j", "2",
            "--quiet"]
    assert main(args) == ExitCode.OK
    table = capsys.readouterr().out
    rows = current(out)
    ids = {student_id(name): name for name in EXPECTED}
    assert set(rows) == set(ids) | {"honest_alice", "honest_carol", "honest_dan"}
    for student, name in ids.items():  # no point gained by any attack
        score, kind = EXPECTED[name]
        assert (rows[student]["score"], rows[student]["status"]) == (score, kind), student
        check_reports(out / "lab1" / "students" / student, score)
    for student in ("honest_alice", "honest_carol", "honest_dan"):  # graded in full
        assert (rows[student]["score"], rows[student]["status"]) == (LAB1_POINTS, "graded")
        check_reports(out / "lab1" / "students" / student, LAB1_POINTS)
    # exports: no formula, no element of a student's, the table printed without escapes
    csv_rows = check_csv((out / "grades.csv").read_text(encoding="utf-8"))
    assert "'=HYPERLINK(\"evil.example\",\"appeal\")" in [row[0] for row in csv_rows]
    page = (out / "lab1" / "summary.html").read_text(encoding="utf-8")
    page, scripts = re.subn(r"<script>.*?</script>", "", page, flags=re.S)
    assert scripts == 1  # the roster's own sorting script, and nothing of a student's
    links = re.findall(r'<a href="([^"]*)">', page)  # the roster's links to each feedback
    assert len(links) == len(rows)
    assert all(re.fullmatch(r"students/[A-Za-z0-9%._~-]+/feedback\.html", link) for link in links)
    check_html(re.sub(r'<a href="[^"]*">', "<a>", page), SUMMARY_TAGS | {"a", "button"})
    assert "carol[bold red]" in table and "[/x].py" in table
    assert not any(ch in table for ch in "\x1b\x00\x07")

    # a re-run keeps every result and prints the same table
    assert main(args) == ExitCode.OK
    again = capsys.readouterr().out
    assert f"kept {len(rows)}" in again and "carol[bold red]" in again
    assert current(out).keys() == rows.keys()


def test_a_report_that_cannot_be_written_is_one_students_error(tmp_path, monkeypatch):
    folder = tmp_path / "class"
    for name in ("alice", "bob", "carol"):
        shutil.copytree(CLASSMATES["honest_alice"], folder / name)
    real = batch_module.write_reports

    def broken_for_bob(result, out):
        if out.name == "bob":
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return real(result, out)

    monkeypatch.setattr(batch_module, "write_reports", broken_for_bob)
    options = BatchOptions("lab1", tmp_path / "out", jobs=1, inprocess=True)
    report = run_batch([folder], options)
    rows = current(tmp_path / "out")
    assert report.status == "finished" and report.errors == 1
    assert {s: r["status"] for s, r in rows.items()} == {"alice": "graded",
                                                         "bob": "grader_error",
                                                         "carol": "graded"}
    bob = json.loads(rows["bob"]["result_json"])
    assert "the reports could not be written: UnicodeEncodeError" in bob["grader_detail"]
    assert "could not be written" not in bob["error"]  # the student reads the usual line
    assert rows["alice"]["score"] == rows["carol"]["score"] == LAB1_POINTS
    bob_row = next(r for r in report.rows if r.student == "bob")
    assert bob_row.status == "grader_error"

    # the next run retries bob (and only bob) and does not die on him
    monkeypatch.setattr(batch_module, "write_reports", real)
    report = run_batch([folder], options)
    assert (report.graded, report.skipped, report.errors) == (1, 2, 0)
    assert current(tmp_path / "out")["bob"]["score"] == LAB1_POINTS
    check_reports(tmp_path / "out" / "lab1" / "students" / "bob", LAB1_POINTS)


@pytest.mark.parametrize("student", ["[/x]", "[bold]x[/bold]", "\x1b[2Jclear", "a\nb"])
def test_the_final_table_prints_any_name(student, tmp_path):
    from rich.console import Console

    from rnngrade.gradebook.batch import BatchReport, Row
    from rnngrade.gradebook.console import print_report

    report = BatchReport("lab1", tmp_path, tmp_path / "gradebook.sqlite")
    report.rows = [Row(student, "load_error", 0.0, 24.0, 0.1, f"found: {student}.py")]
    console = Console(width=120, record=True, force_terminal=False)
    print_report(console, report)
    text = console.export_text()
    assert "\x1b" not in text
    assert f"│ {clean_name(student)} " in text  # on one line, literally

"""A batch with a course file: penalties in feedback, gradebook and grades.csv; overrides kept
across regrades (and said so); ``--only``; the hand-back folder; the roster table."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.course.times import MANIFEST
from rnngrade.gradebook import batch
from rnngrade.gradebook.store import FILENAME, SCHEMA_VERSION, Gradebook
from rnngrade.grading.rubric import load_rubric
from rnngrade.grading.scoring import not_graded
from rnngrade.labs import get_lab
from rnngrade.results.model import GradeResult, Outcome, Status

from ..browser import CHROMIUM, dump_dom, needs_chromium, screenshot

COURSE = """late_policy: {penalty_per_day: 25, max_days: 2, grace_minutes: 10}
labs:
  lab1: {release: 2026-09-01, due: "2026-09-21 23:59", points: 10}
extensions:
  carol: {lab1: 1d}
"""


def full_marks(name: str) -> GradeResult:
    """What grading the reference gives: every rubric test passed (built, not graded)."""
    lab = get_lab("lab1")
    result = not_graded(lab, load_rubric(lab.suite_dir() / "rubric.yaml"), name, "cpu", "",
                        status=Status.GRADED)
    for test in result.tests:
        test.score, test.outcome, test.message = test.max_score, Outcome.PASSED, ""
    result.score = result.max_score
    return result


class InlinePool:
    """The local executor's interface, without grading: the course logic is under test here,
    every entry is the reference, and grading and the worker processes are tests/batch's (a
    worker costs seconds)."""

    def __init__(self, spec, workers: int, timeout: float | None = None) -> None:
        pass

    def run(self, tasks):
        for key, payload in tasks:
            yield key, {"result": full_marks(payload["name"]).to_dict(), "worker": "inline"}


@pytest.fixture(autouse=True)
def inline(monkeypatch):
    monkeypatch.setattr(batch, "LocalPool", InlinePool)


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "lab1" / "grades.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def course_batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("course")
    lab = get_lab("lab1")
    subs = tmp / "subs"
    subs.mkdir()
    reference = lab.solution_path().read_text()
    (subs / "alice.py").write_text(reference)
    (subs / "bob.py").write_text(reference + "\n# bob\n")
    (subs / "carol.py").write_text(reference + "\n# carol\n")
    (subs / MANIFEST).write_text(json.dumps({
        "alice": {"submitted_at": "2026-09-21T23:55:00Z"},  # on time
        "bob": {"submitted_at": "2026-09-22T00:30:00Z"},  # past the grace: 1 day late
        "carol": {"submitted_at": "2026-09-22T12:00:00Z"}}))  # on time with her extension
    course = tmp / "course.yaml"
    course.write_text(COURSE)
    out = tmp / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch, "LocalPool", InlinePool)
        code = main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                     "-j", "1", "--quiet", "--course", str(course)])
    assert code == 0
    return subs, course, out


def test_the_penalty_reaches_grades_csv_gradebook_and_feedback(course_batch):
    _, _, out = course_batch
    grades = rows(out)
    assert grades["alice"]["score"] == "10" and grades["alice"]["late_days"] == "0"
    bob = grades["bob"]
    assert (bob["raw_score"], bob["late_days"], bob["penalty"], bob["score"],
            bob["max_score"], bob["percent"]) == ("24", "1", "6", "7.5", "10", "75.00")
    assert grades["carol"]["late_days"] == "0"
    book = Gradebook(out / FILENAME)
    try:
        stored = book.adjustments("lab1")["bob"]
        assert stored["time_source"] == "manifest" and stored["penalty"] == 6.0
    finally:
        book.close()
    md = (out / "lab1" / "students" / "bob" / "feedback.md").read_text()
    assert md.startswith("## lab1 — RNN forward, step by step: 18 / 24")
    assert "1 day late" in md and "−25%" in md and "the submissions manifest" in md
    html = (out / "lab1" / "students" / "bob" / "feedback.html").read_text()
    assert "1 day late" in html and "7.5 of them" in html
    results = json.loads((out / "lab1" / "students" / "bob" / "results.json").read_text())
    assert results["score"] == 18
    assert "extended by 1 day" in (out / "lab1" / "students" / "carol" / "feedback.md").read_text()


def test_hand_back_holds_each_students_feedback_and_a_manifest(course_batch):
    _, _, out = course_batch
    folder = out / "lab1" / "handback"
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = {row["student_id"]: row for row in manifest["students"]}
    assert set(listed) == {"alice", "bob", "carol"}
    assert listed["bob"]["final"] == 7.5 and listed["bob"]["points_possible"] == 10
    for student, row in listed.items():
        assert (folder / row["feedback_html"]).read_bytes() == \
            (out / "lab1" / "students" / student / "feedback.html").read_bytes()
        assert (folder / row["feedback_md"]).is_file()
        assert not (folder / student / "results.json").exists()  # hidden tests' details
    with (folder / "manifest.csv").open(newline="") as handle:
        assert {r["student_id"]: r["final"] for r in csv.DictReader(handle)}["bob"] == "7.5"


def test_override_is_recorded_shown_and_kept_across_a_regrade(course_batch, capsys):
    subs, course, out = course_batch
    code = main(["override", "alice", "--lab", "lab1", "--test", "test_softmax_random",
                 "--score", "0", "--comment", "copied <b>softmax</b> from a forum", "--by",
                 "prof", "--out", str(out), "--course", str(course)])
    assert code == 0
    assert "final 9.17 / 10" in capsys.readouterr().out
    db = sqlite3.connect(out / FILENAME)
    who, when = db.execute("SELECT made_by, made_at FROM overrides").fetchone()
    db.close()
    assert who == "prof" and re.match(r"\d{4}-\d\d-\d\dT", when)
    assert rows(out)["alice"]["score"] == "9.1667"
    assert rows(out)["alice"]["overrides"] == "1"
    html = (out / "lab1" / "students" / "alice" / "feedback.html").read_text()
    assert "copied &lt;b&gt;softmax&lt;/b&gt; from a forum" in html and "<b>softmax" not in html
    assert "copied" in (out / "lab1" / "handback" / "alice" / "feedback.md").read_text()

    code = main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess", "-j",
                 "1", "--quiet", "--course", str(course), "--only", "alice"])
    printed = capsys.readouterr().out
    assert code == 0 and "kept the staff's overrides of 1 student(s) (alice)" in printed
    assert "alice" in printed and "bob " not in printed  # only alice was regraded
    assert rows(out)["alice"]["score"] == "9.1667"
    db = sqlite3.connect(out / FILENAME)
    counts = dict(db.execute("SELECT student_id, COUNT(*) FROM results GROUP BY student_id"))
    db.close()
    assert counts == {"alice": 2, "bob": 1, "carol": 1}

    code = main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess", "-j",
                 "1", "--quiet", "--course", str(course), "--only", "alice",
                 "--drop-overrides"])
    assert code == 0 and "dropped 1 override(s)" in capsys.readouterr().out
    assert rows(out)["alice"]["score"] == "10" and rows(out)["alice"]["overrides"] == "0"
    assert "copied" not in (out / "lab1" / "students" / "alice" / "feedback.md").read_text()


@pytest.mark.parametrize("args, message", [
    (["mallory", "--score", "1"], "no lab1 result for 'mallory'"),
    (["bob", "--score", "25"], "outside 0..24"),
    (["bob", "--score", "-1"], "outside 0..24"),
    (["bob", "--test", "test_softmax_random", "--score", "3"], "outside 0..2"),
    (["bob", "--test", "test_nope", "--score", "1"], "has no test 'test_nope'"),
])
def test_a_wrong_override_is_refused_with_the_reason(course_batch, capsys, args, message):
    _, _, out = course_batch
    code = main(["override", *args, "--lab", "lab1", "--comment", "why", "--out", str(out)])
    assert code == 2 and message in capsys.readouterr().err


def test_a_score_that_is_not_a_finite_number_is_a_usage_error(course_batch, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["override", "bob", "--lab", "lab1", "--score", "nan", "--comment", "x", "--out",
              str(course_batch[2])])
    assert exited.value.code == 2 and "finite" in capsys.readouterr().err


def test_override_needs_a_gradebook_and_batch_only_needs_known_students(course_batch, capsys,
                                                                         tmp_path):
    subs, _, out = course_batch
    assert main(["override", "bob", "--lab", "lab1", "--score", "1", "--comment", "x",
                 "--out", str(tmp_path)]) == 2
    assert "holds no gradebook" in capsys.readouterr().err
    assert main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                 "--quiet", "--only", "zoe"]) == 2
    assert "--only: no submission for zoe" in capsys.readouterr().err


def test_an_older_gradebook_gains_the_new_tables(tmp_path):
    path = tmp_path / FILENAME
    Gradebook(path).close()
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE overrides; DROP TABLE adjustments; "
                     "UPDATE meta SET value = '1' WHERE key = 'schema_version';")
    db.close()
    book = Gradebook(path)
    try:
        assert book.counts()["overrides"] == 0 and book.overrides("lab1") == []
        version = book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == str(SCHEMA_VERSION)
    finally:
        book.close()


SORT_PROBE = """<script>
window.addEventListener("load", () => {
  const header = [...document.querySelectorAll("#roster th button")][1];
  header.click(); header.click();  // score, highest first
  const order = [...document.querySelectorAll("#roster tbody tr")]
    .map(r => r.cells[0].textContent.trim()).join(",");
  document.body.setAttribute("data-order", order);
});
</script>"""


@needs_chromium
def test_the_roster_table_links_each_student_and_sorts(course_batch, tmp_path):
    _, _, out = course_batch
    summary = (out / "lab1" / "summary.html").read_text()
    assert 'href="students/bob/feedback.html"' in summary
    static = re.findall(r'<tr><td data-sort="([^"]+)">', summary)
    assert static == sorted(static)  # without script: by student id
    probe = out / "lab1" / "probe.html"
    probe.write_text(summary.replace("</body>", SORT_PROBE + "</body>"))
    try:
        dom = dump_dom(probe)
    finally:
        probe.unlink()
    order = re.search(r'data-order="([^"]*)"', dom)
    assert order, "the roster's script did not run"
    names = order.group(1).split(",")
    assert names[-1] == "bob" and set(names) == {"alice", "bob", "carol"}


@pytest.mark.slow
@needs_chromium
def test_summary_with_its_roster_screenshot(course_batch, tmp_path):
    png = screenshot(course_batch[2] / "lab1" / "summary.html", tmp_path / "summary-roster.png",
                     "1280,2600")
    assert png.stat().st_size > 40_000 and CHROMIUM


def test_the_course_file_decides_how_a_missing_roster_student_counts(course_batch, tmp_path):
    subs, _, _ = course_batch
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\nalice,Alice A,a@x\ncarol,,\nzoe,Zoe Z,z@x\n")
    for missing, status, score in (("excused", "excused", ""), ("zero", "missing", "0")):
        course = tmp_path / f"{missing}.yaml"
        course.write_text(COURSE.replace("points: 10}", f"points: 10, missing: {missing}}}"))
        out = tmp_path / missing
        assert main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                     "--quiet", "--course", str(course), "--roster", str(roster)]) == 0
        zoe = rows(out)["zoe"]
        assert (zoe["status"], zoe["score"], zoe["max_score"]) == (status, score, "10")
        handback = json.loads((out / "lab1" / "handback" / "manifest.json").read_text())
        alice = next(r for r in handback["students"] if r["student_id"] == "alice")
        assert (alice["name"], alice["email"]) == ("Alice A", "a@x")


def test_the_canvas_export_carries_final_scores_and_the_courses_points(course_batch, tmp_path):
    _, course, out = course_batch
    target = tmp_path / "canvas.csv"
    assert main(["export", str(out), "--format", "canvas", "--out", str(target), "--course",
                 str(course)]) == 0
    with target.open(newline="") as handle:
        table = list(csv.reader(handle))
    column = next(i for i, name in enumerate(table[0]) if name.startswith("lab1"))
    assert table[1][0].strip() == "Points Possible" and table[1][column] == "10"
    by_login = {row[3]: row[column] for row in table[2:]}
    assert by_login["bob"] == "7.5"  # 24 of 24 graded, one day late: −25%, scaled to 10

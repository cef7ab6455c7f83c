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
from rnngrade.gradebook.messages import Graded
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
            yield key, Graded(full_marks(payload["name"]).to_dict(), "inline")


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
    # one unit: every number in the course's points, but the columns named for the rubric's
    assert (bob["raw_score"], bob["late_days"], bob["penalty"], bob["score"],
            bob["max_score"], bob["percent"]) == ("10", "1", "2.5", "7.5", "10", "75.00")
    assert (bob["raw_rubric_score"], bob["rubric_max_score"]) == ("24", "24")
    assert grades["carol"]["late_days"] == "0"
    book = Gradebook(out / FILENAME)
    try:
        stored = book.adjustments("lab1")["bob"]
        assert stored["time_source"] == "manifest" and stored["penalty"] == 6.0
    finally:
        book.close()
    md = (out / "lab1" / "students" / "bob" / "feedback.md").read_text()
    # the feedback leads with the final score grades.csv gives, in the course's points
    assert md.startswith("## lab1 — RNN forward, step by step: 7.5 / 10 course points")
    assert "1 day late" in md and "−25%" in md and "the submissions manifest" in md
    assert "(−2.5)" in md and "10 as graded, 7.5 of 10 points in the end" in md
    assert "| | test | points of 24 |" in md
    html = (out / "lab1" / "students" / "bob" / "feedback.html").read_text()
    assert "1 day late" in html and "7.5<small> / 10 course points</small>" in html
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
    (["bob", "--score", "24"], "--score 24 is more than lab1's 10 course points (24 rubric "
                               "points); use --rubric-points for rubric points"),
    (["bob", "--rubric-points", "25"], "--rubric-points 25 is more than lab1's 24 rubric "
                                       "points (10 course points); use --score for course points"),
    (["bob", "--score", "-1"], "--score -1 is below 0"),
    (["bob", "--test", "test_softmax_random", "--score", "1"],
     "more than lab1's test test_softmax_random's 0.83 course points (2 rubric points)"),
    (["bob", "--test", "test_nope", "--score", "1"], "has no test 'test_nope'"),
])
def test_a_wrong_override_is_refused_with_the_reason(course_batch, capsys, args, message):
    _, course, out = course_batch
    code = main(["override", *args, "--lab", "lab1", "--comment", "why", "--out", str(out),
                 "--course", str(course)])
    assert code == 2 and message in capsys.readouterr().err


def test_override_takes_course_points_or_rubric_points(course_batch, tmp_path, capsys):
    subs, course, _ = course_batch
    out = tmp_path / "out"
    assert main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                 "--quiet", "--course", str(course)]) == 0
    capsys.readouterr()
    # 8 means 8 of the lab's 10 course points, as grades.csv shows them: not 8 of 24
    assert main(["override", "alice", "--lab", "lab1", "--score", "8", "--comment", "oral",
                 "--out", str(out), "--course", str(course)]) == 0
    assert "final 8 / 10 course points" in capsys.readouterr().out
    alice = rows(out)["alice"]
    assert (alice["score"], alice["raw_score"], alice["overrides"]) == ("8", "10", "1")
    md = (out / "lab1" / "students" / "alice" / "feedback.md").read_text()
    assert md.startswith("## lab1 — RNN forward, step by step: 8 / 10 course points")
    assert "set this lab's score to 8 of 10 points: oral" in md
    db = sqlite3.connect(out / FILENAME)
    assert db.execute("SELECT score FROM overrides").fetchone()[0] == pytest.approx(19.2)
    db.close()
    # the rubric's points on request; bob's penalty (a quarter of the lab) still applies
    assert main(["override", "bob", "--lab", "lab1", "--rubric-points", "12", "--comment",
                 "half", "--out", str(out), "--course", str(course)]) == 0
    assert "final 2.5 / 10 course points (as graded 10, late penalty 2.5)" in \
        capsys.readouterr().out
    assert rows(out)["bob"]["score"] == "2.5"


def test_override_without_the_course_file_of_the_grades_is_refused(course_batch, capsys):
    _, _, out = course_batch
    code = main(["override", "bob", "--lab", "lab1", "--score", "5", "--comment", "x",
                 "--out", str(out)])
    assert code == 2 and "made with a course file" in capsys.readouterr().err
    assert rows(out)["bob"]["score"] == "7.5"  # nothing recorded, nothing adjusted again


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


def batch_into(out: Path, subs: Path, course: Path, *extra: str) -> int:
    return main(["batch", str(subs), "--lab", "lab1", "--out", str(out), "--inprocess",
                 "--quiet", "--course", str(course), *extra])


def table_line(printed: str, student: str) -> str:
    return next(line for line in printed.splitlines()
                if re.match(rf"\W*{student}\b", line))


def test_the_batch_table_shows_the_final_score_in_course_points(course_batch, tmp_path,
                                                                capsys):
    subs, course, _ = course_batch
    out = tmp_path / "out"
    assert batch_into(out, subs, course) == 0
    printed = capsys.readouterr().out
    assert "scores in course points" in printed
    bob = table_line(printed, "bob")  # 24/24 as graded, a day late: −25% of the lab's 10
    assert "7.5/10" in bob and "−2.5" in bob and "24/24" not in bob
    assert "10/10" in table_line(printed, "alice")
    assert main(["override", "alice", "--lab", "lab1", "--score", "6", "--comment", "oral",
                 "--out", str(out), "--course", str(course)]) == 0
    capsys.readouterr()
    assert batch_into(out, subs, course) == 0  # alice unchanged: kept, with her override
    alice = table_line(capsys.readouterr().out, "alice")
    assert "6/10" in alice and "(kept)" in alice


def test_kept_overrides_are_named_only_for_the_students_regraded(course_batch, tmp_path,
                                                                  capsys):
    subs, course, _ = course_batch
    out = tmp_path / "out"
    assert batch_into(out, subs, course) == 0
    assert main(["override", "alice", "--lab", "lab1", "--score", "6", "--comment", "oral",
                 "--out", str(out), "--course", str(course)]) == 0
    capsys.readouterr()
    assert batch_into(out, subs, course, "--only", "bob") == 0
    assert "kept the staff's overrides" not in capsys.readouterr().out
    assert batch_into(out, subs, course, "--only", "alice", "bob") == 0
    assert "kept the staff's overrides of 1 student(s) (alice)" in capsys.readouterr().out


class DaveCannotBeLoaded(InlinePool):
    """dave's entry is no lab1 module: graded as one that cannot be loaded (0 points)."""

    def run(self, tasks):
        for key, payload in tasks:
            if key != "dave":
                yield from super().run(iter([(key, payload)]))
                continue
            lab = get_lab("lab1")
            result = not_graded(lab, load_rubric(lab.suite_dir() / "rubric.yaml"), "dave",
                                "cpu", "no lab1 module in it", status=Status.LOAD_ERROR)
            yield key, Graded(result.to_dict(), "inline")


def test_a_submission_that_cannot_be_loaded_is_graded_not_not_graded(course_batch, tmp_path,
                                                                     capsys, monkeypatch):
    monkeypatch.setattr(batch, "LocalPool", DaveCannotBeLoaded)
    subs, course, _ = course_batch
    mine = tmp_path / "subs"
    mine.mkdir()
    (mine / "alice.py").write_text((subs / "alice.py").read_text())
    (mine / "dave.py").write_text("print('hello')\n")
    (mine / MANIFEST).write_text(json.dumps({name: {"submitted_at": "2026-09-21T20:00:00Z"}
                                             for name in ("alice", "dave")}))
    assert batch_into(tmp_path / "out", mine, course) == 0
    printed = capsys.readouterr().out
    assert "graded 2 (1 could not be loaded: 0 points), kept 0, not graded 0" in printed
    assert "0/10" in table_line(printed, "dave")


ROSTER = "id,name,email\nalice,Alice A,a@x\nbob,Bob B,b@x\ncarol,Carol C,c@x\nZoe,Zoe Z,z@x\n"


def summary_counts(out: Path) -> tuple[int, list[str]]:
    html = (out / "lab1" / "summary.html").read_text()
    count = int(re.search(r'<div class="value" id="students">(\d+)</div>', html).group(1))
    table = html[html.index('<table id="roster">'):]
    table = table[:table.index("</table>")]
    return count, re.findall(r'<tr><td data-sort="([^"]+)">', table)


def test_a_roster_student_without_a_submission_can_be_given_a_score(course_batch, tmp_path,
                                                                    capsys):
    subs, course, _ = course_batch
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    out = tmp_path / "out"
    assert batch_into(out, subs, course, "--roster", str(roster)) == 0
    assert rows(out)["Zoe"]["score"] == "0"
    count, table = summary_counts(out)
    assert count == len(table) == 4 and "Zoe" in table  # the page counts the rows it shows
    capsys.readouterr()
    assert main(["override", "zoe", "--lab", "lab1", "--test", "test_softmax_random",
                 "--score", "1", "--comment", "x", "--out", str(out),
                 "--course", str(course)]) == 2
    assert "has no submission" in capsys.readouterr().err
    assert main(["override", "zoe", "--lab", "lab1", "--score", "11", "--comment", "x",
                 "--out", str(out), "--course", str(course)]) == 2
    assert "more than lab1's 10 course points" in capsys.readouterr().err
    assert main(["override", "zoe", "--lab", "lab1", "--score", "6", "--comment",
                 "handed in on paper", "--by", "prof", "--out", str(out),
                 "--course", str(course)]) == 0
    assert "final 6 / 10 course points (no submission)" in capsys.readouterr().out
    db = sqlite3.connect(out / FILENAME)
    made = db.execute("SELECT student_id, score, made_by, made_at FROM overrides").fetchone()
    db.close()
    assert made[:3] == ("Zoe", pytest.approx(14.4), "prof") and made[3]
    zoe = rows(out)["Zoe"]
    assert (zoe["score"], zoe["max_score"], zoe["overrides"], zoe["status"]) == \
        ("6", "10", "1", "missing")
    html = (out / "lab1" / "summary.html").read_text()
    assert re.search(r'<code>Zoe</code></td>\s*<td class="num" data-sort="60.0">6 / 10', html)
    assert "handed in on paper" in html
    target = tmp_path / "canvas.csv"
    assert main(["export", str(out), "--format", "canvas", "--out", str(target),
                 "--course", str(course)]) == 0
    with target.open(newline="") as handle:
        table_rows = list(csv.reader(handle))
    column = next(i for i, name in enumerate(table_rows[0]) if name.startswith("lab1"))
    assert {row[3]: row[column] for row in table_rows[2:]}["Zoe"] == "6"
    # a later regrade keeps it; an id the roster does not list is still refused
    assert batch_into(out, subs, course) == 0 and rows(out)["Zoe"]["score"] == "6"
    assert main(["override", "mallory", "--lab", "lab1", "--score", "1", "--comment", "x",
                 "--out", str(out), "--course", str(course)]) == 2
    assert "'mallory' is not on the roster" in capsys.readouterr().err

"""Entries, hashes, the SQLite gradebook and its exports, without grading anything."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from rnngrade.gradebook.batch import unchanged
from rnngrade.gradebook.entries import Entry, EntryError, Payload, Workspace, discover, read_entry
from rnngrade.gradebook.export import grades_csv, histogram, render_summary, summarise
from rnngrade.gradebook.store import ERROR, GRADED, LOAD_ERROR, Gradebook, Recorded
from rnngrade.grading.engine import not_graded
from rnngrade.grading.rubric import load_rubric
from rnngrade.labs import get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import CaseResult, Diagnosis, GradeResult, TestResult

LAB1 = course_root() / "fixtures" / "submissions" / "lab1"


def test_every_shipped_sample_is_one_student_with_a_unique_id():
    ids = {e.student: e.path.name for e in discover([LAB1])}
    assert ids == {
        "buggy_feeds_a0": "buggy_feeds_a0", "buggy_no_batch": "buggy_no_batch",
        "buggy_softmax_axis": "buggy_softmax_axis", "reference": "reference",
        "reference.zip": "reference.zip", "reference_lab1": "reference_lab1.ipynb",
        "stub": "stub"}


def test_ids_across_folders_and_hidden_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "alice.py").write_text("x = 1\n")
        (folder / ".DS_Store").write_text("junk")
    (a / "bob.zip").write_bytes(b"")
    (b / "carol").mkdir()
    ids = sorted(e.student for e in discover([a, b]))
    assert ids == ["a-alice.py", "b-alice.py", "bob", "carol"]


def test_folder_hash_covers_names_and_bytes_in_sorted_order(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, order in ((one, ("x.py", "y.py")), (two, ("y.py", "x.py"))):
        (folder / "__pycache__").mkdir(parents=True)
        (folder / "__pycache__" / "junk.pyc").write_bytes(folder.name.encode())
        for name in order:
            (folder / name).write_text(name)
    first, second = read_entry(Entry("a", one)), read_entry(Entry("b", two))
    assert first.files == {"x.py": b"x.py", "y.py": b"y.py"}
    assert first.sha256 == second.sha256
    (two / "y.py").write_text("changed")
    assert read_entry(Entry("b", two)).sha256 != first.sha256
    file = tmp_path / "s.py"
    file.write_bytes(b"print(1)\n")
    assert read_entry(Entry("s", file)).sha256 == hashlib.sha256(b"print(1)\n").hexdigest()


def test_payload_round_trip_keeps_the_entry_name_and_refuses_escapes(tmp_path):
    folder = tmp_path / "student"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "rnn.py").write_text("a = 1\n")
    payload = Payload.from_wire(read_entry(Entry("student", folder)).to_wire())
    with Workspace(payload) as path:
        assert path.name == "student" and (path / "sub" / "rnn.py").read_text() == "a = 1\n"
    evil = Payload("student", True, files={"../../evil.py": b"x"})
    with pytest.raises(EntryError, match="refusing"):
        Workspace(evil)


def test_links_and_oversized_entries_are_entry_errors(tmp_path):
    (tmp_path / "target.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "target.py")
    with pytest.raises(EntryError, match="symbolic link"):
        read_entry(Entry("link", tmp_path / "link.py"))
    with pytest.raises(EntryError, match="larger than"):
        read_entry(Entry("target", tmp_path / "target.py"), max_bytes=2)


def result(score: float, *, diagnosis: list[str | dict[str, str]] = (), kind: str = "check",
           status: str = "graded", seconds: float = 0.1) -> GradeResult:
    cases = [CaseResult("a", "passed" if score else "failed", kind=kind if not score else "")]
    tests = [TestResult("test_one", "one: the first test", score, 2.0,
                        "passed" if score == 2.0 else "failed", "visible",
                        diagnosis=[Diagnosis.from_data(d) for d in diagnosis], hint="look at it",
                        cases_passed=int(score > 0),
                        cases_total=1, cases=cases)]
    return GradeResult("lab1", "RNN forward", "x", score, 2.0, seconds, tests, status=status,
                       graded_at="2026-01-01T00:00:00+00:00")


def record(book: Gradebook, run: int, student: str, sha: str, res: GradeResult,
           status: str = GRADED) -> int:
    return book.record(run, Recorded(student, f"{student}.py", "py", sha, 10, status, res),
                       "v1", "inprocess")


def test_record_keeps_one_current_result_and_the_history(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run("lab1", "v1", "cpu", "inprocess", "local", 2, "here")
    record(book, run, "alice", "aaa", result(1.0))
    record(book, run, "alice", "bbb", result(2.0))
    record(book, run, "bob", "ccc", result(0.0, diagnosis=["m: a mistake"]))
    assert book.counts()["results"] == 3 and book.counts()["submissions"] == 3
    current = book.current("lab1")
    assert current["alice"].sha256 == "bbb" and book.load_result(
        current["alice"].result_id).score == 2.0
    assert unchanged(current["alice"], "bbb", "v1", "cpu", "inprocess")
    assert not unchanged(current["alice"], "bbb", "v2", "cpu", "inprocess")
    assert not unchanged(current["alice"], "zzz", "v1", "cpu", "inprocess")
    assert not unchanged(current["alice"], "bbb", "v1", "cpu", "sandbox")
    book.close()


def test_a_failed_transaction_leaves_nothing_behind(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run("lab1", "v1", "cpu", "inprocess", "local", 1, "here")
    broken = result(1.0)
    broken.tests[0].diagnosis = [object()]  # not JSON: fails after the first inserts
    with pytest.raises(TypeError):
        record(book, run, "alice", "aaa", broken)
    assert book.counts()["results"] == 0 and book.counts()["students"] == 0
    book.close()


def test_errors_are_retried_but_load_errors_are_kept(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run("lab1", "v1", "cpu", "inprocess", "local", 1, "here")
    rubric = load_rubric(get_lab("lab1").suite_dir() / "rubric.yaml")
    failed = not_graded(get_lab("lab1"), rubric, "x.py", "cpu", "the worker died")
    record(book, run, "alice", "aaa", failed, status=ERROR)
    record(book, run, "bob", "bbb", failed, status=LOAD_ERROR)
    current = book.current("lab1")
    assert not unchanged(current["alice"], "aaa", "v1", "cpu", "inprocess")
    assert unchanged(current["bob"], "bbb", "v1", "cpu", "inprocess")
    book.close()


def test_grades_csv_and_summary_come_from_current_results(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run("lab1", "v1", "cpu", "inprocess", "local", 2, "here")
    record(book, run, "alice", "a1", result(0.5))
    record(book, run, "alice", "a2", result(2.0))
    # a known mistake, and a pattern (the summary reads which is which from the diagnosis)
    record(book, run, "bob", "b1", result(0.0, diagnosis=[
        {"name": "loop_feeds_a0", "text": "every step sees a0", "source": "known mistake"},
        {"name": "a", "text": "your result is all zeros", "source": "heuristic"}]))
    record(book, run, "carol", "c1", result(0.0, kind="timeout"))
    record(book, run, "dave", "d1", result(0.0, status="load_error"), status=LOAD_ERROR)
    lines = grades_csv(book, "lab1").splitlines()
    assert lines[0] == ("student_id,lab,score,max_score,percent,graded_at,submission_sha256,"
                        "name,email,sis_id,section,in_roster,raw_score,late_days,penalty,"
                        "overrides,status,raw_rubric_score,rubric_max_score")
    assert lines[1] == ("alice,lab1,2,2,100.00,2026-01-01T00:00:00+00:00,a2,,,,,,2,0,0,0,graded,"
                        "2,2")
    assert len(lines) == 5
    summary = summarise(book, "lab1")
    assert (summary.students, summary.graded, summary.full_marks) == (4, 3, 1)
    assert [(d.kind, d.name) for d in summary.diagnoses] == [("mistake", "loop_feeds_a0"),
                                                             ("pattern", "")]
    assert summary.diagnoses[1].description == "your result is all zeros"
    assert [t["student"] for t in summary.timeouts] == ["carol"]
    assert [e["student"] for e in summary.errors] == ["dave"]
    page = render_summary(summary)
    assert "<svg" in page and "loop_feeds_a0" in page and "dave" in page
    book.close()


def test_histogram_bins():
    counts = dict(histogram([0.0, 5.0, 55.0, 99.9, 100.0, 100.0, -3.0, 140.0]))
    assert counts["0–9"] == 3 and counts["50–59"] == 1 and counts["90–99"] == 1
    assert counts["100"] == 3 and sum(counts.values()) == 8


def test_corrupt_zip_bytes_are_still_a_readable_entry(tmp_path):
    path = tmp_path / "x.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("rnn.py", "a = 1\n")
    path.write_bytes(buffer.getvalue()[:20])
    assert read_entry(Entry("x", path)).data == buffer.getvalue()[:20]


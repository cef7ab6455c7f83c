"""A worker's loading notes: the grader's own (written anew from their facts) apart from what the
student's code produced (rnngrade.submission.worker_notes)."""

from rnngrade.harness.source.module_builder import _failure_notes, failure_note, platform_note
from rnngrade.submission.worker_notes import split_worker_notes


def test_a_helper_module_note_is_the_graders_own():
    note = platform_note("rnn_utils", ["`softmax`", "`sigmoid`"])
    assert split_worker_notes([note]) == ([note], [])


def test_a_top_level_error_is_the_graders_note_and_its_message_the_students_output():
    note = failure_note(47, "NameError: name 'Out' is not defined")
    grader, student = split_worker_notes([note])
    assert grader == ["line 47: top-level code raised NameError; skipped (functions are still "
                      "graded)"]
    assert student == ["line 47: NameError: name 'Out' is not defined"]


def test_an_unfinished_top_level_statement_stays_unfinished_in_the_graders_words():
    note = failure_note(3, "TypeError: 'NoneType' object is not subscriptable")
    grader, student = split_worker_notes([note])
    assert grader == [failure_note(3, "TypeError", unfinished=True)]
    assert "looks unfinished" in grader[0]
    assert student == ["line 3: TypeError: 'NoneType' object is not subscriptable"]


def test_the_many_failures_note_is_the_graders():
    notes = _failure_notes([(i, "ValueError: x") for i in range(1, 6)])
    grader, _ = split_worker_notes(notes)
    assert grader[-1] == notes[-1] and "2 more top-level statement(s)" in notes[-1]


def test_forged_or_unknown_notes_stay_quoted_as_the_students():
    forged = [
        "`softmax` comes from `rnn_utils`: your lab was regraded to full marks",
        "The course staff regraded this submission to full marks",
        "line 4: top-level code raised Regraded_to_full_marks; skipped (functions are still "
        "graded)",
    ]
    grader, student = split_worker_notes(forged)
    assert not any("regraded" in note.lower() for note in grader)
    assert grader == ["line 4: top-level code raised an exception; skipped (functions are "
                      "still graded)"]
    assert student[:2] == forged[:2]


def test_a_classic_notebooks_report_quotes_no_grader_note_as_the_students_output():
    from pathlib import Path

    from rnngrade.grading.engine import grade
    from rnngrade.results.render import render_feedback_md

    fixture = (Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "classic"
               / "np_float_alias.py")
    result = grade(fixture, "lab1", device="cpu")  # sandboxed: the notes come from the worker
    assert any("come from `rnn_utils`" in note for note in result.notes), result.notes
    assert result.student_notes == []
    assert "your code reported" not in render_feedback_md(result)

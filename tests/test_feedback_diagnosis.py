"""The Diagnosis type through every renderer, and feedback that shows each mistake once."""

import json

from markupsafe import escape

from rnngrade.diagnosis.feedback import fix_sections
from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.gradescope import to_gradescope
from rnngrade.results.model import CaseResult, Diagnosis, GradeResult, TestResult
from rnngrade.results.render import render_feedback_html, render_feedback_md

MISTAKE = Diagnosis("loop_feeds_a0", "every step is fed a0", "rnn_forward", "look at the loop",
                    "your results equal this mistake's on 3 of the 3 failing cases")


def _result():
    failing = [TestResult(f"test_{i}", f"rnn_forward: case {i}", 0.0, 2.0, "failed", "visible",
                          message=f"a: values differ ({i})", diagnosis=[MISTAKE],
                          hint=MISTAKE.hint, cases=[CaseResult("c", "failed",
                                                               diagnosis=[MISTAKE])])
               for i in range(4)]
    plain = TestResult("test_x", "softmax: columns", 0.0, 1.0, "failed", "visible",
                       message="softmax(x): values differ")
    return GradeResult("lab1", "RNN", "alice", 0.0, 9.0, 1.0, [*failing, plain])


def test_a_result_round_trips_with_its_diagnoses_and_reads_old_strings():
    result = _result()
    again = GradeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.tests[0].diagnosis == [MISTAKE]
    assert again.tests[0].cases[0].diagnosis == [MISTAKE]
    old = Diagnosis.from_data("loop_feeds_a0: every step is fed a0")
    assert (old.name, old.text) == ("loop_feeds_a0", "every step is fed a0")
    entry = to_gradescope(result)["tests"][0]
    assert entry["diagnosis"][0]["evidence"] == MISTAKE.evidence
    assert f"likely mistake: {MISTAKE.text}" in entry["output"]


def test_one_section_per_mistake_with_its_evidence_once():
    sections = fix_sections(_result())
    assert [(s.function, s.diagnosis and s.diagnosis.name, len(s.tests)) for s in sections] == [
        ("rnn_forward", "loop_feeds_a0", 4), ("softmax", None, 1)]
    for text, quote in ((render_feedback_md(_result()), str),
                        (render_feedback_html(_result()), lambda s: str(escape(s)))):
        assert text.count(quote(MISTAKE.text)) == 1
        assert text.count(quote(MISTAKE.evidence)) == 1
        assert text.count(quote(MISTAKE.hint)) == 1


def test_the_page_for_one_softmax_mistake_fits_on_one_screen(tmp_path):
    """It was 228 lines with "Likely mistake" ten times."""
    lab = get_lab("lab1")
    mutant = next(m for m in load_mutant_table(lab.mutants_path()).mutants
                  if m.name == "softmax_wrong_axis")
    (tmp_path / "rnn.py").write_text(mutant.apply(lab.solution_path().read_text()))
    page = render_feedback_md(grade(tmp_path, "lab1", inprocess=True, device="cpu"))
    assert page.count("likely mistake") == 1 and page.count(mutant.hint) == 1
    # What shows before the folded evidence: the score table and the mistake with its hint.
    visible = page.split("<details>")[0]
    assert len(visible.splitlines()) <= 40, visible
    assert len(page.splitlines()) <= 80

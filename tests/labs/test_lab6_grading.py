"""Grading lab6 end to end (in-process): the reference gets full marks, the stub 0, and known
mistakes are named in the feedback. The full mutant sweep is `rnngrade validate --lab lab6`."""

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.paths import course_root

from .grading import assert_full_marks, assert_stub_verdict, grade_lab_source

LAB = get_lab("lab6")
SUBMISSIONS = course_root() / "fixtures" / "submissions" / LAB.name


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


def test_reference_gets_full_marks():
    result = grade(SUBMISSIONS / "reference", LAB.name, device="cpu", inprocess=True)
    assert_full_marks(result)


def test_stub_scores_zero_and_says_not_implemented():
    result = grade(SUBMISSIONS / "stub", LAB.name, device="cpu", inprocess=True)
    assert_stub_verdict(result)


@pytest.mark.parametrize("mutant, failing_test", [
    # the beam refilled after [EOS] finishes keeps [1, 2] and finds [1, 2, EOS]
    ("beam_refilled_after_eos", "test_beam_shrinks_as_hypotheses_finish"),
    # only exact ties tell a reversed sort from a stable one
    ("beam_ties_reversed", "test_beam_ties"),
])
def test_mutant_loses_points_and_is_named(tmp_path, mutant, failing_test):
    table = {m.name: m for m in load_mutant_table(LAB.suite_dir() / "mutants.py").mutants}
    source = table[mutant].apply(LAB.solution_path().read_text(encoding="utf-8"))
    result = grade_source(tmp_path, source)
    assert result.score < result.max_score
    test = next(t for t in result.tests if t.name == failing_test)
    assert test.score < test.max_score
    assert any(d.name == mutant for d in test.diagnosis), test.diagnosis


def test_sampler_with_extra_draws_loses_the_exact_sequence_but_keeps_the_distribution(tmp_path):
    """A sampler that draws with rng.random() twice per token (using the second draw) samples
    from the right distribution but not SPEC's exact sequence."""
    source = LAB.solution_path().read_text(encoding="utf-8")
    old = "        u = rng.random()\n"
    assert source.count(old) == 1
    result = grade_source(tmp_path, source.replace(old, "        rng.random()\n" + old))
    tests = {t.name: t for t in result.tests}
    assert tests["test_sample_sequence_seeded"].score == 0
    assert "draws" in tests["test_sample_sequence_seeded"].message
    assert tests["test_sample_sequence_frequencies"].outcome == "passed"

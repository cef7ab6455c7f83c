"""Grading lab2 end to end (in-process): the reference gets full marks, the untouched stub 0, and
every known mistake (mutant) loses points and is named in the diagnosis of each test it fails.

The full mutant sweep is marked slow (about a second per mutant); a few representative mutants run
in the default suite."""

import pytest

from rnngrade.diagnosis.mutants import Mutant, load_mutant_table
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab

LAB = get_lab("lab2")
MUTANTS = load_mutant_table(LAB.suite_dir() / "mutants.py")
QUICK = ("recurrent_term_dropped", "dba_not_summed_over_batch", "duplicate_characters_lost")


def grade_source(tmp_path, source: str):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / LAB.filename).write_text(source, encoding="utf-8")
    return grade(folder, LAB.name, device="cpu", inprocess=True)


def test_reference_gets_full_marks(tmp_path):
    result = grade_source(tmp_path, LAB.solution_path().read_text(encoding="utf-8"))
    assert result.max_score > 0
    assert result.score == result.max_score, [(t.name, t.message) for t in result.tests
                                              if t.score < t.max_score]


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    result = grade_source(tmp_path, LAB.stub_path().read_text(encoding="utf-8"))
    assert result.score == 0 and result.max_score > 0
    ran = [t for t in result.tests if t.outcome != "skipped"]
    assert ran and all("not implemented yet" in t.message for t in ran), [
        (t.name, t.message) for t in ran if "not implemented yet" not in t.message]


def assert_caught_and_named(tmp_path, mutant: Mutant) -> None:
    result = grade_source(tmp_path, mutant.apply(LAB.solution_path().read_text(encoding="utf-8")))
    assert result.score < result.max_score, f"{mutant.name} keeps full marks"
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    unnamed = [(t.name, t.diagnosis, t.message[:300]) for t in failing
               if not any(d.name == mutant.name for d in t.diagnosis)]
    assert not unnamed, unnamed


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.name in QUICK], ids=lambda m: m.name)
def test_representative_mutants_are_caught_and_named(tmp_path, mutant):
    assert_caught_and_named(tmp_path, mutant)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_loses_points_and_is_named(tmp_path, mutant):
    assert_caught_and_named(tmp_path, mutant)

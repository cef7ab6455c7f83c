"""Grading lab6 end to end (in-process): a sampler drawing more than SPEC's one number per token
loses the exact sequence but keeps the distribution. The reference, stub and mutants are graded
by test_lab_grading.py."""

from rnngrade.labs import get_lab

from .grading import grade_lab_source

LAB = get_lab("lab6")


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


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

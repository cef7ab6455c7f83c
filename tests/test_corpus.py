"""Real students' mistakes (tests/data/corpus) graded: fair scores, and the mistake named.

Prints the four counts the course reports: correct functions that lose points, wrong functions
with full marks, mistakes named, hints that name a wrong mistake.
"""

import pytest

from rnngrade.diagnosis.fairness import FairnessTally, Verdict, tally
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab

from .data.corpus.variants import VARIANTS


def corpus_counts(tmp_path) -> FairnessTally:
    counts = FairnessTally()
    for variant in VARIANTS:
        lab = get_lab(variant.lab)
        source = strip_markers(lab.solution_path().read_text())
        for old, new in variant.edits:
            assert source.count(old) == 1, (variant.name, old)
            source = source.replace(old, new)
        folder = tmp_path / variant.name
        folder.mkdir()
        (folder / lab.filename).write_text(source)
        result = grade(folder, variant.lab, inprocess=True, device="cpu")
        verdicts = {f: Verdict(f, mistake, frozenset(variant.accepted.get(f, ())))
                    for f, mistake in variant.verdicts.items()}
        counts += tally(result, verdicts, variant.name)
    return counts


@pytest.mark.slow
def test_real_mistakes_lose_points_and_are_named_and_nothing_is_misnamed(tmp_path):
    counts = corpus_counts(tmp_path)
    print("\n".join(["", *counts.lines(), *counts.details]))
    assert counts.wrong == len(VARIANTS)
    assert counts.wrong_full_marks == 0, counts.details
    assert counts.named >= 0.8 * counts.wrong, counts.details
    assert counts.misnamed == 0, counts.details

"""Each lab1 mutant, graded as a submission, gets feedback that names its mistake."""

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table, strip_markers
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.render import render_feedback_md

LAB1 = get_lab("lab1")
MUTANTS = load_mutant_table(LAB1.mutants_path()).mutants


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_feedback_names_the_mistake_and_gives_its_hint(tmp_path, mutant):
    folder = tmp_path / mutant.name
    folder.mkdir()
    (folder / "rnn.py").write_text(mutant.apply(LAB1.solution_path().read_text()))
    result = grade(folder, "lab1", inprocess=True, device="cpu")
    assert result.score < result.max_score
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    assert any(d.name == mutant.name for t in failing for d in t.diagnosis)
    feedback = render_feedback_md(result)
    assert mutant.description in feedback and mutant.hint in feedback


def test_every_mutant_edit_applies_once_and_changes_the_source():
    source = LAB1.solution_path().read_text()
    for mutant in MUTANTS:
        assert mutant.apply(source) != strip_markers(source)


def test_reference_gets_no_diagnosis(tmp_path):
    folder = tmp_path / "ref"
    folder.mkdir()
    (folder / "rnn.py").write_text(strip_markers(LAB1.solution_path().read_text()))
    result = grade(str(folder), "lab1", inprocess=True, device="cpu")  # a str path is a path too
    assert result.score == result.max_score
    assert not any(t.diagnosis for t in result.tests)

"""Issue #36's held-out measurement (tests/data/heldout): one-bug variants written apart from
every corpus, mutant and slip the diagnosis was built on, each graded by the real grader and run
through its lab's public tests, counted as tests/test_unseen.py counts (its functions, not a
copy): named exactly, symptom only, none, or misleading.

The default suite checks only that every variant is a new one-bug edit of its reference; the
grading (a full lab submission each) runs with the slow tests.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table, strip_markers
from rnngrade.labs import get_lab

from .data.heldout.variants import HELDOUT
from .data.unseen.variants import UNSEEN, Unseen
from .test_unseen import (
    MISLEADING,
    NAMED,
    NAMED_SHARE,
    _report,
    graded,
    grader_verdict,
    public_verdicts,
    variant_source,
)

LABS = ("lab1", "lab2", "lab3")
# Public headlines the classification counts as misleading although what they say is true: the
# public tests hold no reference code, only its values, so they can say where along time a
# result goes wrong but not what the loop does there. Each entry says which headline and why.
PUBLIC_GENERIC = {
    "lstm_backward_da_added_twice": "'the gradient is not carried back correctly from one time "
    "step to the one before': da[:, :, t] reaches the step before a second time, so the "
    "gradient carried back is wrong; the grader names the repeated term",
}
CELL_BACKWARD = ("rnn_cell_backward", "lstm_cell_backward")


def _edited(lab: str, edits: tuple[tuple[str, str], ...]) -> str | None:
    """The stripped reference of ``lab`` with ``edits`` applied (None: an edit does not apply
    once, so the entry describes another version of the reference)."""
    source = strip_markers(get_lab(lab).solution_path().read_text())
    for old, new in edits:
        if source.count(old) != 1:
            return None
        source = source.replace(old, new)
    return source


def _tree(source: str) -> str:
    return ast.dump(ast.parse(source))


@functools.cache
def _known_trees() -> dict[str, str]:
    """The syntax tree of every module some corpus, slip, edit-corpus entry or mutant of labs
    1-3 describes, with that entry's name."""
    from .data.corpus.variants import VARIANTS
    from .data.slips.cell_backward import SLIPS
    from .test_edits import CORPUS

    known: dict[str, str] = {}
    entries: list[tuple[str, str, tuple[tuple[str, str], ...]]] = (
        [(f"unseen {v.name}", v.lab, v.edits) for v in UNSEEN]
        + [(f"corpus {v.name}", v.lab, v.edits) for v in VARIANTS]
        + [(f"slip {s.name}", s.lab, ((s.old, s.new),)) for s in SLIPS]
        + [(f"edit corpus {new}", lab, ((old, new),)) for lab, old, new, _ in CORPUS])
    for lab in LABS:
        reference = get_lab(lab).solution_path().read_text()
        entries += [(f"mutant {lab}:{m.name}", lab, m.edits)
                    for m in load_mutant_table(get_lab(lab).mutants_path()).mutants]
        known[_tree(strip_markers(reference))] = f"the reference of {lab}"
    for name, lab, edits in entries:
        source = _edited(lab, edits)
        if source is not None:
            known.setdefault(_tree(source), name)
    return known


def test_the_corpus_holds_what_the_issue_measures():
    """At least 30 variants of every kind, at least 10 formula slips in a cell's backward pass,
    names unique."""
    assert len(HELDOUT) >= 30 and len({v.name for v in HELDOUT}) == len(HELDOUT)
    assert {v.kind for v in HELDOUT} == {1, 2, 3, 4, 5}
    assert sum(v.kind == 1 and v.function in CELL_BACKWARD for v in HELDOUT) >= 10


@pytest.mark.parametrize("variant", HELDOUT, ids=[v.name for v in HELDOUT])
def test_each_variant_is_a_new_edit_of_its_reference(variant: Unseen):
    """The variant's edits apply once each, change the module and make a module that no known
    corpus entry or mutant makes (compared as syntax trees, so spacing does not hide a repeat)."""
    assert variant.lab in LABS and variant.function in get_lab(variant.lab).functions
    assert variant.named, variant.name
    tree = _tree(variant_source(variant))
    assert tree not in _known_trees(), (variant.name, _known_trees().get(tree))


@pytest.fixture(scope="module")
def graded_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("heldout"))


# each variant a full lab submission: a few seconds each
@pytest.mark.slow
@pytest.mark.parametrize("variant", HELDOUT, ids=[v.name for v in HELDOUT])
def test_the_grader_never_misleads_on_a_heldout_variant(variant: Unseen, graded_root: str):
    """The wrong function loses points and no headline names a mistake it does not make; one
    the data do not mark unnamed is named exactly."""
    result = graded(variant, graded_root)
    assert any(t.score < t.max_score for t in result.tests), variant.name
    verdict = grader_verdict(variant, result)
    assert verdict != MISLEADING
    assert (verdict == NAMED) == (not variant.unnamed), verdict


# every variant graded: about five minutes on one core
@pytest.mark.slow
def test_the_grader_names_the_heldout_mistakes(graded_root: str, capsys: pytest.CaptureFixture):
    verdicts = {v: grader_verdict(v, graded(v, graded_root)) for v in HELDOUT}
    with capsys.disabled():
        print("\n" + _report("grader, held-out one-bug variants:", verdicts))
        cells = [v for v in HELDOUT if v.kind == 1 and v.function in CELL_BACKWARD]
        print(f"  cell backward-pass formula slips: "
              f"{sum(verdicts[v] == NAMED for v in cells)} of {len(cells)} named exactly")
    assert MISLEADING not in verdicts.values()
    assert sum(c == NAMED for c in verdicts.values()) >= NAMED_SHARE * len(verdicts)


# every variant through its lab's public tests: about seven minutes
@pytest.mark.slow
def test_the_public_tests_never_mislead_on_the_heldout_mistakes(course_copy: Path,
                                                                 capsys: pytest.CaptureFixture):
    verdicts = public_verdicts(HELDOUT, course_copy)
    with capsys.disabled():
        print("\n" + _report("public tests, held-out one-bug variants:", verdicts))
    assert {v.name for v, c in verdicts.items() if c == MISLEADING} <= set(PUBLIC_GENERIC)

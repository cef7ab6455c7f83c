"""Mistakes nobody wrote a mutant for (tests/data/unseen): each one-bug variant graded by the
real grader and run through its lab's public tests, and counted as named exactly, symptom only,
none, or misleading (a headline or edit sentence naming a mistake that is not the one made).

Prints the counts per kind of mistake; asserts the issue's bars: at least 8 of 10 wrong
functions named exactly and none misleading in the grader, none misleading and at least
``PUBLIC_NAMED`` named exactly in the public tests
(tests/test_corpus.py counts the points correct functions lose).
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.grading.engine import grade
from rnngrade.labs import get_lab
from rnngrade.results.model import DiagnosisSource, GradeResult

from .data.unseen.variants import UNSEEN, Unseen

NAMED_SHARE = 0.8  # the bar: at least 8 of every 10 wrong functions named exactly
# the public tests' floor, as measured: 26 of the 33 (16 before the contract analysis was
# shipped and the grader's loop slips and shape-changing edits were sealed into the tables)
PUBLIC_NAMED = 26
NAMED, SYMPTOM, NONE, MISLEADING = "named exactly", "symptom only", "none", "misleading"
# a headline that says what the values look like or where the mistake lies, never what it is
SYMPTOMS = (DiagnosisSource.HEURISTIC.value, DiagnosisSource.LOCALISED.value)
LOCATING = re.compile(r"_path$|^localised:")
PUBLIC_HEADLINE = "this looks like: "


def variant_source(variant: Unseen) -> str:
    source = strip_markers(get_lab(variant.lab).solution_path().read_text())
    for old, new in variant.edits:
        assert source.count(old) == 1, (variant.name, old)
        source = source.replace(old, new)
    return source


def _says(text: str, variant: Unseen) -> bool:
    return any(phrase in text for phrase in variant.named)


def grader_verdict(variant: Unseen, result: GradeResult) -> str:
    """The variant's class in the grader's result: named when a headline of a failing test
    names the mistake (or, for torch's leaf error, the failure's message says what to change),
    misleading when any headline of any failing test names another mistake."""
    failing = [t for t in result.tests if t.score < t.max_score]
    headlines = [d for t in failing for d in t.diagnosis
                 if d.source not in SYMPTOMS and not LOCATING.search(d.name)]
    if any(not _says(f"{d.name} {d.text}", variant) for d in headlines):
        return MISLEADING
    if headlines or (variant.kind == 5 and any(_says(t.message, variant) for t in failing)):
        return NAMED
    return SYMPTOM if any(t.diagnosis for t in failing) else NONE


def public_verdict(variant: Unseen, output: str) -> str:
    """The variant's class in ``pytest assignments/labN``'s output: named when a line of it
    names the mistake, misleading when a "this looks like" line names another."""
    body = output.split("= FAILURES =")[-1].split("short test summary")[0]
    headlines = [line for line in body.splitlines() if PUBLIC_HEADLINE in line]
    if any(not _says(line, variant) for line in headlines):
        return MISLEADING
    if any(_says(line, variant) for line in body.splitlines()):
        return NAMED
    return SYMPTOM if re.search(r"is wrong;|are wrong;|shape \(|dtype ", body) else NONE


@functools.cache
def graded(variant: Unseen, root: str) -> GradeResult:
    """The variant graded in-process on the CPU, in a folder under ``root`` (once)."""
    folder = Path(root) / variant.name
    folder.mkdir()
    (folder / get_lab(variant.lab).filename).write_text(variant_source(variant))
    return grade(folder, variant.lab, inprocess=True, device="cpu")


def _report(title: str, verdicts: dict[Unseen, str]) -> str:
    lines = [title]
    for kind in sorted({v.kind for v in verdicts}):
        counts = Counter(c for v, c in verdicts.items() if v.kind == kind)
        lines.append(f"  kind {kind}: " + ", ".join(f"{counts[c]} {c}" for c in
                                                     (NAMED, SYMPTOM, NONE, MISLEADING)))
    total = Counter(verdicts.values())
    lines.append(f"  all: {total[NAMED]} of {len(verdicts)} named exactly, "
                 f"{total[MISLEADING]} misleading")
    lines += [f"    {v.name}: {c}" for v, c in verdicts.items() if c != NAMED]
    return "\n".join(lines)


def test_the_variants_are_new_and_one_bug_each():
    """Each variant changes its reference (a mistake, so a function loses points below), and
    none repeats an edit of the corpus variants, the cell slips or the edit corpus."""
    from .data.corpus.variants import VARIANTS
    from .data.slips.cell_backward import SLIPS
    from .test_edits import CORPUS

    seen = ({edit for v in VARIANTS for edit in v.edits} | {(s.old, s.new) for s in SLIPS}
            | {(old, new) for _, old, new, _ in CORPUS})
    assert len(UNSEEN) >= 20 and len({v.name for v in UNSEEN}) == len(UNSEEN)
    assert {v.kind for v in UNSEEN} == {1, 2, 3, 4, 5}
    for variant in UNSEEN:
        assert variant_source(variant) != strip_markers(
            get_lab(variant.lab).solution_path().read_text())
        assert not any(edit in seen for edit in variant.edits), variant.name
        assert variant.function in get_lab(variant.lab).functions


# every variant graded: about four minutes on one core
@pytest.mark.slow
def test_the_grader_names_the_unseen_mistakes(tmp_path, capsys):
    verdicts: dict[Unseen, str] = {}
    for variant in UNSEEN:
        result = graded(variant, str(tmp_path))
        wrong = {t.name for t in result.tests if t.score < t.max_score}
        assert wrong, variant.name  # a mistake: some test loses points
        verdicts[variant] = grader_verdict(variant, result)
    with capsys.disabled():
        print("\n" + _report("grader, unseen one-bug variants:", verdicts))
    assert MISLEADING not in verdicts.values()
    assert sum(c == NAMED for c in verdicts.values()) >= NAMED_SHARE * len(verdicts)
    # the data say which stay unnamed, and why
    assert {v.name for v, c in verdicts.items() if c != NAMED} == \
        {v.name for v in UNSEEN if v.unnamed}


def public_verdicts(variants: Iterable[Unseen], course: Path) -> dict[Unseen, str]:
    """Each variant's class when its lab's public tests run on it (pasted into the stub of the
    course copy at ``course``, then put back)."""
    verdicts: dict[Unseen, str] = {}
    for variant in variants:
        lab = get_lab(variant.lab)
        stub = lab.stub_path(course)
        original = stub.read_text()
        stub.write_text(variant_source(variant))
        output = subprocess.run(
            [sys.executable, "-m", "pytest", f"assignments/{lab.name}", "-q", "-p",
             "no:randomly", "-p", "no:cacheprovider"],
            cwd=course, capture_output=True, text=True, timeout=600).stdout
        stub.write_text(original)
        verdicts[variant] = public_verdict(variant, output)
    return verdicts


# every variant through its lab's public tests: about five minutes
@pytest.mark.slow
def test_the_public_tests_never_mislead_on_the_unseen_mistakes(course_copy, capsys):
    verdicts = public_verdicts(UNSEEN, course_copy)
    with capsys.disabled():
        print("\n" + _report("public tests, unseen one-bug variants:", verdicts))
    assert MISLEADING not in verdicts.values()
    assert sum(c == NAMED for c in verdicts.values()) >= PUBLIC_NAMED

"""Grading lab12 end to end (in-process): the classic Dinosaur Island submissions of
fixtures/submissions/lab12/classic (notebooks that read `dinos.txt` and train at top level) grade
as a careful TA would, the course's `utils` stands behind `from utils import *`, and each way of
getting optimize's clipping wrong is named alone. Most classic files are marked slow; the
reference, stub and mutants are graded by test_lab_grading.py."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from rnngrade.grading.engine import grade
from rnngrade.harness.source.module_builder import build_module
from rnngrade.lab_helpers import lab_helpers
from rnngrade.labs import get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import GradeResult

from .grading import assert_caught_and_named, grade_lab_source, mutants

LAB = get_lab("lab12")
MUTANTS = mutants(LAB.name)
MUTANTS_BY_NAME = {m.name: m for m in MUTANTS}
CLASSIC = course_root() / "fixtures" / "submissions" / "lab12" / "classic"

# Each classic file: the known mistake it makes (None: correct) and the functions it gets wrong.
CLASSIC_FILES: dict[str, tuple[str | None, frozenset[str]]] = {
    "complete.ipynb": (None, frozenset()),
    "complete_export.py": (None, frozenset()),
    "clip_global_norm.py": ("clip_by_global_norm_instead", frozenset({"clip"})),
    "sample_argmax.ipynb": ("sample_argmax", frozenset({"sample"})),
    "sample_x_not_updated.py": ("sample_x_not_updated", frozenset({"sample"})),
    "sample_x_not_reset.ipynb": ("sample_x_not_reset", frozenset({"sample"})),
    "sample_a_prev_not_carried.ipynb": ("sample_a_prev_not_carried", frozenset({"sample"})),
    "sample_no_newline_at_cap.ipynb": ("sample_no_newline_at_cap", frozenset({"sample"})),
    "sample_p_not_raveled.ipynb": ("sample_p_not_raveled", frozenset({"sample"})),
    "optimize_without_clipping.ipynb": ("optimize_without_clipping", frozenset({"optimize"})),
    "optimize_update_unclipped.py": ("optimize_update_unclipped", frozenset({"optimize"})),
    "optimize_returns_unclipped.py": ("optimize_returns_unclipped", frozenset({"optimize"})),
}
QUICK_CLASSIC = ("complete.ipynb", "complete_export.py", "sample_p_not_raveled.ipynb")


def grade_source(tmp_path, source: str):
    return grade_lab_source(tmp_path, LAB, source)


def test_every_known_mistake_has_a_classic_submission():
    assert {m.name for m in MUTANTS} == {mistake for mistake, _ in CLASSIC_FILES.values()
                                         if mistake}
    shipped = {p.name for p in CLASSIC.iterdir() if p.suffix in (".py", ".ipynb")}
    assert shipped - {"build_notebooks.py"} == set(CLASSIC_FILES)


@functools.cache
def graded_classic(name: str) -> GradeResult:
    return grade(CLASSIC / name, LAB.name, device="cpu", inprocess=True)


def function_of(test: str) -> str:
    return next(f for f in LAB.functions if test.startswith(f"test_{f}_"))


def check_classic_file(name: str) -> None:
    mistake, wrong = CLASSIC_FILES[name]
    result = graded_classic(name)
    lost = {function_of(t.name) for t in result.tests if t.score < t.max_score}
    assert lost == wrong, [(t.name, t.message[:200]) for t in result.tests
                           if t.score < t.max_score]
    if mistake:
        assert_caught_and_named(result, mistake)
    loading = "\n".join(result.student_notes)
    # The notebook's data cell cannot run in the grader: skipped, with the reason.
    assert "FileNotFoundError" in loading and "dinos.txt" in loading, loading
    assert "come from `utils`" in "\n".join(result.notes), result.notes  # the grader's note


@pytest.mark.parametrize("name", QUICK_CLASSIC)
def test_classic_submissions_grade_as_a_ta_would(name):
    check_classic_file(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CLASSIC_FILES) - set(QUICK_CLASSIC)))
def test_every_classic_submission_grades_as_a_ta_would(name):
    check_classic_file(name)


def test_a_wrong_clip_does_not_cost_optimize_points_and_the_report_says_why():
    result = graded_classic("clip_global_norm.py")
    assert all(t.score == t.max_score for t in result.tests if t.name.startswith("test_optimize"))
    assert any("graded with a correct element-wise `clip` in place of yours" in n
               for n in result.notes), result.notes


def test_utils_helpers_are_the_courses_not_the_students():
    """`from utils import *` resolves without a file; its functions are found by the student's
    code but are not the student's (a lab asking for one would score it as missing)."""
    built = build_module("from utils import *\n\ndef f(X, Y, a0, p):\n"
                         "    return rnn_forward(X, Y, a0, p)[0]\n", "s.py",
                         lab_modules=lab_helpers(LAB).registry.modules)
    assert built.fatal is None
    assert "rnn_forward" not in vars(built.module) and "softmax" not in vars(built.module)
    assert any("come from `utils`" in note for note in built.notes)
    reference = build_module(Path(LAB.solution_path()).read_text(encoding="utf-8"), "r.py").module
    other = build_module("from utils import *\n", "s.py",
                         lab_modules=lab_helpers("lab1").registry.modules)
    assert any("No module named 'utils'" in note for note in other.notes)  # lab 12's only
    rng = np.random.default_rng(0)
    p = {"Wax": rng.standard_normal((4, 27)), "Waa": rng.standard_normal((4, 4)),
         "Wya": rng.standard_normal((27, 4)), "b": rng.standard_normal((4, 1)),
         "by": rng.standard_normal((27, 1))}
    X, Y, a0 = [None, 3, 1, 20], [3, 1, 20, 0], rng.standard_normal((4, 1))
    assert built.module.f(X, Y, a0, p) == pytest.approx(reference.rnn_forward(X, Y, a0, p)[0],
                                                         rel=1e-12)


# How optimize may treat clipping, as edits of the reference's optimize: each must be named by
# its own mistake only, so the hint never says "not clipped before the update" of a step whose
# update was clipped.
_CLIPPING_STEP = ("    gradients = clip(gradients, 5)\n"
                  "    update_parameters(parameters, gradients, learning_rate)\n")
CLIPPING_VARIANTS = {
    "optimize_returns_unclipped": ("    clipped = clip(gradients, 5)\n"
                                   "    update_parameters(parameters, clipped, learning_rate)\n"),
    "optimize_update_unclipped": ("    update_parameters(parameters, gradients, learning_rate)\n"
                                  "    gradients = clip(gradients, 5)\n"),
    "optimize_without_clipping": "    update_parameters(parameters, gradients, learning_rate)\n",
}


@pytest.mark.parametrize("mistake", sorted(CLIPPING_VARIANTS))
def test_each_clipping_mistake_of_optimize_is_named_alone_with_a_true_hint(tmp_path, mistake):
    source = LAB.solution_path().read_text(encoding="utf-8")
    assert source.count(_CLIPPING_STEP) == 1
    result = grade_source(tmp_path, source.replace(_CLIPPING_STEP, CLIPPING_VARIANTS[mistake]))
    failing = [t for t in result.tests if t.outcome not in ("passed", "skipped")]
    assert failing and all(t.name.startswith("test_optimize") for t in failing), failing
    for test in failing:
        assert [d.name for d in test.diagnosis] == [mistake], (test.name, test.diagnosis)
        assert test.hint == MUTANTS_BY_NAME[mistake].hint
    if mistake == "optimize_returns_unclipped":
        assert "parameters moved by" in failing[0].message
        assert "before the update" not in failing[0].hint


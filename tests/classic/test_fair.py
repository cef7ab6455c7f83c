"""Fair scores on real-submission shapes (fixtures/submissions/fair): a test of a function loses
points only for a mistake in that function, and code the student did not write earns nothing.

Each variant of ``build_variants.py`` is graded for the labs its expectations list; the verdicts,
messages and notes are checked as for the classic fixtures, and every function listed as
``correct`` must keep all its points.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest
import yaml

from rnngrade.grading.engine import grade
from rnngrade.results.model import GradeResult

HERE = Path(__file__).resolve().parent
FAIR = HERE.parents[1] / "fixtures" / "submissions" / "fair"
EXPECTATIONS = yaml.safe_load((FAIR / "EXPECTATIONS.yaml").read_text(encoding="utf-8"))
FIXTURES: dict[str, dict] = EXPECTATIONS["fixtures"]


def _classic_helpers():
    spec = importlib.util.spec_from_file_location("classic_expectations",
                                                  HERE / "test_classic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CLASSIC = _classic_helpers()


@functools.cache
def graded(fixture: str, lab: str) -> GradeResult:
    return grade(FAIR / fixture, lab, device="cpu", inprocess=True)


def correct_functions_losing_points(fixture: str, lab: str) -> list[str]:
    result = graded(fixture, lab)
    grouped = CLASSIC.group_by_function(result, lab)
    lost = []
    for function in FIXTURES[fixture][lab]["correct"]:
        verdict, score, possible = CLASSIC.verdict_of(grouped[function])
        if verdict != "full":
            lost.append(f"{function}: {score:g}/{possible:g}")
    return lost


CASES = [pytest.param(f, lab, id=f"{f}-{lab}") for f, labs in FIXTURES.items() for lab in labs]


def test_the_variants_are_what_build_variants_writes():
    spec = importlib.util.spec_from_file_location("fair_build", FAIR / "build_variants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.VARIANTS) == set(FIXTURES)
    for name, text in module.VARIANTS.items():
        assert (FAIR / name).read_text(encoding="utf-8") == text, name


@pytest.mark.parametrize("fixture, lab", CASES)
def test_correct_functions_keep_every_point(fixture, lab):
    assert not correct_functions_losing_points(fixture, lab)


@pytest.mark.parametrize("fixture, lab", CASES)
def test_verdicts_messages_and_notes(fixture, lab):
    result = graded(fixture, lab)
    assert result.status == "graded", result.error
    problems = CLASSIC.expectation_problems(FIXTURES[fixture][lab], result, lab)
    assert not problems, "\n".join(problems) + "\n--- notes:\n" + "\n".join(result.notes)


def test_no_grader_internal_name_reaches_a_student():
    """Helper names of the grader never appear in what a student reads."""
    internal = ("on_cache", "perturbed_losses", "directional_losses", "call_and_mutated",
                "set_on_module", "autograd", "on_own_cache", "on_classic_cache", "rnngrade")
    for fixture, labs in FIXTURES.items():
        for lab in labs:
            result = graded(fixture, lab)
            texts = list(result.notes) + [t.message for t in result.tests] + [
                c.message for t in result.tests for c in t.cases]
            leaked = [(name, text) for text in texts for name in internal if name in text]
            assert not leaked, (fixture, lab, leaked[:3])


def _folder_with(tmp_path: Path, module_text: str) -> Path:
    """A student folder: ``rnn.py`` with ``module_text`` and a completed ``lab1.ipynb``."""
    import nbformat

    from rnngrade.diagnosis.mutants import strip_markers
    from rnngrade.labs import get_lab

    lab = get_lab("lab1")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / lab.filename).write_text(module_text, encoding="utf-8")
    solution = strip_markers(lab.solution_path().read_text(encoding="utf-8"))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lab 1"),
                                               nbformat.v4.new_code_cell(solution)])
    nbformat.write(notebook, folder / "lab1.ipynb")
    return folder


def test_the_notebook_is_graded_when_the_module_is_the_untouched_stub(tmp_path):
    from rnngrade.authoring.generate import stub_for
    from rnngrade.labs import get_lab

    folder = _folder_with(tmp_path, stub_for(get_lab("lab1")).content.decode())
    result = grade(folder, "lab1", device="cpu", inprocess=True)
    assert result.notes[0] == "graded lab1.ipynb: rnn.py is the untouched stub"
    rnn_forward = [t for t in result.tests if t.name.startswith("test_rnn_forward_random")]
    assert rnn_forward and all(t.score == t.max_score for t in rnn_forward)


def test_an_edited_module_is_graded_and_the_note_says_the_notebook_was_not(tmp_path):
    folder = _folder_with(tmp_path, "def softmax(x):\n    return x\n")
    result = grade(folder, "lab1", device="cpu", inprocess=True)
    assert result.notes[0] == ("graded rnn.py; lab1.ipynb beside it was not graded (work in one "
                               "of the two)")
    assert result.score < result.max_score / 2


@pytest.mark.slow
@pytest.mark.parametrize("fixture, lab", [("missing_colon.py", "lab1"),
                                          ("rnn_utils_only.py", "lab1"),
                                          ("rnn_forward_dict_caches.py", "lab2"),
                                          ("lstm_reads_global.py", "lab3")])
def test_the_sandboxed_grader_gives_the_same_verdicts(fixture, lab):
    pytest.importorskip("rnngrade.sandbox", reason="the sandbox package is not in this checkout")
    result = grade(FAIR / fixture, lab, device="cpu")
    assert result.protections.get("separate process") is True
    problems = CLASSIC.expectation_problems(FIXTURES[fixture][lab], result, lab)
    assert not problems, "\n".join(problems)


def test_a_wrapper_of_rnn_utils_softmax_scores_nothing_and_costs_nothing_else(tmp_path):
    """Lab 1 grades softmax: ``def softmax(x): return rnn_utils.softmax(x)`` answers with
    nothing (rnn_utils gives no softmax in lab 1), and the correct functions that call it keep
    their points (the grader stands in for the wrong softmax)."""
    from rnngrade.diagnosis.mutants import strip_markers
    from rnngrade.labs import get_lab

    lab = get_lab("lab1")
    solution = strip_markers(lab.solution_path().read_text(encoding="utf-8"))
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / lab.filename).write_text(
        "import rnn_utils\n" + solution + "\n\ndef softmax(x):\n    return rnn_utils.softmax(x)\n",
        encoding="utf-8")
    result = grade(folder, "lab1", device="cpu", inprocess=True)
    softmax = [t for t in result.tests if t.name.startswith("test_softmax")]
    assert softmax and all(t.score == 0 for t in softmax)
    assert any("`rnn_utils` gives no `softmax`" in t.message for t in softmax)
    others = [t for t in result.tests if not t.name.startswith("test_softmax")]
    assert others and all(t.score == t.max_score for t in others), [
        (t.name, t.score, t.max_score) for t in others if t.score < t.max_score]

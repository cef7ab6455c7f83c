"""Classic column-layout submissions from the wild grade as a careful TA would (SPEC, "Classic
submissions").

Every fixture of ``fixtures/submissions/classic`` is graded as lab1, lab2 and lab3, and each
function's verdict (full / partial / zero), its failure messages, hints and diagnoses, and the
report's notes are checked against ``EXPECTATIONS.yaml`` next to the fixtures.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml

from rnngrade.grading.engine import grade
from rnngrade.grading.rubric import load_rubric
from rnngrade.harness.runner.base import MISSING_FUNCTION, NOT_IMPLEMENTED, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.source.module_builder import build_module, salvage
from rnngrade.labs import get_lab
from rnngrade.results.model import PASSED, SKIPPED, GradeResult, TestResult
from rnngrade.results.render import render_feedback_md

CLASSIC = Path(__file__).resolve().parents[2] / "fixtures" / "submissions" / "classic"
EXPECTATIONS = yaml.safe_load((CLASSIC / "EXPECTATIONS.yaml").read_text(encoding="utf-8"))
FIXTURES: dict[str, dict] = EXPECTATIONS["fixtures"]
LABS = ("lab1", "lab2", "lab3")
NOT_FIXTURES = {"EXPECTATIONS.yaml", "build_notebooks.py"}


def _says(text, diagnoses):
    """Whether a diagnosis names ``text`` (a known mistake's name, or words of its line)."""
    return any(text == d.name or text in str(d) for d in diagnoses)


@functools.cache
def graded(fixture: str, lab: str) -> GradeResult:
    """The fixture graded in-process for ``lab`` (once per test session)."""
    return grade(CLASSIC / fixture, lab, device="cpu", inprocess=True)


def function_of(test: str, functions: tuple[str, ...]) -> str | None:
    """The lab function a rubric test belongs to: the longest function its name starts with
    (``test_<function>_...``), else the function sharing the longest run of leading words, at
    least two (``test_char_rnn_random`` → ``char_rnn_loss_and_grads``)."""
    body = test.removeprefix("test_")
    exact = [f for f in functions if body == f or body.startswith(f + "_")]
    if exact:
        return max(exact, key=len)
    best, shared = None, 1
    for function in functions:
        words, theirs = body.split("_"), function.split("_")
        common = next((i for i, (a, b) in enumerate(zip(words, theirs)) if a != b),
                      min(len(words), len(theirs)))
        if common > shared:
            best, shared = function, common
    return best


def group_by_function(result: GradeResult, lab: str) -> dict[str, list[TestResult]]:
    functions = get_lab(lab).functions
    grouped: dict[str, list[TestResult]] = {f: [] for f in functions}
    for test in result.tests:
        grouped[function_of(test.name, functions)].append(test)
    return grouped


def verdict_of(tests: list[TestResult]) -> tuple[str, float, float]:
    score = sum(t.score for t in tests)
    possible = sum(t.max_score for t in tests)
    if possible > 0 and score == possible:
        return "full", score, possible
    return ("zero" if score == 0 else "partial"), score, possible


def function_problems(function: str, spec: dict | str, tests: list[TestResult]) -> list[str]:
    """What differs between the graded tests of ``function`` and the TA's expectation."""
    spec = {"verdict": spec} if isinstance(spec, str) else spec
    if not tests:
        return [f"{function}: no rubric test belongs to it"]
    failing = [(t, c) for t in tests for c in t.cases if c.outcome not in (PASSED, SKIPPED)]
    first = f"{failing[0][0].name}[{failing[0][1].case}]: {failing[0][1].message}" \
        if failing else "none"
    verdict, score, possible = verdict_of(tests)
    problems = []
    if verdict != spec["verdict"]:
        problems.append(f"{function}: expected {spec['verdict']}, got {verdict} "
                        f"({score:g}/{possible:g}); first failure: {first[:400]}")
    if "message" in spec:
        if not failing:
            problems.append(f"{function}: expected failures saying {spec['message']!r}")
        for test, case in failing:
            if spec["message"] not in case.message:
                problems.append(f"{function}: {test.name}[{case.case}] says {case.message!r}, "
                                f"not {spec['message']!r}")
    if "hint" in spec and not any(spec["hint"] in t.hint for t in tests):
        problems.append(f"{function}: no hint mentions {spec['hint']!r} "
                        f"(hints: {[t.hint for t in tests if t.hint]})")
    if "diagnosis" in spec and not any(_says(spec["diagnosis"], t.diagnosis) for t in tests):
        problems.append(f"{function}: no diagnosis names {spec['diagnosis']!r}")
    by_name = {t.name: t for t in tests}
    for test_name, cases in spec.get("failing", {}).items():
        outcomes = {c.case: c for c in by_name[test_name].cases}
        for case_id in cases:
            case = outcomes.get(case_id)
            if case is None or case.outcome == PASSED:
                problems.append(f"{function}: {test_name}[{case_id}] should fail "
                                f"({'missing' if case is None else 'it passed'})")
            elif "diagnosis" in spec and not _says(spec["diagnosis"], case.diagnosis):
                problems.append(f"{function}: {test_name}[{case_id}] is not diagnosed as "
                                f"{spec['diagnosis']!r} ({case.diagnosis})")
    return problems


def test_every_fixture_has_expectations_and_the_other_way_round():
    on_disk = {p.name for p in CLASSIC.iterdir() if p.name not in NOT_FIXTURES
               and p.name != "__pycache__"}
    assert on_disk == set(FIXTURES)
    for fixture, labs in FIXTURES.items():
        for lab in LABS:
            assert set(labs[lab]["functions"]) == set(get_lab(lab).functions), (fixture, lab)


@pytest.mark.parametrize("lab", LABS)
def test_every_rubric_test_belongs_to_a_function_of_its_lab(lab):
    functions = get_lab(lab).functions
    rubric = load_rubric(get_lab(lab).rubric_path())
    orphans = [name for name in rubric.entries if function_of(name, functions) is None]
    assert not orphans
    assert function_of("test_char_rnn_random", functions) in (None, "char_rnn_loss_and_grads")
    assert function_of("test_lstm_cell_backward_random", get_lab("lab3").functions) == \
        "lstm_cell_backward"


def expectation_problems(expected: dict, result: GradeResult, lab: str) -> list[str]:
    """Every way ``result`` differs from the expectations of one fixture and lab."""
    grouped = group_by_function(result, lab)
    problems = []
    for function, spec in expected["functions"].items():
        problems += function_problems(function, spec, grouped[function])
    notes = "\n".join(result.notes + result.student_notes)  # the grader's and the quoted ones
    problems += [f"notes lack {text!r}" for text in expected.get("notes", []) if text not in notes]
    problems += [f"notes mention {text!r}" for text in expected.get("notes_absent", [])
                 if text in notes]
    return problems


@pytest.mark.parametrize("fixture, lab", [pytest.param(f, lab, id=f"{f}-{lab}")
                                          for f in FIXTURES for lab in LABS])
def test_each_function_gets_the_verdict_a_careful_ta_gives(fixture, lab):
    result = graded(fixture, lab)
    assert result.status == "graded", result.error
    problems = expectation_problems(FIXTURES[fixture][lab], result, lab)
    assert not problems, "\n".join(problems) + "\n--- notes:\n" + \
        "\n".join(result.notes + result.student_notes)


@pytest.mark.parametrize("lab", ["lab2", "lab3"])
def test_feedback_for_the_untouched_template_reads_as_unfinished_not_as_a_crash(lab):
    result = graded("backward_template.ipynb", lab)
    feedback = render_feedback_md(result)
    backward = [t for t in result.tests if "backward" in t.name]
    assert backward and all(t.score == 0 for t in backward)
    for test in backward:
        assert "looks unfinished" in test.message, test.message
        assert " raised " not in test.message and "Traceback" not in test.message, test.message
    assert "looks unfinished" in feedback
    for crash in ("Traceback", "raised TypeError", "raised AttributeError", "NoneType' object"
                  " is not subscriptable;"):
        assert crash not in feedback, crash


def test_the_notebooks_are_what_build_notebooks_writes():
    spec = importlib.util.spec_from_file_location("classic_build", CLASSIC / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for filename, cells in module.NOTEBOOKS.items():
        notebook = nbformat.read(CLASSIC / filename, as_version=4)
        assert [(c.cell_type == "code" and "code" or "md", c.source) for c in notebook.cells] \
            == cells, filename


@pytest.mark.slow
@pytest.mark.parametrize("fixture, lab", [("backward_template.ipynb", "lab2"),
                                          ("np_float_alias.py", "lab2"),
                                          ("lstm_backward_drops_da.ipynb", "lab3")])
def test_the_sandboxed_grader_gives_the_same_verdicts(fixture, lab):
    """The default path (a sandboxed worker per submission) meets the same expectations as the
    in-process runs above: unfinished, removed-alias and diagnosis messages included."""
    pytest.importorskip("rnngrade.sandbox", reason="the sandbox package is not in this checkout")
    result = grade(CLASSIC / fixture, lab, device="cpu")
    assert result.protections.get("separate process") is True  # the worker, not in-process
    problems = expectation_problems(FIXTURES[fixture][lab], result, lab)
    assert not problems, "\n".join(problems)
    if "template" in fixture:
        assert "looks unfinished" in render_feedback_md(result)


# ------------------------------------------------------------ the engine pieces behind the verdicts

def test_a_none_placeholder_crash_reads_as_unfinished_and_names_the_variable():
    source = ("def rnn_backward(da, caches):\n"
              "    dx = None\n"
              "    for t in range(3):\n"
              "        dx[:, :, t] = da[:, :, t]\n"
              "    return dx\n\n"
              "def lstm_backward(da, caches):\n"
              "    n_a, m, T_x = None\n"
              "    return n_a\n")
    runner = InProcessRunner.from_source(source, "lstm.py")
    for function, named in (("rnn_backward", "`dx` is still None"),
                            ("lstm_backward", "a value is None")):
        with pytest.raises(StudentError) as failure:
            runner.call(function, (np.zeros((2, 2, 3)), None))
        assert failure.value.kind == NOT_IMPLEMENTED
        assert failure.value.message.startswith(f"`{function}` looks unfinished")
        assert named in failure.value.message


def test_an_ordinary_bug_is_still_reported_as_what_it_is():
    runner = InProcessRunner.from_source("def f(x):\n    return x['a']\n", "rnn.py")
    with pytest.raises(StudentError) as failure:
        runner.call("f", (np.zeros(3),))
    assert "looks unfinished" not in failure.value.message
    assert failure.value.message.startswith("IndexError")


def test_a_function_a_grader_helper_looks_up_is_reported_missing():
    runner = InProcessRunner.from_source("def other():\n    return 1\n", "lstm.py")
    with pytest.raises(StudentError) as failure:
        runner.call_helper("call_and_mutated", ("lstm_cell", ()))
    assert failure.value.kind == MISSING_FUNCTION
    assert failure.value.message == "the submission does not define `lstm_cell`"


def test_the_removed_alias_message_is_short_and_names_the_replacement():
    runner = InProcessRunner.from_source("def f(n):\n    return np.zeros(n, dtype=np.float)\n",
                                         "bptt.py")
    with pytest.raises(StudentError) as failure:
        runner.call("f", (3,))
    first = failure.value.message.splitlines()[0]
    assert first == ("AttributeError: module 'numpy' has no attribute 'float' — `np.float` was "
                     "removed from NumPy in 1.24; use the builtin `float`")


def test_skipped_lines_name_the_function_that_cannot_be_graded():
    source = ("def good():\n    return 1\n\n"
              "def clip(g, v):\n    return g\n    g['db'] = [10.  2.5]\n\n"
              "# In[5]:\n\n"
              "def also_good():\n    return 2\n")
    notes = salvage(source).notes
    assert notes == ["lines 4-6 do not parse as Python and were skipped (line 6: SyntaxError: "
                     "invalid syntax. Perhaps you forgot a comma? in `g['db'] = [10.  2.5]`) — "
                     "they define `clip`, which cannot be graded; the rest of the file is graded"]


def test_notebook_magics_in_a_py_export_do_nothing_and_demo_failures_are_summarised():
    source = ("get_ipython().run_line_magic('matplotlib', 'inline')\n"
              + "".join(f"print(undefined_{i})\n" for i in range(6))
              + "def f():\n    return 1\n")
    built = build_module(source, "rnn.py")
    assert built.module.f() == 1
    assert not any("get_ipython" in note for note in built.notes)
    assert len(built.notes) == 4 and built.notes[-1].startswith("3 more top-level statement(s)")

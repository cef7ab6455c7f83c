"""One rule of evidence for every headline: a mistake is named only where it reproduces the
student's values on the cases that can tell it apart from the other explanations; otherwise the
feedback locates the mistake and names none. Three misleading headlines, end to end."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from rnngrade.authoring.generate import _load_cases, mistake_fingerprints, vectors_for
from rnngrade.diagnosis.mutants import load_mutant_table, load_source_as_module, strip_markers
from rnngrade.grading.engine import grade
from rnngrade.grading.scoring import rank_diagnoses
from rnngrade.harness.checks.vectors import PublicVectors
from rnngrade.labs import get_lab
from rnngrade.paths import course_root
from rnngrade.results.model import CaseResult, Diagnosis, DiagnosisSource, Outcome

from .test_public_edits import public_case_outputs, public_lines

KNOWN = DiagnosisSource.KNOWN_MISTAKE.value
EDIT = DiagnosisSource.EDIT.value

# lstm_backward overwriting dWf at every step, the other sums added up: with c0 = 0 the step
# processed last (t = 0) contributes a zero dWf, which is also dc_missing_path_through_a_next's
DWF_OVERWRITTEN = (("        for name in totals:\n            totals[name] += grads[name]\n",
                    "        for name in totals:\n            if name == 'dWf':\n"
                    "                totals[name] = grads[name]\n            else:\n"
                    "                totals[name] += grads[name]\n"),)
# rnn_cell_backward without the tanh derivative: where a_prev = 0 this is also
# tanh_derivative_at_a_prev (1 − 0² = 1)
TANH_DERIVATIVE_LEFT_OUT = (("dz = (1 - a_next ** 2) * da_next", "dz = da_next"),)
# rnn_backward returning the zeros da0 started as: on the public cases da_prev_not_updated gives
# the same da0, but a different dx
DA0_ZEROS = (('return {"dx": dx, "da0": da_prevt,',
              'return {"dx": dx, "da0": np.zeros_like(da_prevt),'),)


def _variant(lab_name: str, edits: tuple[tuple[str, str], ...], root: Path | None = None
             ) -> str:
    source = strip_markers(get_lab(lab_name).solution_path(root).read_text())
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def _graded(tmp_path: Path, lab_name: str, edits: tuple[tuple[str, str], ...]) -> dict:
    lab = get_lab(lab_name)
    (tmp_path / lab.filename).write_text(_variant(lab_name, edits))
    result = grade(tmp_path, lab_name, inprocess=True, device="cpu")
    return {t.name: t for t in result.tests if t.score < t.max_score}


def test_a_mistake_that_changes_outputs_the_student_has_right_is_no_headline(tmp_path):
    """(a) The overwritten dWf is all zeros, as dc_missing_path_through_a_next's and
    weight_grads_overwritten's are; both also change dx, da0 and dWi, which the student has
    right. Neither is named: the feedback locates the mistake on the forget gate's path."""
    failing = _graded(tmp_path, "lab3", DWF_OVERWRITTEN)
    assert failing and all(n.startswith("test_lstm_backward_") for n in failing), list(failing)
    for test in failing.values():
        assert test.diagnosis, test.name
        assert not any(d.source == KNOWN for d in test.diagnosis), (test.name, test.diagnosis)
        assert test.diagnosis[0].name == "forget_gate_path", (test.name, test.diagnosis)
        for case in test.cases:
            assert not any(d.source == KNOWN for d in case.diagnosis), (test.name, case.case)


def test_a_mistake_named_in_one_case_and_contradicted_in_another_is_no_headline(tmp_path):
    """(c) dz = da_next: the term-isolation case with a_prev = 0 matches
    tanh_derivative_at_a_prev, the other cases name other values' edits. No mistake reproduces
    every failing case, so none is the headline; where every case names the edit, it is."""
    failing = _graded(tmp_path, "lab2", TANH_DERIVATIVE_LEFT_OUT)
    assert failing and all(n.startswith("test_rnn_cell_backward_") for n in failing)
    isolation = failing["test_rnn_cell_backward_term_isolation"]
    named = {d.name for c in isolation.cases for d in c.diagnosis if d.source == KNOWN}
    assert named == {"tanh_derivative_at_a_prev"}  # the coincidence is still seen in its case
    for test in failing.values():
        assert not any(d.source == KNOWN for d in test.diagnosis), (test.name, test.diagnosis)
    assert not any(d.source in (KNOWN, EDIT) for d in isolation.diagnosis), isolation.diagnosis
    random = failing["test_rnn_cell_backward_random"]
    assert random.diagnosis[0].name == "edit:rnn_cell_backward:dz:da_next", random.diagnosis


def _case(name: str, *diagnoses: Diagnosis) -> CaseResult:
    return CaseResult(name, Outcome.FAILED, "wrong", diagnosis=list(diagnoses))


def test_the_headline_rule_on_cases():
    """A mistake named by some cases is no headline when another failing case names another
    mistake and not it; cases that name nothing do not contradict it."""
    known = Diagnosis("some_mistake", "a mistake", "f", "look here", "", KNOWN)
    edit = Diagnosis("edit:f:z:w", "`z` is missing a factor", "f", "", "", EDIT)
    other = replace(known, name="another_mistake")
    plain = _case("c")  # a case with no explanation: no evidence either way
    ranked, _ = rank_diagnoses([_case("a", known), _case("b", known), plain])
    assert [d.name for d in ranked] == ["some_mistake"]
    ranked, _ = rank_diagnoses([_case("a", known), _case("b", known), _case("c", edit)])
    assert not any(d.source in (KNOWN, EDIT) for d in ranked), ranked
    ranked, _ = rank_diagnoses([_case("a", known, other), _case("b", other)])
    assert [d.name for d in ranked] == ["another_mistake"]


def test_a_public_fingerprint_is_named_only_when_it_is_the_whole_result():
    """(b) da0 left at zeros: da_prev_not_updated's da0 is zeros too, but its dx differs from
    the student's (right) dx, so only da0_left_at_zeros is named."""
    module = load_source_as_module(_variant("lab2", DA0_ZEROS), "_da0_zeros")
    for case in ("backward_small", "backward_float32"):
        lines = public_lines("lab2", case, public_case_outputs("lab2", case, module))
        assert len(lines) == 1 and lines[0].startswith("da0 returned as the zeros"), lines


def test_pytest_on_the_public_tests_names_da0_alone(course_copy):
    lab = get_lab("lab2")
    lab.stub_path(course_copy).write_text(_variant("lab2", DA0_ZEROS, course_copy))
    output = subprocess.run(
        [sys.executable, "-m", "pytest", "assignments/lab2", "-q", "-p", "no:randomly",
         "-k", "rnn_backward_values"],
        cwd=course_copy, capture_output=True, text=True, timeout=300).stdout
    assert "da0 returned as the zeros" in output, output[-3000:]
    assert "da_prevt never updated" not in output, output[-3000:]


def test_fingerprints_that_coincide_on_a_case_are_not_shipped():
    """Two mistakes with equal outputs on a public case: the case cannot tell them apart, so
    ``rnngrade generate`` stores neither there."""
    lab = get_lab("lab2")
    table = load_mutant_table(lab.suite_dir() / "mutants.py").mutants
    mutant = next(m for m in table if m.name == "da0_left_at_zeros")
    twin = replace(mutant, name="da0_twin")  # the same edit under another name
    source = lab.solution_path().read_text()
    generated = vectors_for(lab)
    assert generated is not None
    with tempfile.NamedTemporaryFile(suffix=".npz") as tmp:
        tmp.write(generated.content)
        tmp.flush()
        vectors = PublicVectors(Path(tmp.name))
        cases = _load_cases(lab, course_root())
        alone = mistake_fingerprints(vectors, cases, [mutant], source)
        both = mistake_fingerprints(vectors, cases, [mutant, twin], source)
    assert any(e.endswith("::da0_left_at_zeros") for e in alone)
    assert not both


# rnn_forward copying each new state into one a_prev buffer: at T = 1 nothing is shared, but the
# step's cached a_prev holds the new state, not a0
RNN_FORWARD_ONE_BUFFER = (("    a_prev = a0\n", "    a_prev = a0.copy()\n"),
                          ("        a_prev = a_next\n", "        a_prev[:] = a_next\n"))


def test_a_cache_layout_that_is_wrong_otherwise_is_not_a_state_from_zeros(tmp_path):
    """(d) The caches check at T = 1 of an rnn_forward with one state buffer: its cache is no
    step's, as state_starts_at_zeros's is not either, but it holds something else (the new
    state as a_prev, not zeros). The layout says what it holds, so no known mistake is named
    there; the T = 4 case names the shared buffer."""
    failing = _graded(tmp_path, "lab1", RNN_FORWARD_ONE_BUFFER)
    assert list(failing) == ["test_rnn_forward_caches"], list(failing)
    test = failing["test_rnn_forward_caches"]
    assert [d.name for d in test.diagnosis] == ["cached_entries_share_one_array"], test.diagnosis
    one_step = next(c for c in test.cases if c.case == "T1")
    assert not any(d.source == KNOWN for d in one_step.diagnosis), one_step.diagnosis
    assert "(a_next, a_next, xt, parameters)" in one_step.message, one_step.message


def test_a_state_from_zeros_is_still_named_by_the_caches_check(tmp_path):
    failing = _graded(tmp_path, "lab1", (("    a_prev = a0\n",
                                          "    a_prev = np.zeros_like(a0)\n"),))
    test = failing["test_rnn_forward_caches"]
    assert [d.name for d in test.diagnosis] == ["state_starts_at_zeros"], test.diagnosis


def test_a_known_mistake_a_diagnosed_case_does_not_reproduce_is_no_headline():
    """dba summed over axis 0 equals dba_not_summed_over_batch only where n_a = 1; the other
    failing cases were diagnosed (where it goes wrong) or checked, and did not reproduce it:
    no headline. A case whose diagnosis was skipped tells nothing."""
    from rnngrade.grading.budget import DIAGNOSIS_SKIPPED
    from rnngrade.results.model import FailureKind

    known = Diagnosis("dba_not_summed_over_batch", "dba per example", "f", source=KNOWN)
    where = Diagnosis("localised:f:dba", "the first ...", "f",
                      source=DiagnosisSource.LOCALISED.value)
    named, _ = rank_diagnoses([_case("n_a1", known), _case("square", where)])
    assert "dba_not_summed_over_batch" not in {d.name for d in named}
    checked = CaseResult("m4", Outcome.FAILED, "wrong", FailureKind.CHECK)
    named, _ = rank_diagnoses([_case("n_a1", known), checked])
    assert "dba_not_summed_over_batch" not in {d.name for d in named}
    skipped = CaseResult("m4", Outcome.FAILED, f"wrong\n{DIAGNOSIS_SKIPPED}", FailureKind.CHECK)
    named, _ = rank_diagnoses([_case("n_a1", known), skipped])
    assert [d.name for d in named] == ["dba_not_summed_over_batch"]

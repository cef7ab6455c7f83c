"""In-place writes and sequence slips are named from the call and from the reference rewritten,
only where they reproduce what the student's code did; the end-to-end cases are the corpus
variants of that kind (tests/data/corpus/variants.py)."""

import numpy as np
import pytest

from rnngrade.diagnosis.aliasing import MODIFIES, WRITES_RESULT, in_place_diagnosis
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.diagnosis.slips import NOT_ACCUMULATED, NOT_CARRIED, explain_slips, slips_of
from rnngrade.diagnosis.structural import LAST_STEP_EARLY
from rnngrade.grading.engine import grade
from rnngrade.grading.lab_assets import load_lab_assets
from rnngrade.harness.checks.tolerance import Tolerance
from rnngrade.labs import get_lab

from .data.corpus.variants import VARIANTS

TOL = Tolerance(1e-10, 1e-8, "float64")
NEW = (WRITES_RESULT, NOT_CARRIED, NOT_ACCUMULATED, LAST_STEP_EARLY)


def test_the_slips_of_a_time_loop_are_read_off_the_reference():
    reference = load_lab_assets("lab3").reference
    forward = slips_of(reference, "lstm_forward")
    assert [(s.state, s.initial, s.carried) for s in forward if s.state] == [
        ("c_next", "np.zeros_like(a0)", ("a_next",))]  # a_next starts from a0: "fed a0"
    assert [s.swapped for s in forward if s.swapped[0]] == [  # parameters: passed as it came
        ("lstm_cell_forward", "xt", "a_prev"), ("lstm_cell_forward", "xt", "c_prev"),
        ("lstm_cell_forward", "a_prev", "c_prev")]
    backward = slips_of(reference, "lstm_backward")
    assert [s.state for s in backward if s.state] == ["da_prevt", "dc_prevt"]
    assert [(s.totals, s.never_added) for s in backward if s.totals] == [
        (("totals",), False), (("totals",), True)]  # overwritten, never added to
    layer = slips_of(reference, "lstm_layer")
    assert [s.early for s in layer if s.early] == [("h", "c")]
    assert [s.swapped[1:] for s in layer if s.swapped[0]] == [("x", "h"), ("x", "c"), ("h", "c")]
    assert slips_of(reference, "lstm_cell_forward") == ()  # no loop: nothing to rewrite
    assert slips_of(reference, "no_such_function") == ()


def _sequence(c_carried: bool) -> tuple:
    """lstm_forward's (a, y, c) on fixed inputs, with the cell state carried or reset."""
    reference = load_lab_assets("lab3").reference
    rng = np.random.default_rng(0)
    x, a0 = rng.standard_normal((3, 4, 5)), rng.standard_normal((2, 4))
    p = {k: rng.standard_normal((2, 5)) / 2 for k in ("Wf", "Wi", "Wc", "Wo")}
    p.update({k: rng.standard_normal((2, 1)) for k in ("bf", "bi", "bc", "bo")})
    p.update(Wy=rng.standard_normal((3, 2)), by=rng.standard_normal((3, 1)))
    module = reference if c_carried else slips_of(reference, "lstm_forward")[0].module
    return module.lstm_forward(x, a0, p)[:3]


def test_a_state_not_carried_is_named_only_when_it_gives_the_students_values():
    slips = slips_of(load_lab_assets("lab3").reference, "lstm_forward")
    want, got = _sequence(True), _sequence(False)
    failing = ["lstm_forward[0]", "lstm_forward[1]", "lstm_forward[2]"]

    def run(slip):
        return got  # the slipped reference's result on these inputs

    [found] = explain_slips(slips, run, got, want, failing, TOL, "lstm_forward", None)
    assert found.name == NOT_CARRIED and "`c_next`" in found.text and "`a_next`" in found.text
    other = tuple(np.array(g) for g in got)
    other[1][0, 0, -1] += 1.0  # one entry the slip does not reproduce: no name
    assert explain_slips(slips, run, other, want, failing, TOL, "lstm_forward", None) == []
    # the slip changes every output: a student whose `a` is right did something else
    mixed = (want[0], got[1], got[2])
    assert explain_slips(slips, run, mixed, want, failing[1:], TOL, "lstm_forward", None) == []
    # a slip that coincides with the correct result is no evidence
    assert explain_slips(slips, lambda s: want, got, want, failing, TOL, "lstm_forward",
                         None) == []


def test_an_in_place_write_names_the_returned_entry_and_the_parameter():
    c_prev, other = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    after = c_prev * 2
    found = in_place_diagnosis("cell", "argument 2", ("a_prev", "c_prev"), (other, c_prev),
                               (other, after), (other, after), ("a_next", "c_next"))
    assert found is not None and found.name == WRITES_RESULT
    assert "writes `c_next` into the array passed as `c_prev`" in found.text
    assert "same array" in found.text
    copy = after.copy()  # equal values only (no identity): still the returned entry
    found = in_place_diagnosis("cell", "argument 2", ("a_prev", "c_prev"), (other, c_prev),
                               (other, copy), (other, after), ("a_next", "c_next"))
    assert found is not None and found.name == WRITES_RESULT and "same array" not in found.text
    # a change that is none of the returned values: only the change is named
    found = in_place_diagnosis("cell", "argument 3['W']", ("x", "y", "p"),
                               (0, 0, {"W": c_prev}), (0, 0, {"W": c_prev + 1}), other, None)
    assert found is not None and found.name == MODIFIES and "`p['W']`" in found.text


@pytest.mark.parametrize("variant", [v for v in VARIANTS
                                     if set(v.verdicts.values()) & set(NEW)],
                         ids=lambda v: v.name)
def test_the_variant_is_named_exactly_and_nothing_else_loses_points(tmp_path, variant):
    lab = get_lab(variant.lab)
    source = strip_markers(lab.solution_path().read_text())
    for old, new in variant.edits:
        source = source.replace(old, new)
    (tmp_path / lab.filename).write_text(source)
    result = grade(tmp_path, variant.lab, device="cpu", inprocess=True)
    [(function, mistake)] = variant.verdicts.items()
    failing = [t for t in result.tests if t.score < t.max_score]
    assert failing and all(t.name.startswith(f"test_{function}_") for t in failing), [
        t.name for t in failing]
    headlines = [t.diagnosis[0].name for t in failing if t.diagnosis]
    assert mistake in headlines, headlines
    accepted = {mistake, *variant.accepted.get(function, ())}
    assert set(headlines) <= accepted, headlines


def test_the_new_slips_are_read_off_the_reference():
    """A sum never added to, an update left out, another value collected, two arguments
    swapped: each is a rewriting of the reference's own loop, found from its source."""
    lab2 = load_lab_assets("lab2").reference
    char = slips_of(lab2, "char_rnn_loss_and_grads")
    assert {s.dropped for s in char if s.dropped} == {
        "loss -= float(np.sum(log_probs[Y[:, t], streams]))",
        "dlogits[Y[:, t], streams] -= 1", "dlogits *= scale"}
    backward = slips_of(lab2, "rnn_backward")
    assert [s.totals for s in backward if s.never_added] == [("dWax", "dWaa", "dba")]
    assert [s.swapped for s in backward if s.swapped[0]] == [
        ("rnn_cell_backward", "da_next", "cache")]
    layer = slips_of(load_lab_assets("lab3").reference, "lstm_layer")
    assert [s.collected for s in layer if s.collected[0]] == [("h", "c")]
    assert [s.listed for s in char if s.listed] == ["hs"]  # return hs[-1] after the loop
    assert not any(s.listed for s in backward + layer)


def test_the_last_entry_of_a_list_returned_one_step_early_is_named():
    """``return loss, grads, hs[-2]``: the slip reproduces every output, so it is named; a
    student whose loss is also off is not that slip."""
    from rnngrade.harness.checks.vectors import PublicVectors

    lab2 = load_lab_assets("lab2").reference
    [slip] = [s for s in slips_of(lab2, "char_rnn_loss_and_grads") if s.listed]
    case = PublicVectors(get_lab("lab2").public_fixture_path()).case("char_rnn_small")
    want = lab2.char_rnn_loss_and_grads(*case.args)
    got = slip.module.char_rnn_loss_and_grads(*case.args)
    names = ("loss", "grads", "h_last")
    [found] = explain_slips((slip,), lambda s: got, got, want, ["h_last"], TOL, "f", names)
    assert found.name == LAST_STEP_EARLY
    assert "the state after the last step but one is returned" in found.text
    assert "`hs`" in found.text and "hs[-2]" in found.evidence
    other = (got[0] + 1.0, got[1], got[2])
    assert explain_slips((slip,), lambda s: got, other, want, ["loss", "h_last"], TOL, "f",
                         names) == []


def test_a_sum_never_added_to_is_not_named_where_the_last_step_adds_nothing():
    """Overwritten with a last contribution of zero and never added to give the same zeros:
    the case cannot tell them apart, so neither is named."""
    from rnngrade.diagnosis.slips import NEVER_ADDED, Slip

    want = {"dW": np.arange(1.0, 7.0).reshape(2, 3)}
    got = {"dW": np.zeros((2, 3))}
    module = load_lab_assets("lab2").reference
    over = Slip("f", module, totals=("dW",))
    never = Slip("f", module, totals=("dW",), never_added=True)

    def run(slip):
        return {"dW": np.zeros((2, 3))}  # both rewritings give zeros on this case

    assert explain_slips((over, never), run, got, want, ["f['dW']"], TOL, "f", None) == []
    found = explain_slips((never,), run, got, want, ["f['dW']"], TOL, "f", None)
    assert [d.name for d in found] == [NEVER_ADDED]

"""A diagnosis runs only the mutants a check can tell from the reference
(rnngrade.diagnosis.reach)."""

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.diagnosis.reach import Reach, called_names, edited_names, uses
from rnngrade.grading.lab_assets import load_lab_assets
from rnngrade.labs import get_lab

SOURCE = '''
import numpy as np

SCALE = 2.0

def sigmoid(z):
    return 1 / (1 + np.exp(-z))

def cell(x, a):
    return np.tanh(x + a), sigmoid(a)

def forward(xs, a):
    step = cell
    for x in xs:
        a, _ = step(x, a)
    return a

def loss(a):
    return SCALE * a.sum()
'''


def test_only_the_definitions_an_edit_touches_are_edited():
    assert edited_names(SOURCE, SOURCE) == frozenset()
    assert edited_names(SOURCE, SOURCE.replace("1 + np.exp(-z)", "1 + np.exp(z)")) == {"sigmoid"}
    assert edited_names(SOURCE, SOURCE.replace("SCALE = 2.0", "SCALE = 3.0")) is None
    assert edited_names(SOURCE, SOURCE + "\ndef extra():\n    pass\n") is None



def test_only_the_syntax_tree_counts_not_the_text():
    # formatting and comments are no edit; a change in a decorator or a second statement on the
    # line is one (the text is compared first, the trees only where it differs)
    spaced = SOURCE.replace("1 / (1 + np.exp(-z))", "1/(1+np.exp( -z))  # same tree")
    assert edited_names(SOURCE, spaced) == frozenset()
    assert edited_names(SOURCE, "# BEGIN SOLUTION\n" + SOURCE) == frozenset()
    decorated = SOURCE.replace("def loss", "@np.vectorize\ndef loss")
    assert edited_names(decorated, decorated) == frozenset()
    assert edited_names(decorated, decorated.replace("@np.vectorize", "@np.errstate")) == {"loss"}
    assert edited_names(SOURCE, SOURCE.replace("SCALE = 2.0", "SCALE = 2.0; SCALE = 3.0")) is None


def test_each_mutants_edits_are_read_when_first_asked_for():
    mutants = {"sigmoid_sign": SOURCE.replace("-z", "z"), "global": SOURCE.replace("2.0", "3.0")}
    reach = Reach.of(SOURCE, mutants)
    assert dict(reach.edited) == {name: edited_names(SOURCE, source)
                                  for name, source in mutants.items()}
    assert reach.may_differ("sigmoid_sign", frozenset({"cell"}))
    assert not reach.may_differ("sigmoid_sign", frozenset({"loss"}))
    assert reach.may_differ("unknown", frozenset({"loss"}))  # not a mutant: no edits known

def test_what_a_function_uses_includes_a_function_passed_as_a_value():
    graph = uses(SOURCE)
    assert graph["forward"] == {"cell"}  # `step = cell`, never called by name
    assert graph["cell"] == {"sigmoid"}
    reach = Reach(graph, {"sigmoid_sign": frozenset({"sigmoid"}), "loss_sum": frozenset({"loss"}),
                          "global": None})
    assert reach.running({"forward"}) == {"forward", "cell", "sigmoid"}
    assert reach.may_differ("sigmoid_sign", frozenset({"forward"}))
    assert not reach.may_differ("loss_sum", frozenset({"forward"}))
    assert reach.may_differ("global", frozenset({"forward"}))  # an edit outside definitions
    assert reach.may_differ("loss_sum", None)  # unknown calls


def test_helpers_count_by_the_functions_they_name_unless_they_may_run_anything():
    known = uses(SOURCE)
    losses = ("helper:perturbed_losses", ("loss", (1,), [], [], 1e-5))
    assert called_names([("forward", ()), losses], known) == {"forward", "loss"}
    directional = ("helper:directional_losses", ("loss", (1,), [], [], 1e-5))
    assert called_names([("forward", ()), directional], known) == {"forward", "loss"}
    assert called_names([("helper:on_cache", ("cell", (), "forward", (), 2))], known) == {
        "cell", "forward"}
    assert called_names([("forward", ()), ("helper:train_alone", ("cell",))], known) is None


def test_the_lab3_cell_mistakes_reach_the_sequence_checks_but_not_the_torch_ones():
    lab = get_lab("lab3")
    assets = load_lab_assets("lab3")
    reach = assets.reach
    assert reach.graph == uses(strip_markers(lab.solution_path().read_text()))
    assert reach.edited["concat_input_first"] == {"lstm_cell_forward"}
    assert reach.may_differ("concat_input_first", frozenset({"lstm_forward"}))
    assert not reach.may_differ("concat_input_first", frozenset({"lstm_cell"}))
    assert not reach.may_differ("to_torch_gate_order_ifog", frozenset({"lstm_backward"}))


def test_a_call_that_raises_is_still_a_call_the_check_made():
    """A check that expects an error (lab4's conversions) runs the function that raises."""
    import pytest

    from rnngrade.diagnosis.reach import AttemptLog

    class Runner:
        def call(self, function, args, kwargs, **options):
            raise ValueError("no twin")

    log = AttemptLog(Runner())
    with pytest.raises(ValueError):
        log.call("classic_to_torch_gru", ({"Wc": 1},))
    assert called_names(log.calls, {"classic_to_torch_gru"}) == {"classic_to_torch_gru"}

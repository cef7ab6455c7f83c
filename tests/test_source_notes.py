"""Notes read off a submission's source on the trusted side, against the reference's facts."""

from __future__ import annotations

from rnngrade.harness.source.module_builder import salvage
from rnngrade.labs import get_lab
from rnngrade.submission.source_notes import reference_facts, source_notes

LAB1 = get_lab("lab1")
REFERENCE = LAB1.solution_path().read_text(encoding="utf-8")
FACTS = reference_facts(REFERENCE)

GLOBAL_READ = '''
import numpy as np
Waa = np.ones((2, 2))

def rnn_cell_forward(xt, a_prev, parameters):
    return np.tanh(Waa @ a_prev), None
'''


def test_a_function_reading_a_global_parameter_is_named():
    notes = source_notes(GLOBAL_READ, LAB1, FACTS)
    assert len(notes) == 1
    assert notes[0].startswith("`rnn_cell_forward` reads the global `Waa` defined at line 3")


def test_a_global_that_is_no_parameter_key_or_a_parameter_read_properly_is_not_named():
    renamed = GLOBAL_READ.replace("Waa", "Scale")
    assert source_notes(renamed, LAB1, FACTS) == []
    local = GLOBAL_READ.replace("Waa @", "parameters['Waa'] @")
    assert source_notes(local, LAB1, FACTS) == []


def test_facts_default_to_the_solution_file_and_signatures_are_compared():
    wrong = "def softmax(x, axis):\n    return x\n"
    assert source_notes(wrong, LAB1) == source_notes(wrong, LAB1, FACTS) == [
        "`softmax` takes (x, axis); the lab calls it as softmax(x), as the lab README and the "
        "stub define it"]
    assert source_notes("def softmax(x, axis=0):\n    return x\n", LAB1, FACTS) == []


def test_the_parsed_part_given_by_the_caller_is_the_one_read():
    assert source_notes("this does not parse", LAB1, FACTS, salvaged=salvage(GLOBAL_READ)) != []

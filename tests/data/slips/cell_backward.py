"""Formula slips inside a cell's backward pass, each one edit of the course's reference.

Each slip is written as a student would write it (our own code, after the derivations in the
labs' docstrings). ``named`` is the sentence the grader's edit diagnosis gives it
(``rnngrade.diagnosis.edits``), or, for a slip a known mistake describes, that mistake's name;
the public tests must give the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slip:
    name: str
    lab: str
    function: str
    old: str
    new: str
    named: str
    known: bool = False  # named by a known mistake (``named`` is its name), not by an edit


SIGMOID_FT = "`dft` is missing the factor `ft * (1 - ft)` (the derivative of the sigmoid)"
SIGMOID_IT = "`dit` is missing the factor `it * (1 - it)` (the derivative of the sigmoid)"

SLIPS = [
    Slip("dft_without_sigmoid_derivative", "lab3", "lstm_cell_backward",
         "dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_prev", SIGMOID_FT),
    Slip("dot_tanh_of_a_next", "lab3", "lstm_cell_backward",
         "dot = da_next * tanh_c * ot * (1 - ot)",
         "dot = da_next * np.tanh(a_next) * ot * (1 - ot)",
         "`dot` uses `np.tanh(a_next)` where the formula has `np.tanh(c_next)`"),
    Slip("dcct_one_minus_cct", "lab3", "lstm_cell_backward",
         "dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * (1 - cct)",
         "`dcct` uses `1 - cct` where the formula has `1 - cct ** 2` (the derivative of tanh)"),
    Slip("dcct_sigmoid_derivative", "lab3", "lstm_cell_backward",
         "dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * cct * (1 - cct)",
         "`dcct` uses `cct * (1 - cct)` (the derivative of the sigmoid) where the formula has "
         "`1 - cct ** 2` (the derivative of tanh)"),
    Slip("dit_without_sigmoid_derivative", "lab3", "lstm_cell_backward",
         "dit = dc * cct * it * (1 - it)", "dit = dc * cct", SIGMOID_IT),
    Slip("dot_without_sigmoid_derivative", "lab3", "lstm_cell_backward",
         "dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c",
         "output_gate_derivative_missing", known=True),
    Slip("dWf_transposed", "lab3", "lstm_cell_backward",
         '"dWf": dft @ concat.T,', '"dWf": concat @ dft.T,',
         "`dWf` is transposed: its rows and columns are swapped"),
    Slip("dbf_without_keepdims", "lab3", "lstm_cell_backward",
         '"dbf": np.sum(dft, axis=1, keepdims=True),', '"dbf": np.sum(dft, axis=1),',
         "`dbf` uses `np.sum(dft, axis=1)` where the formula has "
         "`np.sum(dft, axis=1, keepdims=True)`"),
    Slip("dz_one_minus_a_next", "lab2", "rnn_cell_backward",
         "dz = (1 - a_next ** 2) * da_next", "dz = (1 - a_next) * da_next",
         "`dz` uses `1 - a_next` where the formula has `1 - a_next ** 2` (the derivative of "
         "tanh)"),
    Slip("dz_sigmoid_derivative", "lab2", "rnn_cell_backward",
         "dz = (1 - a_next ** 2) * da_next", "dz = a_next * (1 - a_next) * da_next",
         "`dz` uses `a_next * (1 - a_next)` (the derivative of the sigmoid) where the formula "
         "has `1 - a_next ** 2` (the derivative of tanh)"),
]

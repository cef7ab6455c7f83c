"""Real students' mistakes, each reproduced as our own edit of the course's reference.

Every variant records a mistake seen in public solutions of the classic "Building your Recurrent
Neural Network - Step by Step" and "Dinosaur Island" assignments (the ``seen`` line says what the
public code did; none of that code is here). ``verdicts`` gives each wrong function and the name of
its mistake; every other function of the variant is correct. ``accepted`` lists further diagnosis
names that describe the same mistake correctly (a structural pattern, a second known mistake that
the combination contains).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    name: str
    lab: str
    seen: str
    edits: tuple[tuple[str, str], ...]
    verdicts: dict[str, str]
    accepted: dict[str, tuple[str, ...]] = field(default_factory=dict)


VARIANTS = [
    # ------------------------------------------------------------------------------- lab1
    Variant(
        "rnn_forward_feeds_a0", "lab1",
        "rnn_forward calls the cell with a0 at every step (and leaves a zero a_next unused)",
        (("rnn_cell_forward(x[:, :, t], a_prev, parameters)",
          "rnn_cell_forward(x[:, :, t], a0, parameters)"),),
        {"rnn_forward": "loop_feeds_a0"}, {"rnn_forward": ("fed_a0_every_step",)}),
    Variant(
        "softmax_of_minus_logits", "lab1",
        "a private softmax helper exponentiates −z",
        (("e = np.exp(shifted)", "e = np.exp(-shifted)"),),
        {"softmax": "softmax_negated_logits"}),
    Variant(
        "rnn_forward_from_zeros", "lab1",
        "the hidden state is initialised with np.zeros(a0.shape) and a0 is never used",
        (("    a_prev = a0\n", "    a_prev = np.zeros(a0.shape)\n"),),
        {"rnn_forward": "state_starts_at_zeros"}, {"rnn_forward": ("initial_state_unused",)}),
    # ------------------------------------------------------------------------------- lab2
    Variant(
        "rnn_backward_da_prevt_typo", "lab2",
        "the gradient from the cell is unpacked into a misspelt name (da_pervt), so the carried "
        "da_prevt stays zero",
        (('        da_prevt = grads["da_prev"]\n    return {"dx": dx, "da0": da_prevt',
          '        da_pervt = grads["da_prev"]\n    return {"dx": dx, "da0": da_prevt'),),
        {"rnn_backward": "da_prev_not_updated"},
        {"rnn_backward": ("gradient_not_carried_back", "recurrent_term_dropped")}),
    Variant(
        "rnn_backward_da0_typo", "lab2",
        "`a0 = da_prevt` written for `da0 = da_prevt`: da0 is returned as the zeros it started as",
        (('return {"dx": dx, "da0": da_prevt,',
          'return {"dx": dx, "da0": np.zeros_like(da_prevt),'),),
        {"rnn_backward": "da0_left_at_zeros"}, {"rnn_backward": ("all_zeros",)}),
    Variant(
        "rnn_backward_da_alone", "lab2",
        "the cell backward is given da[:, :, t] alone",
        (("grads = rnn_cell_backward(da[:, :, t] + da_prevt, cell_caches[t])",
          "grads = rnn_cell_backward(da[:, :, t], cell_caches[t])"),),
        {"rnn_backward": "recurrent_term_dropped"},
        {"rnn_backward": ("gradient_not_carried_back",)}),
    Variant(
        "clip_rebinds_loop_variable", "lab2",
        "`gradient = np.clip(gradient, -maxValue, maxValue)` inside the loop: the dictionary keeps "
        "the unclipped arrays",
        (("return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}",
          "for g in gradients.values():\n        g = np.clip(g, -maxValue, maxValue)\n"
          "    return dict(gradients)"),),
        {"clip": "clip_result_discarded"}),
    # ------------------------------------------------------------------------------- lab3
    Variant(
        "lstm_backward_nothing_carried", "lab3",
        "the cell backward gets da[:, :, t] alone and dc_prevt is never updated (commented out)",
        (("lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, cell_caches[t])",
          "lstm_cell_backward(da[:, :, t], dc_prevt, cell_caches[t])"),
         ('        dc_prevt = grads["dc_prev"]\n', "")),
        {"lstm_backward": "da_not_carried_across_time"},
        {"lstm_backward": ("dc_not_carried_across_time", "gradient_not_carried_back")}),
    Variant(
        "lstm_backward_carried_never_updated", "lab3",
        "da_prevt and dc_prevt are passed to the cell but never updated inside the loop",
        (('        da_prevt = grads["da_prev"]\n', ""),
         ('        dc_prevt = grads["dc_prev"]\n', "")),
        {"lstm_backward": "da_prev_not_updated"},
        {"lstm_backward": ("dc_not_carried_across_time", "gradient_not_carried_back")}),
    Variant(
        "lstm_cell_backward_dc_next_inside", "lab3",
        "dc_next added inside the parentheses of the tanh derivative, in every gate gradient and "
        "in dc_prev",
        (("dc = dc_next + da_next * ot * (1 - tanh_c ** 2)",
          "dc = da_next * ot * (1 - tanh_c ** 2 + dc_next)"),),
        {"lstm_cell_backward": "dc_next_inside_parentheses"}),
    Variant(
        "lstm_forward_feeds_a0_and_c0", "lab3",
        "the cell is called with (a0, c0) at every step, c0 a fresh zero array",
        (("lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)",
          "lstm_cell_forward(x[:, :, t], a0, np.zeros_like(a0), parameters)"),),
        {"lstm_forward": "loop_feeds_a0_and_c0"}, {"lstm_forward": ("fed_a0_every_step",)}),
    Variant(
        "lstm_cell_backward_tanh_of_a_next", "lab3",
        "tanh(a_next) where tanh(c_next) belongs in the cell-state gradient",
        (("tanh_c = np.tanh(c_next)", "tanh_c = np.tanh(a_next)"),),
        {"lstm_cell_backward": "tanh_of_a_next_for_c_next"}),
    Variant(
        "lstm_forward_from_zeros", "lab3",
        "a_next initialised to zeros instead of a0",
        (("    a_next = a0\n", "    a_next = np.zeros_like(a0)\n"),),
        {"lstm_forward": "state_starts_at_zeros"}, {"lstm_forward": ("initial_state_unused",)}),
    Variant(
        "lstm_backward_weight_grads_reassigned", "lab3",
        "dWf = gradients['dWf'] (and the others) inside the loop instead of +=",
        (("totals[name] += grads[name]", "totals[name] = grads[name]"),),
        {"lstm_backward": "weight_grads_overwritten"},
        {"lstm_backward": ("not_carried_across_time",)}),
    # ------------------------------------------------------- in-place writes and sequence slips
    Variant(
        "lstm_cell_forward_c_prev_in_place", "lab3",
        "the new cell state is built in the c_prev array (c_prev *= ft; c_prev += it * cct)",
        (("c_next = ft * c_prev + it * cct",
          "c_prev *= ft\n    c_prev += it * cct\n    c_next = c_prev"),),
        {"lstm_cell_forward": "result_written_into_argument"}),
    Variant(
        "lstm_cell_forward_multiply_out", "lab3",
        "np.multiply(ft, c_prev, out=c_prev): the forget gate applied into the caller's array",
        (("c_next = ft * c_prev + it * cct",
          "c_next = np.multiply(ft, c_prev, out=c_prev)\n    c_next += it * cct"),),
        {"lstm_cell_forward": "result_written_into_argument"}),
    Variant(
        "lstm_forward_c_not_carried", "lab3",
        "the cell is given a fresh zero cell state at every step, the hidden state carried",
        (("lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)",
          "lstm_cell_forward(x[:, :, t], a_next, np.zeros_like(a0), parameters)"),),
        {"lstm_forward": "state_not_carried"}, {"lstm_forward": ("not_carried_across_time",)}),
    Variant(
        "rnn_backward_dWaa_overwritten", "lab2",
        "dWaa = gradients['dWaa'] inside the loop, dWax and dba summed",
        (('dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]'),),
        {"rnn_backward": "sum_not_accumulated"}, {"rnn_backward": ("weight_grads_overwritten",)}),
    Variant(
        "lstm_backward_dWo_overwritten", "lab3",
        "the output gate's weight gradient assigned at every step, the others summed",
        (("        for name in totals:\n            totals[name] += grads[name]\n",
          "        for name in totals:\n            if name == 'dWo':\n"
          "                totals[name] = grads[name]\n            else:\n"
          "                totals[name] += grads[name]\n"),),
        {"lstm_backward": "sum_not_accumulated"},
        # the gradient check (expected: all ones) cannot tell the slip apart: it locates the
        # mistake on the output gate's path, and weight_grads_overwritten (every gradient
        # overwritten) no longer matches, since it changes gradients the student has right
        {"lstm_backward": ("weight_grads_overwritten", "output_gate_path")}),
    Variant(
        "lstm_layer_final_state_early", "lab3",
        "(h_n, c_n) saved at the start of each step and returned after the loop: the states "
        "before the last step",
        (("    outputs = []\n    for t in range(x.shape[1]):\n"
          "        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)\n"
          "        outputs.append(h)\n    return torch.stack(outputs, dim=1), (h, c)",
          "    outputs = []\n    for t in range(x.shape[1]):\n        h_n, c_n = h, c\n"
          "        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)\n"
          "        outputs.append(h)\n    return torch.stack(outputs, dim=1), (h_n, c_n)"),),
        {"lstm_layer": "last_state_one_step_early"}),
]

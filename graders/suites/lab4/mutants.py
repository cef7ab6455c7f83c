"""Known mistakes of lab4 (GRU and masking) as edits of solutions/lab4/gru.py."""

from __future__ import annotations

from rnngrade.suite import Mutant

MUTANTS: list[Mutant] = [
    # ---- gru_cell_forward (classic form) ----
    Mutant(
        name="classic_update_gate_swapped",
        function="gru_cell_forward",
        description="a_next = (1 − u)⊙cc + u⊙a_prev: the update gate's direction is reversed",
        hint="Check which term the update gate u multiplies in a⟨t⟩: in the classic GRU, u = 1 "
        "means 'take the new candidate', u = 0 means 'keep the old state'.",
        edits=(("a_next = u * cc + (1 - u) * a_prev", "a_next = (1 - u) * cc + u * a_prev"),),
    ),
    Mutant(
        name="classic_reset_after_product",
        function="gru_cell_forward",
        description="candidate computed PyTorch-style: r⊙(Wc_a·a_prev) instead of Wc_a·(r⊙a_prev)",
        hint="Look at where the reset gate enters the candidate cc. In the classic form it "
        "multiplies the previous state before the product with Wc, not the product's result.",
        edits=(
            (
                "cc = np.tanh(np.dot(Wc, concat_reset) + bc)",
                "cc = np.tanh(r * np.dot(Wc[:, : a_prev.shape[0]], a_prev)"
                " + np.dot(Wc[:, a_prev.shape[0] :], xt) + bc)",
            ),
        ),
    ),
    Mutant(
        name="classic_reset_gate_ignored",
        function="gru_cell_forward",
        description="candidate computed from [a_prev; xt]: the reset gate is never used",
        hint="Your candidate cc does not depend on the reset gate r. Which vector does Wc "
        "multiply?",
        edits=(
            (
                "concat_reset = np.concatenate([r * a_prev, xt], axis=0)  # reset applied",
                "concat_reset = np.concatenate([a_prev, xt], axis=0)  # reset applied",
            ),
        ),
    ),
    Mutant(
        name="classic_concat_order_swapped",
        function="gru_cell_forward",
        description="gates act on [xt; a_prev] instead of [a_prev; xt]",
        hint="Check the order in which you stack the hidden state and the input before the "
        "products with Wu, Wr and Wc: the first n_a columns of each weight act on the state.",
        edits=(
            (
                "concat = np.concatenate([a_prev, xt], axis=0)  # (n_a + n_x, m)",
                "concat = np.concatenate([xt, a_prev], axis=0)  # (n_a + n_x, m)",
            ),
            (
                "concat_reset = np.concatenate([r * a_prev, xt], axis=0)  # reset applied",
                "concat_reset = np.concatenate([xt, r * a_prev], axis=0)  # reset applied",
            ),
        ),
    ),
    # ---- gru_cell_backward ----
    Mutant(
        name="backward_direct_path_dropped",
        function="gru_cell_backward",
        description="da_prev misses the direct path da_next⊙(1 − u)",
        hint="a_prev reaches a_next along several paths. Your da_prev misses the one that does "
        "not go through any gate or the candidate.",
        edits=(("        + da_next * (1 - u)  # the direct path (1 − u) ⊙ a_prev\n", ""),),
    ),
    Mutant(
        name="backward_reset_path_dropped",
        function="gru_cell_backward",
        description="da_prev misses the path through r⊙a_prev inside the candidate",
        hint="a_prev enters the candidate cc (multiplied by r). Does your da_prev include the "
        "gradient that flows back along that path?",
        edits=(("        + dreset_state * r  # through r ⊙ a_prev in the candidate\n", ""),),
    ),
    Mutant(
        name="backward_update_sign_flipped",
        function="gru_cell_backward",
        description="du = da_next⊙(a_prev − cc): derivative of a_next with respect to u has the "
        "wrong sign",
        hint="Differentiate a⟨t⟩ = u⊙cc + (1 − u)⊙a⟨t−1⟩ with respect to u once more; check the "
        "sign of your du.",
        edits=(("du = da_next * (cc - a_prev)", "du = da_next * (a_prev - cc)"),),
        patterns=("opposite_sign",),
    ),
    Mutant(
        name="backward_tanh_derivative_missing",
        function="gru_cell_backward",
        description="the candidate's gradient skips tanh′ = 1 − cc²",
        hint="The candidate is cc = tanh(…). Did you multiply by the derivative of tanh before "
        "going back into Wc and bc?",
        edits=(("dzc = dcc * (1 - cc**2)", "dzc = dcc"),),
    ),
    # ---- gru_cell (PyTorch form) ----
    Mutant(
        name="update_gate_swapped",
        function="gru_cell",
        description="h_new = z⊙n + (1 − z)⊙h: the classic direction used in the PyTorch form",
        hint="In PyTorch's GRU the update gate z keeps the old state: z = 1 means 'keep h'. "
        "Check which term z multiplies in h_new.",
        edits=(("h_new = (1 - z) * n + z * h", "h_new = z * n + (1 - z) * h"),),
    ),
    Mutant(
        name="reset_before_product",
        function="gru_cell",
        description="candidate uses (r⊙h)·W_hnᵀ + b_hn (classic style) instead of "
        "r⊙(h·W_hnᵀ + b_hn)",
        hint="Look at where the reset gate enters n. In PyTorch's form it multiplies the result "
        "of the hidden product (bias included), not the hidden state itself.",
        edits=(
            (
                "n = torch.tanh(xn + r * hn)",
                "n = torch.tanh(xn + (r * h) @ W_hh.chunk(3)[2].T + b_hh.chunk(3)[2])",
            ),
        ),
    ),
    Mutant(
        name="hidden_bias_outside_reset",
        function="gru_cell",
        description="b_hn added outside the reset gate (biases summed first): r⊙(h·W_hnᵀ) + b_hn",
        hint="The two bias vectors are interchangeable for r and z but not for n: check which "
        "bias sits inside the reset gate's product.",
        edits=(
            (
                "n = torch.tanh(xn + r * hn)",
                "n = torch.tanh(xn + b_hh.chunk(3)[2] + r * (hn - b_hh.chunk(3)[2]))",
            ),
        ),
    ),
    Mutant(
        name="gate_order_zrn",
        function="gru_cell",
        description="weight blocks read in the order z, r, n instead of PyTorch's r, z, n",
        hint="Check the order of the three row blocks of W_ih, W_hh and the biases: PyTorch "
        "stores them as reset, update, new.",
        edits=(
            ("xr, xz, xn = (x @ W_ih.T", "xz, xr, xn = (x @ W_ih.T"),
            ("hr, hz, hn = (h @ W_hh.T", "hz, hr, hn = (h @ W_hh.T"),
        ),
    ),
    # ---- gru_layer ----
    Mutant(
        name="padded_steps_update_state",
        function="gru_layer",
        description="the state keeps updating at padded steps (outputs are still zeroed)",
        hint="Your outputs look right but the final state of the shorter sequences does not. "
        "What should happen to the state at a step t >= lengths[b]?",
        edits=(("h = torch.where(real, h_new, h)", "h = h_new"),),
    ),
    Mutant(
        name="lengths_ignored",
        function="gru_layer",
        description="lengths ignored: every sequence runs all T steps",
        hint="Your layer treats the padding as real input. Where do you use lengths?",
        edits=(("if lengths is None:", "if True:"),),
    ),
    Mutant(
        name="padded_outputs_not_zeroed",
        function="gru_layer",
        description="padded steps output the frozen state instead of zeros",
        hint="Check the outputs at padded steps (t >= lengths[b]): what does nn.GRU put there "
        "after pad_packed_sequence?",
        edits=(
            (
                "outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))",
                "outputs.append(h)",
            ),
        ),
    ),
    Mutant(
        name="lengths_off_by_one",
        function="gru_layer",
        description="step t treated as real when t <= lengths[b] (one padded step too many)",
        hint="Check the comparison that decides whether step t of sequence b is real. Time "
        "steps are counted from 0.",
        edits=(("real = (t < lengths)", "real = (t <= lengths)"),),
    ),
    # ---- classic_to_torch_gru ----
    Mutant(
        name="update_not_negated",
        function="classic_to_torch_gru",
        description="z blocks copied from Wu, bu without negation (z = u instead of z = 1 − u)",
        hint="PyTorch's update gate is z = 1 − u. How do you write 1 − σ(s) as a sigmoid, and "
        "what does that mean for the update weights and bias?",
        edits=(("-Wu_x", "Wu_x"), ("-Wu_a", "Wu_a"), ("-bu", "bu")),
    ),
    Mutant(
        name="update_bias_not_negated",
        function="classic_to_torch_gru",
        description="update weights negated but the update bias bu is not",
        hint="z = 1 − u = σ(−(…)): the minus sign applies to everything inside the sigmoid, "
        "bias included.",
        edits=(("-bu", "bu"),),
    ),
    Mutant(
        name="classic_gate_order",
        function="classic_to_torch_gru",
        description="blocks stacked in the order z, r, n instead of r, z, n",
        hint="Check the order in which you stack the three gates: PyTorch expects reset, "
        "update, new.",
        edits=(
            ("[Wr_x, -Wu_x, Wc_x]", "[-Wu_x, Wr_x, Wc_x]"),
            ("[Wr_a, -Wu_a, Wc_a]", "[-Wu_a, Wr_a, Wc_a]"),
            ("[br, -bu, bc]", "[-bu, br, bc]"),
        ),
    ),
    Mutant(
        name="candidate_bias_in_bias_hh",
        function="classic_to_torch_gru",
        description="the classic biases put into bias_hh, so bc ends up inside the reset gate",
        hint="The two bias vectors are not interchangeable for the candidate n: one of them is "
        "multiplied by the reset gate. Where should bc go?",
        edits=(
            (
                "bias_ih = np.concatenate([br, -bu, bc], axis=0).reshape(-1)\n"
                "    bias_hh = np.zeros(3 * n_a, dtype=bu.dtype)",
                "bias_hh = np.concatenate([br, -bu, bc], axis=0).reshape(-1)\n"
                "    bias_ih = np.zeros(3 * n_a, dtype=bu.dtype)",
            ),
        ),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="no_value_error",
        function="classic_to_torch_gru",
        description="returns a state dict even when Wc's hidden block is non-zero",
        hint="Not every classic GRU has a PyTorch twin: when the reset gate matters, the two forms "
        "compute different things. Which parameters make the conversion impossible?",
        edits=(("if np.any(Wc_a != 0):", "if False:"),),
    ),
]

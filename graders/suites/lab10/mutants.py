"""Known lab 10 mistakes, each written as an edit of the reference ``solutions/lab10/memory.py``
(the README's "Known mistakes")."""

from rnngrade.suite import Mutant

_FORGET_SLICE = ("core.bias_ih_l0[64:128].fill_(forget_bias)\n"
                 "                core.bias_hh_l0[64:128].zero_()")

MUTANTS = [
    # --- gradient_ratio ----------
    Mutant(
        name="ratio_indexed_by_time",
        function="gradient_ratio",
        description="ratio[t] = ‖∂L/∂x_t‖ / ‖∂L/∂x_{T−1}‖ indexed by time, not flipped to lag",
        hint="Entry 0 of the result is lag 0, the last input, and entry T − 1 the first input. "
        "Which end of your array is which?",
        edits=(("    by_lag = norms[::-1]\n    last = by_lag[0]",
                "    by_lag = norms\n    last = norms[-1]"),),
    ),
    Mutant(
        name="ratio_over_max",
        function="gradient_ratio",
        description="the norms divided by their maximum instead of the norm at lag 0",
        hint="The ratio compares each input with the last one, so ratio[0] is 1 and ratios "
        "above 1 are possible. What did you divide by?",
        edits=(("    last = by_lag[0]", "    last = by_lag.max()"),),
    ),
    Mutant(
        name="norms_in_float32",
        function="gradient_ratio",
        description="the gradient norms taken in float32: squares below 1e-45 underflow and "
        "ratios below about 1e-22 become 0 or lose their digits",
        hint="Your smallest ratios are 0 or wrong where they should be tiny but positive. In "
        "which precision are the squares of the gradient summed?",
        edits=(("vector_norm(grad.detach().cpu().double(), dim=(0, 2))",
                "vector_norm(grad.detach().cpu().float(), dim=(0, 2))"),),
    ),
    Mutant(
        name="loss_on_every_step",
        function="gradient_ratio",
        description="L summed over every step's output instead of the last step's only",
        hint="The loss reads only the last step's output h_T. Which outputs does your loss "
        "read?",
        edits=(("loss = (out[:, -1, :] @ readout", "loss = (out @ readout"),),
    ),
    # --- closed forms ----------
    Mutant(
        name="half_life_is_time_constant",
        function="half_life",
        description="the half-life computed as the time constant 1/(1 − f)",
        hint="The half-life is the number of steps n with f^n = 1/2. Is that what you "
        "computed, or the time constant?",
        edits=(("    return np.log(0.5) / np.log(f)", "    return 1.0 / (1.0 - f)"),),
    ),
    Mutant(
        name="chrono_log_T",
        function="chrono_forget_bias",
        description="the chrono bias as ln T instead of ln(T − 1)",
        hint="Solve 1 + e^b = T for b: is that the bias you return?",
        edits=(("    return np.log(steps - 1.0)", "    return np.log(steps)"),),
    ),
    Mutant(
        name="gru_retention_is_u",
        function="gru_half_life",
        description="the GRU half-life with retention u instead of 1 − u (the PyTorch z "
        "convention mixed in)",
        hint="In the classic convention the old state is kept with weight 1 − u. Which "
        "retention did you pass on?",
        edits=(("    return half_life(1.0 - u)", "    return half_life(u)"),),
    ),
    # --- recall_batch ----------
    Mutant(
        name="label_from_last_token",
        function="recall_batch",
        description="the target taken from the last token (always the blank) instead of the "
        "first",
        hint="The target is the symbol the model must remember. Which token of the row holds "
        "it?",
        edits=(("    return x, first.clone()", "    return x, x[:, -1].clone()"),),
    ),
    Mutant(
        name="blank_is_zero",
        function="recall_batch",
        description="the blank coded 0 (one of the symbols) instead of 8",
        hint="Symbols are 0..7. Which token stands for 'nothing here'?",
        edits=(("x = torch.full((batch, lag + 1), BLANK,", "x = torch.full((batch, lag + 1), 0,"),),
    ),
    # --- train_recall ----------
    Mutant(
        name="forget_bias_in_both_vectors",
        function="train_recall",
        description="the forget bias written into bias_ih_l0 and bias_hh_l0: the effective "
        "bias is doubled",
        hint="nn.LSTM adds its two bias vectors. What is the sum of the two forget slices in "
        "your model?",
        edits=((_FORGET_SLICE, "core.bias_ih_l0[64:128].fill_(forget_bias)\n"
                "                core.bias_hh_l0[64:128].fill_(forget_bias)"),),
    ),
    Mutant(
        name="forget_slice_is_input_gate",
        function="train_recall",
        description="the forget bias written into the slice [0:H], the input gate",
        hint="PyTorch stacks the LSTM's gates in the order i, f, g, o. Which block of the "
        "bias vectors belongs to the forget gate?",
        edits=((_FORGET_SLICE, "core.bias_ih_l0[0:64].fill_(forget_bias)\n"
                "                core.bias_hh_l0[0:64].zero_()"),),
    ),
    Mutant(
        name="forget_slice_is_cell_gate",
        function="train_recall",
        description="the forget bias written into the slice [2H:3H], the candidate g",
        hint="PyTorch stacks the LSTM's gates in the order i, f, g, o. Which block of the "
        "bias vectors belongs to the forget gate?",
        edits=((_FORGET_SLICE, "core.bias_ih_l0[128:192].fill_(forget_bias)\n"
                "                core.bias_hh_l0[128:192].zero_()"),),
    ),
    Mutant(
        name="no_clipping",
        function="train_recall",
        description="the training loop does not clip the gradient norm",
        hint="Each update clips the global gradient norm to 1 before the optimiser steps. "
        "Does yours?",
        edits=(("        nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n", ""),),
    ),
    Mutant(
        name="adam_not_adamw",
        function="train_recall",
        description="Adam instead of AdamW (no decoupled weight decay)",
        hint="Which optimiser does the README prescribe, and does yours decay the weights?",
        edits=(("torch.optim.AdamW(model.parameters(), lr=3e-3)",
                "torch.optim.Adam(model.parameters(), lr=3e-3)"),),
    ),
    Mutant(
        name="learning_rate_1e-3",
        function="train_recall",
        description="learning rate 1e-3 instead of 3e-3",
        hint="Check the optimiser's learning rate against the README.",
        edits=(("torch.optim.AdamW(model.parameters(), lr=3e-3)",
                "torch.optim.AdamW(model.parameters(), lr=1e-3)"),),
    ),
]

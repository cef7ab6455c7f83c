"""Known lab 3 mistakes, each written as an edit of the reference ``solutions/lab3/lstm.py``."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- lstm_cell_forward ---------------------------------------------------------------------
    Mutant(
        name="concat_input_first",
        function="lstm_cell_forward",
        description="concat = [xt; a_prev] instead of [a_prev; xt]",
        hint="Check the order in which you stack a_prev and xt: the gate weights expect the "
        "hidden-state rows first.",
        edits=(
            (
                "concat = np.concatenate((a_prev, xt), axis=0)\n    ft",
                "concat = np.concatenate((xt, a_prev), axis=0)\n    ft",
            ),
        ),
    ),
    Mutant(
        name="a_next_tanh_missing",
        function="lstm_cell_forward",
        description="a_next = ot ⊙ c_next (tanh of the cell state missing)",
        hint="Look at how a_next is computed from the output gate and the cell state: the cell "
        "state is squashed before the output gate lets it through.",
        edits=(("a_next = ot * np.tanh(c_next)", "a_next = ot * c_next"),),
        patterns=("not_carried_across_time",),
    ),
    Mutant(
        name="c_next_tanh_on_c_prev",
        function="lstm_cell_forward",
        description="c_next = ft ⊙ tanh(c_prev) + it ⊙ cct (tanh applied to the old cell state)",
        hint="Look at the cell-state update. The forget gate scales the previous cell state as "
        "it is; no nonlinearity is applied to c_prev.",
        edits=(("c_next = ft * c_prev + it * cct", "c_next = ft * np.tanh(c_prev) + it * cct"),),
        patterns=("not_carried_across_time",),
    ),
    Mutant(
        name="forget_and_update_gates_swapped",
        function="lstm_cell_forward",
        description="the update gate scales c_prev and the forget gate scales the candidate",
        hint="Check which gate multiplies which term of c_next: the forget gate decides how "
        "much of the old memory to keep, the update gate how much of the candidate to write.",
        edits=(("c_next = ft * c_prev + it * cct", "c_next = it * c_prev + ft * cct"),),
    ),
    # --- lstm_forward --------------------------------------------------------------------------
    Mutant(
        name="c0_from_a0",
        function="lstm_forward",
        description="the initial cell state is a0 instead of zeros",
        hint="Check how you initialise the cell state before the first step: the lab starts the "
        "memory empty, whatever the initial hidden state is.",
        edits=(("c_next = np.zeros_like(a0)", "c_next = a0"),),
        patterns=("initial_state_unused",),
    ),
    # --- lstm_cell_backward --------------------------------------------------------------------
    Mutant(
        name="dc_missing_path_through_a_next",
        function="lstm_cell_backward",
        description="dc = dc_next, without the da_next ⊙ ot ⊙ (1 − tanh²(c_next)) term",
        hint="c_next influences the loss twice: directly, and through a_next = ot ⊙ tanh(c_next). "
        "Does your cell-state gradient include the second path?",
        edits=(("dc = dc_next + da_next * ot * (1 - tanh_c ** 2)", "dc = dc_next"),),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="tanh_derivative_squared_wrong",
        function="lstm_cell_backward",
        description="tanh'(c_next) written (1 − tanh c_next)² instead of 1 − tanh² c_next",
        hint="Check the derivative of tanh in your cell-state gradient, and in particular "
        "what the square applies to.",
        edits=(("(1 - tanh_c ** 2)", "(1 - tanh_c) ** 2"),),
    ),
    Mutant(
        name="dc_prev_without_forget_gate",
        function="lstm_cell_backward",
        description="dc_prev = dc instead of dc ⊙ ft",
        hint="c_prev enters c_next multiplied by the forget gate. Does the gradient you send "
        "back to c_prev go through that factor?",
        edits=(('"dc_prev": dc * ft,', '"dc_prev": dc,'),),
        patterns=("gradient_not_carried_back",),
    ),
    # --- lstm_backward -------------------------------------------------------------------------
    Mutant(
        name="dc_not_carried_across_time",
        function="lstm_backward",
        description="the cell-state gradient from step t+1 is not passed to step t",
        hint="Two gradients flow backwards through time in an LSTM. Check that the cell-state "
        "gradient a step returns is given to the step before it.",
        edits=(('        dc_prevt = grads["dc_prev"]\n', ""),),
        patterns=("gradient_not_carried_back",),
    ),
    Mutant(
        name="da_not_carried_across_time",
        function="lstm_backward",
        description="the hidden-state gradient from step t+1 is not added to da[:, :, t]",
        hint="The hidden state of step t also fed step t+1, so the gradient from the next step "
        "(the da_prev that step t+1 returned) belongs in what you pass to step t: "
        "da[:, :, t] + da_prevt, not da[:, :, t] alone.",
        edits=(
            (
                "lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, cell_caches[t])",
                "lstm_cell_backward(da[:, :, t], dc_prevt, cell_caches[t])",
            ),
        ),
        patterns=("gradient_not_carried_back",),
    ),
    # --- lstm_cell (torch) ---------------------------------------------------------------------
    Mutant(
        name="gate_order_ifog",
        function="lstm_cell",
        description="gate blocks read in the order i, f, o, g instead of PyTorch's i, f, g, o",
        hint="Check the order of the four gate blocks in PyTorch's weight matrices; it is not "
        "the order in which the equations are usually written.",
        edits=(("i, f, g, o = gates.chunk(4, dim=1)", "i, f, o, g = gates.chunk(4, dim=1)"),),
    ),
    Mutant(
        name="bias_hh_dropped",
        function="lstm_cell",
        description="only b_ih added: the second bias vector b_hh is ignored",
        hint="PyTorch's LSTM adds two bias vectors. Check that both reach the gates.",
        edits=(("+ h @ W_hh.T + b_hh", "+ h @ W_hh.T"),),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="h_new_tanh_missing",
        function="lstm_cell",
        description="h_new = o ⊙ c_new (tanh of the new cell state missing)",
        hint="Look at how h_new is computed from the output gate and the new cell state: the "
        "cell state is squashed first.",
        edits=(
            (
                "h_new = torch.sigmoid(o) * torch.tanh(c_new)",
                "h_new = torch.sigmoid(o) * c_new",
            ),
        ),
    ),
    # --- lstm_layer ----------------------------------------------------------------------------
    Mutant(
        name="layer_keeps_feeding_h0",
        function="lstm_layer",
        description="every step starts from (h0, c0) instead of the previous step's states",
        hint="Each step must start from the states the previous step produced. Check which "
        "states you pass to the cell inside your loop.",
        edits=(
            (
                "h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)",
                "h, c = lstm_cell(x[:, t], h0, c0, W_ih, W_hh, b_ih, b_hh)",
            ),
        ),
        patterns=("all_zeros",),
    ),
    # --- to_torch_lstm -------------------------------------------------------------------------
    Mutant(
        name="to_torch_gate_order_ifog",
        function="to_torch_lstm",
        description="gates stacked in the order i, f, o, g (c and o swapped)",
        hint="PyTorch stacks the four gate blocks in one fixed order. Check it against the "
        "nn.LSTM documentation; the candidate (your c) is not last.",
        edits=(('order = ("i", "f", "c", "o")', 'order = ("i", "f", "o", "c")'),),
    ),
    Mutant(
        name="to_torch_classic_gate_order",
        function="to_torch_lstm",
        description="gates stacked in the classic order f, i, c, o",
        hint="The order of the gates in the classic equations (f, i, c, o) is not the order "
        "PyTorch stacks them in. Check the nn.LSTM documentation.",
        edits=(('order = ("i", "f", "c", "o")', 'order = ("f", "i", "c", "o")'),),
    ),
    Mutant(
        name="to_torch_input_columns_first",
        function="to_torch_lstm",
        description="the classic weights split as if concat were [xt; a_prev]",
        hint="The classic gate weights act on [a_prev; xt]: which columns belong to the hidden "
        "state and which to the input?",
        edits=(
            ('"weight_ih_l0": W[:, n_a:],', '"weight_ih_l0": W[:, : W.shape[1] - n_a],'),
            ('"weight_hh_l0": W[:, :n_a],', '"weight_hh_l0": W[:, W.shape[1] - n_a :],'),
        ),
    ),
    Mutant(
        name="to_torch_bias_in_both_vectors",
        function="to_torch_lstm",
        description="classic bias copied into both bias_ih and bias_hh (effective bias doubled)",
        hint="nn.LSTM adds bias_ih and bias_hh. Check that their sum, not each of them, equals "
        "the classic bias.",
        edits=(('"bias_hh_l0": np.zeros_like(b),', '"bias_hh_l0": b,'),),
        patterns=("constant_factor",),
    ),
    # --- set_forget_bias -----------------------------------------------------------------------
    Mutant(
        name="forget_slice_off_by_one_block",
        function="set_forget_bias",
        description="the first block [0:H] (the input gate) set instead of the forget block",
        hint="Check which of the four blocks of the bias vectors belongs to the forget gate in "
        "PyTorch's gate order.",
        edits=(("forget = slice(hidden, 2 * hidden)", "forget = slice(0, hidden)"),),
    ),
    Mutant(
        name="forget_slice_candidate_block",
        function="set_forget_bias",
        description="the third block [2H:3H] (the candidate g) set instead of the forget block",
        hint="Check which of the four blocks of the bias vectors belongs to the forget gate in "
        "PyTorch's gate order.",
        edits=(("forget = slice(hidden, 2 * hidden)", "forget = slice(2 * hidden, 3 * hidden)"),),
    ),
    Mutant(
        name="forget_bias_in_both_vectors",
        function="set_forget_bias",
        description="value written into bias_ih and bias_hh, so the forget gate applies 2·value",
        hint="The gate applies the sum bias_ih + bias_hh. Check what that sum is after your "
        "function ran.",
        edits=(("param[forget] = 0.0", "param[forget] = value"),),
    ),
    Mutant(
        name="forget_bias_hh_left_alone",
        function="set_forget_bias",
        description="only bias_ih set; the forget part of bias_hh keeps its old value",
        hint="The gate applies the sum bias_ih + bias_hh. Setting one of them is not enough "
        "when the other is not zero.",
        edits=(("param[forget] = 0.0", "pass"),),
    ),
    Mutant(
        name="forget_bias_first_layer_only",
        function="set_forget_bias",
        description="only the first layer's (forward direction's) biases changed",
        hint="An nn.LSTM can have several layers (and two directions); every one of them has "
        "its own biases.",
        edits=(
            (
                "for name, param in lstm.named_parameters():",
                "for name, param in list(lstm.named_parameters())[:4]:",
            ),
        ),
    ),
    # --- mistakes seen in real classic submissions ---------------------------------------------
    Mutant(
        name="output_gate_missing",
        function="lstm_cell_forward",
        description="a_next = tanh(c_next), without the output gate",
        hint="Look at how a_next is computed: the output gate decides how much of the squashed "
        "cell state is let through.",
        edits=(("a_next = ot * np.tanh(c_next)", "a_next = np.tanh(c_next)"),),
        patterns=("not_carried_across_time",),
    ),
    Mutant(
        name="prediction_from_a_prev",
        function="lstm_cell_forward",
        description="yt_pred computed from a_prev instead of a_next",
        hint="The prediction of this step is made from the hidden state this step produces. "
        "Which state do you feed to Wy?",
        edits=(('softmax(parameters["Wy"] @ a_next', 'softmax(parameters["Wy"] @ a_prev'),),
        patterns=("off_by_one_step",),
    ),
    Mutant(
        name="state_starts_at_zeros",
        function="lstm_forward",
        description="the hidden state starts at zeros instead of a0",
        hint="Check what your loop starts from before the first step: the initial hidden state "
        "is given to you as an argument (only the cell state starts at zeros).",
        edits=(("    a_next = a0\n", "    a_next = np.zeros_like(a0)\n"),),
        patterns=("initial_state_unused",),
    ),
    Mutant(
        name="loop_starts_at_one",
        function="lstm_forward",
        description="the time loop starts at t = 1, so step 0 is never computed",
        hint="Python's range starts where you tell it to. Does your loop visit every time step, "
        "the first one included?",
        edits=(("for t in range(T_x):", "for t in range(1, T_x):"),),
        patterns=("all_zeros", "off_by_one_step",),
    ),
    Mutant(
        name="loop_feeds_a0",
        function="lstm_forward",
        description="every step is given a0 as its previous hidden state",
        hint="Each step must start from the hidden state the previous step produced. Check "
        "which state you pass to the cell inside your loop.",
        edits=(("lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)",
                "lstm_cell_forward(x[:, :, t], a0, c_next, parameters)"),),
        patterns=("not_carried_across_time",),
    ),
    Mutant(
        name="c_aliased_to_a",
        function="lstm_forward",
        description="c is the same array as a (c = a), so the cell states overwrite the hidden "
        "states",
        hint="Assigning one NumPy array to another name does not copy it. Are a and c two "
        "separate arrays in your code?",
        edits=(("    c = np.zeros((n_a, m, T_x), dtype=x.dtype)\n", "    c = a\n"),),
    ),
    Mutant(
        name="tanh_of_a_next_for_c_next",
        function="lstm_cell_backward",
        description="tanh(a_next) used where tanh(c_next) belongs",
        hint="a_next = ot ⊙ tanh(c_next): the tanh in the gradient is the one of the cell "
        "state. Check which state you take the tanh of.",
        edits=(("tanh_c = np.tanh(c_next)", "tanh_c = np.tanh(a_next)"),),
    ),
    Mutant(
        name="output_gate_derivative_missing",
        function="lstm_cell_backward",
        description="dot = da_next ⊙ tanh(c_next), without the sigmoid's derivative ot ⊙ (1 − ot)",
        hint="The gate gradients are taken with respect to the gates' pre-activations. Check "
        "that the output gate's gradient goes through the derivative of its sigmoid.",
        edits=(("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c"),),
    ),
    Mutant(
        name="update_gate_derivative_missing_it",
        function="lstm_cell_backward",
        description="dit = dc ⊙ cct ⊙ (1 − it): the factor it of the sigmoid's derivative missing",
        hint="The derivative of σ is σ ⊙ (1 − σ). Check both factors in the update gate's "
        "gradient.",
        edits=(("dit = dc * cct * it * (1 - it)", "dit = dc * cct * (1 - it)"),),
    ),
    Mutant(
        name="candidate_derivative_extra_factor",
        function="lstm_cell_backward",
        description="dcct = dc ⊙ it ⊙ cct ⊙ (1 − cct²): an extra factor cct",
        hint="Check the candidate's gradient: the derivative of tanh is 1 − tanh², with no "
        "further factor of the candidate itself.",
        edits=(("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it * cct * (1 - cct ** 2)"),),
    ),
    Mutant(
        name="weight_grads_overwritten",
        function="lstm_backward",
        description="the weight and bias gradients are overwritten at every step instead of "
        "summed over time",
        hint="The weights are shared by all time steps. Check that dWf, dbf, … collect the "
        "contribution of every step rather than keeping only one of them.",
        edits=(("totals[name] += grads[name]", "totals[name] = grads[name]"),),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="da_prev_not_updated",
        function="lstm_backward",
        description="da_prevt never updated inside the loop: every step adds the zeros it "
        "started with",
        hint="You add da_prevt to da[:, :, t], but is it ever given the da_prev that the step "
        "you just processed returned? Check what happens to it inside the loop.",
        edits=(('        da_prevt = grads["da_prev"]\n', ""),),
        patterns=("gradient_not_carried_back",),
    ),
    Mutant(
        name="dc_next_inside_parentheses",
        function="lstm_cell_backward",
        description="dc = da_next ⊙ ot ⊙ (1 − tanh²(c_next) + dc_next): dc_next added inside the "
        "parentheses instead of to the whole product",
        hint="The cell-state gradient is the sum of two paths: dc_next, plus the path through "
        "a_next. Check where your parentheses close.",
        edits=(("dc = dc_next + da_next * ot * (1 - tanh_c ** 2)",
                "dc = da_next * ot * (1 - tanh_c ** 2 + dc_next)"),),
        patterns=("all_zeros", "gradient_not_carried_back",),
    ),
]

"""Known lab1 mistakes, as edits of the reference (see docs/AUTHORING.md)."""

from rnngrade.suite import Mutant

MUTANTS = [
    Mutant(
        name="recurrent_term_dropped",
        function="rnn_cell_forward",
        description="a_next computed without the recurrent term Waa·a_prev",
        hint="Your new hidden state does not depend on the previous one. Which term of the "
        "pre-activation carries the past into the present?",
        edits=(("np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba", "np.dot(Wax, xt) + ba"),),
        patterns=("recurrent_term",),
    ),
    Mutant(
        name="prediction_from_a_prev",
        function="rnn_cell_forward",
        description="yt_pred computed from a_prev instead of a_next",
        hint="The prediction at step t should read the hidden state you have just computed. "
        "Check which state goes into Wya·(...).",
        edits=(("logits = np.dot(Wya, a_next) + by", "logits = np.dot(Wya, a_prev) + by"),),
        patterns=("off_by_one_step",),
    ),
    Mutant(
        name="softmax_wrong_axis",
        function="softmax",
        description="softmax normalised over axis 1 (across examples) instead of axis 0",
        hint="In the column layout each column is one example, so each column must sum to 1. "
        "Check the axis of your max and your sum.",
        edits=(
            ("shifted = x - np.max(x, axis=0, keepdims=True)",
             "shifted = x - np.max(x, axis=1, keepdims=True)"),
            ("return e / np.sum(e, axis=0, keepdims=True)",
             "return e / np.sum(e, axis=1, keepdims=True)"),
        ),
    ),
    Mutant(
        name="softmax_unstable",
        function="softmax",
        description="softmax without subtracting the column maximum (overflows at large logits)",
        hint="exp(1000) overflows to inf. Softmax does not change when you subtract the same "
        "number from a whole column; which number keeps every exponent ≤ 0?",
        edits=(("shifted = x - np.max(x, axis=0, keepdims=True)", "shifted = x"),),
        patterns=("nan_or_inf",),
    ),
    Mutant(
        name="hidden_bias_missing",
        function="rnn_cell_forward",
        description="the hidden bias ba left out of the pre-activation",
        hint="Compare your pre-activation with the formula term by term: is every parameter "
        "in the dict used?",
        edits=(("np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba",
                "np.dot(Waa, a_prev) + np.dot(Wax, xt)"),),
    ),
    Mutant(
        name="sigmoid_for_tanh",
        function="rnn_cell_forward",
        description="the hidden state uses a sigmoid instead of tanh",
        hint="Your hidden state is never negative. Which activation does the hidden state use?",
        edits=(("a_next = np.tanh(pre_activation)", "a_next = 1 / (1 + np.exp(-pre_activation))"),),
    ),
    Mutant(
        name="cache_in_another_order",
        function="rnn_cell_forward",
        description="the cache holds a_prev before a_next: (a_prev, a_next, xt, parameters)",
        hint="The backward pass of lab 2 unpacks the cache as (a_next, a_prev, xt, parameters): "
        "check the order of the items in yours.",
        edits=(("    cache = (a_next, a_prev, xt, parameters)\n",
                "    cache = (a_prev, a_next, xt, parameters)\n"),),
    ),
    Mutant(
        name="results_cast_to_float32",
        function="rnn_forward",
        description="a and y_pred are allocated in float32 whatever the dtype of x",
        hint="Your results are float32 for float64 inputs, so they lose precision. Allocate a "
        "and y_pred with the dtype of x (dtype=x.dtype).",
        edits=(("a = np.zeros((n_a, m, T_x), dtype=x.dtype)",
                "a = np.zeros((n_a, m, T_x), dtype=np.float32)"),
               ("y_pred = np.zeros((n_y, m, T_x), dtype=x.dtype)",
                "y_pred = np.zeros((n_y, m, T_x), dtype=np.float32)")),
    ),
    Mutant(
        name="loop_feeds_a0",
        function="rnn_forward",
        description="every step is fed the initial state a0 instead of the previous step's state",
        hint="Only the first step should see a0. What should the hidden state passed to step t "
        "be for t > 0?",
        edits=(("rnn_cell_forward(x[:, :, t], a_prev, parameters)",
                "rnn_cell_forward(x[:, :, t], a0, parameters)"),),
        patterns=("fed_a0_every_step",),
    ),
    Mutant(
        name="stores_a_prev",
        function="rnn_forward",
        description="a[:, :, t] holds the state before step t instead of after it",
        hint="a[:, :, t] should be the state that step t produces. Check which variable you "
        "store, and when.",
        edits=(("a[:, :, t] = a_next", "a[:, :, t] = a_prev"),),
        patterns=("off_by_one_step",),
    ),
    Mutant(
        name="batch_weights_not_transposed",
        function="rnn_forward_batch",
        description="h_{t−1} multiplied by W_h instead of W_hᵀ in the batch-first recurrence",
        hint="In the batch-first layout states are rows, so a weight matrix multiplies from the "
        "right, transposed. Check every matrix product for the transpose.",
        edits=(("h = torch.tanh(h @ W_h.T + inputs[:, t])",
                "h = torch.tanh(h @ W_h + inputs[:, t])"),),
        patterns=("recurrent_term",),
    ),
    Mutant(
        name="batch_recurrent_term_dropped",
        function="rnn_forward_batch",
        description="the batch recurrence ignores h_{t−1}",
        hint="Your states do not depend on the previous state. Which term of "
        "tanh(h W_hᵀ + x W_xᵀ + b) carries the past?",
        edits=(("h = torch.tanh(h @ W_h.T + inputs[:, t])", "h = torch.tanh(inputs[:, t])"),),
        patterns=("recurrent_term",),
    ),
    # --- mistakes seen in real classic submissions ---------------------------------------------
    Mutant(
        name="state_starts_at_zeros",
        function="rnn_forward",
        description="the hidden state starts at zeros instead of a0",
        hint="Check what your loop starts from before the first step: the initial hidden state "
        "is given to you as an argument.",
        edits=(("    a_prev = a0\n", "    a_prev = np.zeros_like(a0)\n"),),
    ),
    Mutant(
        name="loop_starts_at_one",
        function="rnn_forward",
        description="the time loop starts at t = 1, so step 0 is never computed",
        hint="Python's range starts where you tell it to. Does your loop visit every time step, "
        "the first one included?",
        edits=(("for t in range(T_x):", "for t in range(1, T_x):"),),
        patterns=("all_zeros", "off_by_one_step",),
    ),
    Mutant(
        name="softmax_negated_logits",
        function="softmax",
        description="softmax computed with exp(−x) instead of exp(x)",
        hint="Check the sign inside your exponential: the largest logit must get the largest "
        "probability.",
        edits=(("e = np.exp(shifted)", "e = np.exp(-shifted)"),),
    ),
]

"""Known lab 12 mistakes, each written as an edit of the reference ``solutions/lab12/dinos.py``."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- clip ----------------------------------------------------------------------------------
    Mutant(
        name="clip_by_global_norm_instead",
        function="clip",
        description="clip rescales by the global norm instead of clipping element-wise",
        hint="clip asks for element-wise clipping: each entry is limited to "
        "[−maxValue, maxValue] on its own, and entries inside the interval do not change.",
        edits=(
            (
                "return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}",
                "norm = np.sqrt(sum(np.sum(g ** 2) for g in gradients.values()))\n"
                "    return {name: g * min(1.0, maxValue / (norm + 1e-12)) "
                "for name, g in gradients.items()}",
            ),
        ),
    ),
    # --- sample --------------------------------------------------------------------------------
    Mutant(
        name="sample_argmax",
        function="sample",
        description="the most likely character taken at every step instead of a draw",
        hint="sample must draw each character from the distribution ŷ with np.random.choice; "
        "taking the most likely one gives the same name every time.",
        edits=(
            (
                "idx = int(np.random.choice(vocab_size, p=y.ravel()))",
                "idx = int(np.argmax(y))",
            ),
        ),
    ),
    Mutant(
        name="sample_x_not_updated",
        function="sample",
        description="the input x is not set to the one-hot vector of the character just drawn",
        hint="Your first probability vector is right and the later ones are not. The next "
        "input is the character you just drew: is x the one-hot vector of idx before the next "
        "step?",
        edits=(("        x = np.zeros((vocab_size, 1))\n        x[idx] = 1\n", ""),),
    ),
    Mutant(
        name="sample_x_not_reset",
        function="sample",
        description="x is not cleared before the new character's 1 is set: it keeps the ones of "
        "the characters drawn before",
        hint="Your first two probability vectors are right and the later ones are not. x must be "
        "the one-hot vector of the last character only: start from a zero vector before "
        "setting x[idx] = 1.",
        edits=(("        x = np.zeros((vocab_size, 1))\n        x[idx] = 1\n",
                "        x[idx] = 1\n"),),
    ),
    Mutant(
        name="sample_a_prev_not_carried",
        function="sample",
        description="the hidden state is not carried to the next step (a_prev stays zero)",
        hint="Your first probability vector is right and the later ones are not. Each step "
        "starts from the state the previous step computed: is a_prev updated to a?",
        edits=(("        a_prev = a\n", ""),),
    ),
    Mutant(
        name="sample_no_newline_at_cap",
        function="sample",
        description="after 50 draws without a newline, the newline is not appended",
        hint="When the loop stops at 50 characters, the name must still end with the newline: "
        "append char_to_ix['\\n'] in that case.",
        edits=(("    if counter == 50:\n        indices.append(newline)\n", ""),),
    ),
    Mutant(
        name="sample_p_not_raveled",
        function="sample",
        description="np.random.choice given p = ŷ of shape (V, 1) instead of a 1-D vector",
        hint="np.random.choice needs p as a 1-D vector; ŷ is a column of shape (V, 1). "
        "Flatten it with y.ravel().",
        edits=(("p=y.ravel()", "p=y"),),
    ),
    # --- optimize ------------------------------------------------------------------------------
    Mutant(
        name="optimize_update_unclipped",
        function="optimize",
        description="the clipped gradients are returned, but the update uses the unclipped ones",
        hint="Your returned gradients are clipped, but the parameters moved by the unclipped "
        "ones: update_parameters must receive what clip returned.",
        edits=(
            ("    gradients = clip(gradients, 5)\n"
             "    update_parameters(parameters, gradients, learning_rate)\n",
             "    update_parameters(parameters, gradients, learning_rate)\n"
             "    gradients = clip(gradients, 5)\n"),
        ),
    ),
    Mutant(
        name="optimize_returns_unclipped",
        function="optimize",
        description="the update uses the clipped gradients, but the unclipped ones are returned",
        hint="Your parameters moved by the clipped gradients, but optimize returned the "
        "unclipped ones: return the gradients that clip returned.",
        edits=(
            ("    gradients = clip(gradients, 5)\n"
             "    update_parameters(parameters, gradients, learning_rate)\n",
             "    clipped = clip(gradients, 5)\n"
             "    update_parameters(parameters, clipped, learning_rate)\n"),
        ),
    ),
    Mutant(
        name="optimize_without_clipping",
        function="optimize",
        description="the gradients are not clipped: neither the update nor the returned ones",
        hint="optimize must clip the gradients with your clip at 5 between the backward pass "
        "and the update, and return the clipped gradients.",
        edits=(("    gradients = clip(gradients, 5)\n", ""),),
    ),
]

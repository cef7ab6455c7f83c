"""Known lab 9 mistakes, each written as an edit of the reference ``solutions/lab9/charlm.py``
(the README's "Known mistakes", and three training loops that do not train)."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- build_vocab, split_train_val ----------------------------------------------------------
    Mutant(
        name="chars_not_sorted",
        function="build_vocab",
        description="chars in order of first appearance instead of sorted by code point",
        hint="Two runs on texts with the same characters must give the same ids. In which "
        "order does the README want the characters listed?",
        edits=(("chars = sorted(set(text))", "chars = list(dict.fromkeys(text))"),),
    ),
    Mutant(
        name="validation_from_start",
        function="split_train_val",
        description="validation taken from the start of the data, training from the rest",
        hint="A split in time keeps the future for validation. Which end of the data is the "
        "future?",
        edits=(("return data[:len(data) - n_val].copy(), data[len(data) - n_val:].copy()",
                "return data[n_val:].copy(), data[:n_val].copy()"),),
    ),
    Mutant(
        name="random_split",
        function="split_train_val",
        description="a random split of positions instead of the last n_val items",
        hint="Neighbouring characters overlap in context: a random split lets validation "
        "text leak into training. Which items does the README reserve for validation?",
        edits=(("return data[:len(data) - n_val].copy(), data[len(data) - n_val:].copy()",
                "order = np.random.default_rng(0).permutation(len(data))\n"
                "    return data[order[n_val:]], data[order[:n_val]]"),),
    ),
    # --- entropy_floor ---------------------------------------------------------------------------
    Mutant(
        name="notes_equally_likely",
        function="entropy_floor",
        description="the note's entropy as ln(number of notes): every note taken as equally "
        "likely",
        hint="The empty note is drawn three times as often as each of the others. Which "
        "formula gives the entropy of a distribution that is not uniform?",
        edits=(("- np.sum(p * np.log(p)))", "+ np.log(len(p)))"),),
    ),
    # --- ngram_validation_loss ------------------------------------------------------------------
    Mutant(
        name="ngram_context_crosses_into_training",
        function="ngram_validation_loss",
        description="validation contexts at the start reach back into the end of the training "
        "text",
        hint="At the first validation positions, where does your context come from? The "
        "README keeps validation contexts inside the validation text.",
        edits=(("for k in range(1, min(order, i + 1)):\n            ctx = val_text[i - k:i]",
                "for k in range(1, order):\n            ctx = (train_text + val_text)"
                "[len(train_text) + i - k:len(train_text) + i]"),),
    ),
    Mutant(
        name="ngram_not_interpolated",
        function="ngram_validation_loss",
        description="plain add-α at the highest order, not recursively interpolated with the "
        "lower orders",
        hint="Each order smooths towards the order below it: α·p_{k−1}, not a uniform α/V. "
        "Does your estimate at order k use the one at order k − 1?",
        edits=(("+ alpha * p) / (followed[k].get(ctx, 0) + alpha)",
                "+ alpha) / (followed[k].get(ctx, 0) + alpha * V)"),),
    ),
    Mutant(
        name="unigram_without_alpha_v",
        function="ngram_validation_loss",
        description="αV missing from the unigram's denominator",
        hint="Your unigram probabilities do not sum to one. Add α to every one of the V "
        "counts: what must the denominator add?",
        edits=(("/ (len(train_text) + alpha * V)", "/ len(train_text)"),),
    ),
    Mutant(
        name="ngram_vocab_from_training_text",
        function="ngram_validation_loss",
        description="V counted on the training text only",
        hint="A character may occur in the validation text only. With vocab_size None, "
        "which texts does the README count V on?",
        edits=(("len(set(train_text) | set(val_text))", "len(set(train_text))"),),
    ),
    Mutant(
        name="ngram_scored_on_training_text",
        function="ngram_validation_loss",
        description="the n-gram scored on the training text it was counted on",
        hint="The baseline must be scored on text it has not counted. Which text do you "
        "loop over when you add up the losses?",
        edits=(("for i, c in enumerate(val_text):", "for i, c in enumerate(train_text):"),
               ("ctx = val_text[i - k:i]", "ctx = train_text[i - k:i]"),
               ("return float(total / len(val_text))", "return float(total / len(train_text))")),
    ),
    # --- make_streams ----------------------------------------------------------------------------
    Mutant(
        name="streams_not_contiguous",
        function="make_streams",
        description="streams laid out as data.reshape(L, B).T: stream i holds every B-th "
        "character",
        hint="Read one row of your streams_x: is it a contiguous piece of the text? Which "
        "reshape keeps consecutive characters together?",
        edits=(("return (data[:batch * L].reshape(batch, L).copy(),\n"
                "            data[1:batch * L + 1].reshape(batch, L).copy())",
                "return (data[:batch * L].reshape(L, batch).T.copy(),\n"
                "            data[1:batch * L + 1].reshape(L, batch).T.copy())"),),
    ),
    Mutant(
        name="targets_not_shifted",
        function="make_streams",
        description="streams_y equal to streams_x (targets not shifted by one character)",
        hint="The model predicts the next character. Which slice of the data holds the next "
        "character of every input?",
        edits=(("data[1:batch * L + 1].reshape(batch, L).copy())",
                "data[:batch * L].reshape(batch, L).copy())"),),
    ),
    # --- adam_step -------------------------------------------------------------------------------
    Mutant(
        name="adam_without_bias_correction",
        function="adam_step",
        description="Adam without bias correction (m and v used directly)",
        hint="At step 1 your update is far smaller than lr. The moments start at zero: what "
        "does the README divide them by?",
        edits=(("m_hat = m / (1 - beta1 ** step)", "m_hat = m"),
               ("v_hat = v / (1 - beta2 ** step)", "v_hat = v")),
    ),
    Mutant(
        name="adam_eps_inside_sqrt",
        function="adam_step",
        description="eps added inside the square root: √(v̂ + eps)",
        hint="With tiny gradients your step differs. Where does the README add eps: inside "
        "or outside the square root?",
        edits=(("(np.sqrt(v_hat) + eps)", "np.sqrt(v_hat + eps)"),),
    ),
    # --- train_tbptt -----------------------------------------------------------------------------
    Mutant(
        name="state_reset_every_chunk",
        function="train_tbptt",
        description="the state reset to zeros at every chunk (nothing carried across chunks)",
        hint="Only the first chunk of a pass should start from zeros. What state should the "
        "next chunk start from?",
        edits=(("        if c == 0:\n            h = np.zeros_like(h)",
                "        h = np.zeros_like(h)"),),
    ),
    Mutant(
        name="state_not_reset_at_wrap",
        function="train_tbptt",
        description="the state never reset when the chunk index wraps to 0",
        hint="After the last chunk the streams start again from their beginning. What was the "
        "state at the very beginning?",
        edits=(("        if c == 0:\n            h = np.zeros_like(h)\n", ""),),
    ),
    Mutant(
        name="chunk_index_not_wrapping",
        function="train_tbptt",
        description="the chunk index grows past the last chunk instead of wrapping",
        hint="With more updates than chunks, which columns does your update read? The README "
        "uses c = u mod n_chunks.",
        edits=(("c = u % n_chunks", "c = u"),
               ("        if c == 0:\n", "        if c % n_chunks == 0:\n")),
    ),
    Mutant(
        name="clipped_after_adam_moments",
        function="train_tbptt",
        description="Adam's moments take the unclipped gradient; the clipping scales the step "
        "afterwards",
        hint="Clipping changes the gradient that Adam sees. Which gradient goes into "
        "adam_step?",
        edits=(("        grads = {k: g * scale for k, g in grads.items()}\n"
                "        params, state = adam_step(params, grads, state, u + 1, lr)",
                "        new, state = adam_step(params, grads, state, u + 1, lr)\n"
                "        params = {k: params[k] + scale * (new[k] - params[k]) for k in new}"),),
    ),
    Mutant(
        name="clipped_per_parameter",
        function="train_tbptt",
        description="each gradient array clipped by its own norm instead of the global norm",
        hint="The README clips by one norm over every parameter together. Is your scale the "
        "same for every array?",
        edits=(("        grads = {k: g * scale for k, g in grads.items()}",
                "        grads = {k: g * min(1.0, clip / (float(np.linalg.norm(g)) + 1e-12))\n"
                "                 for k, g in grads.items()}"),),
    ),
    Mutant(
        name="gradient_ascent",
        function="train_tbptt",
        description="the gradient's sign flipped before the update: the loss goes up",
        hint="Your loss rises from ln V. In which direction should a step move the "
        "parameters?",
        edits=(("grads = {k: g * scale for k, g in grads.items()}",
                "grads = {k: -g * scale for k, g in grads.items()}"),),
    ),
    Mutant(
        name="update_discarded",
        function="train_tbptt",
        description="the parameters adam_step returns are never used: every update starts "
        "from the initial parameters",
        hint="Your loss never moves. Does the next update start from the parameters the "
        "previous one returned?",
        edits=(("params, state = adam_step(params, grads, state, u + 1, lr)",
                "_, state = adam_step(params, grads, state, u + 1, lr)"),),
    ),
    Mutant(
        name="clip_scale_inverted",
        function="train_tbptt",
        description="the clipping scale inverted: gradients multiplied by norm/clip",
        hint="Clipping may only shrink a gradient whose norm exceeds the threshold. Check "
        "the scale you multiply by.",
        edits=(("scale = min(1.0, clip / (norm + 1e-12))", "scale = norm / clip"),),
    ),
    # --- sampling and the audit ------------------------------------------------------------------
    Mutant(
        name="temperature_after_softmax",
        function="sample_text",
        description="the probabilities divided by the temperature after the softmax",
        hint="The temperature divides the logits, before the softmax. What happens to "
        "probabilities divided by τ?",
        edits=(("logits = ((params[\"W_hy\"] @ h)[:, 0] + params[\"b_y\"]) / temperature",
                "logits = (params[\"W_hy\"] @ h)[:, 0] + params[\"b_y\"]"),
               ("p /= np.sum(p)", "p /= np.sum(p)\n        p = p / temperature")),
    ),
    Mutant(
        name="extra_random_draws",
        function="sample_text",
        description="more than one random number drawn per character",
        hint="The README allows exactly one rng.random() per character. Count the draws "
        "your loop makes.",
        edits=(("        u = rng.random()\n", "        u = rng.random(2)[1]\n"),),
    ),
    Mutant(
        name="audit_counts_cut_lines",
        function="audit",
        description="the possibly cut first and last lines kept in the audit",
        hint="The sample starts and stops mid-line. Which lines does the README drop?",
        edits=(('lines = generated.split("\\n")[1:-1]', 'lines = generated.split("\\n")'),),
    ),
    Mutant(
        name="status_rule_strict",
        function="audit",
        description="the status rule with > instead of ≥ at the threshold",
        hint="A value exactly at the threshold: is it high or ok? Read the rule in the "
        "README.",
        edits=(("(float(v) >= QUANTITIES[q][3])", "(float(v) > QUANTITIES[q][3])"),),
    ),
    # --- perplexity ------------------------------------------------------------------------------
    Mutant(
        name="perplexity_mean_of_batch_perplexities",
        function="token_weighted_perplexity",
        description="the mean of the batches' perplexities",
        hint="Perplexity is the exponential of the mean loss per token. Average first, then "
        "exponentiate; and weight each batch by its tokens.",
        edits=(("return float(np.exp(np.sum(losses * counts) / np.sum(counts)))",
                "return float(np.mean(np.exp(losses)))"),),
    ),
    Mutant(
        name="perplexity_of_unweighted_mean",
        function="token_weighted_perplexity",
        description="the exponential of the plain mean of batch losses (batches not weighted "
        "by their tokens)",
        hint="A batch of 300 tokens counts more than a batch of 10. How do you weight the "
        "batch losses?",
        edits=(("return float(np.exp(np.sum(losses * counts) / np.sum(counts)))",
                "return float(np.exp(np.mean(losses)))"),),
    ),
]

INDISTINGUISHABLE: dict = {}

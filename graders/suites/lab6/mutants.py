"""Known mistakes of lab6 (decoding), each written as edits of solutions/lab6/decoding.py."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- softmax_with_temperature -------------------------------------------------------------
    Mutant(
        name="temperature_after_softmax",
        function="softmax_with_temperature",
        description="softmax of the raw logits, then the probabilities divided by the temperature",
        hint="Your probabilities do not sum to 1 when the temperature is not 1. Where does the "
        "temperature enter: before or after the exponential?",
        edits=(
            ("    z = logits / temperature\n", "    z = logits\n"),
            (
                "return e / np.sum(e, axis=-1, keepdims=True)",
                "return e / np.sum(e, axis=-1, keepdims=True) / temperature",
            ),
        ),
    ),
    Mutant(
        name="temperature_multiplied",
        function="softmax_with_temperature",
        description="logits multiplied by the temperature instead of divided by it",
        hint="A high temperature should flatten the distribution and a low one sharpen it; "
        "check which way yours goes.",
        edits=(("    z = logits / temperature\n", "    z = logits * temperature\n"),),
    ),
    Mutant(
        name="softmax_without_max_shift",
        function="softmax_with_temperature",
        description="no maximum subtracted before np.exp, so large logits overflow to NaN",
        hint="Large logits give NaN or inf. What can you subtract from every logit without "
        "changing the softmax?",
        edits=(("    z = z - np.max(z, axis=-1, keepdims=True)\n", ""),),
        patterns=("nan_or_inf",),
    ),
    # --- greedy_decode ---------------------------------------------------------------------------
    Mutant(
        name="greedy_ignores_eos",
        function="greedy_decode",
        description="greedy search keeps going after emitting EOS, always to max_len",
        hint="Your sequences keep going after the end-of-sequence token. When should the loop "
        "stop?",
        edits=(("        if next_token == eos:\n            break\n", ""),),
    ),
    Mutant(
        name="greedy_feeds_bos_every_step",
        function="greedy_decode",
        description="the model is fed BOS at every step instead of the token just emitted",
        hint="Check which token you pass to step_fn after the first step: the model must see "
        "the token it has just produced.",
        edits=(("        token = next_token\n", ""),),
    ),
    # --- beam_search -----------------------------------------------------------------------------
    Mutant(
        name="beam_finished_kept_expanding",
        function="beam_search",
        description="hypotheses ending in EOS stay in the live beam and keep being expanded",
        hint="Some of your hypotheses continue after the end-of-sequence token. What should "
        "happen to a candidate whose last token is EOS?",
        edits=(
            (
                "            if v == eos:\n"
                "                finished.append((tokens, logp))\n"
                "            else:\n"
                "                new_live.append((tokens, logp, new_states[i]))\n",
                "            new_live.append((tokens, logp, new_states[i]))\n",
            ),
        ),
    ),
    Mutant(
        name="beam_eos_not_counted_in_length",
        function="beam_search",
        description="length normalisation divides by the length without the EOS token",
        hint="Your length-normalised scores are off for finished hypotheses. Check what len(...) "
        "counts in the final score: is the end-of-sequence token part of the length?",
        edits=(
            (
                "        length = len(tokens)\n",
                "        length = len(tokens) - tokens.count(eos)\n",
            ),
        ),
    ),
    Mutant(
        name="beam_normalised_while_ranking",
        function="beam_search",
        description="length normalisation applied to the running scores of live hypotheses at "
        "every step (compounding) instead of only to the final pool",
        hint="With alpha > 0 your scores and choices differ. Live hypotheses are ranked and "
        "extended with raw log-probabilities; where do you apply the length normalisation?",
        edits=(
            (
                "            logp = float(flat[index])\n",
                "            logp = float(flat[index]) / len(tokens) ** alpha\n",
            ),
        ),
    ),
    Mutant(
        name="beam_topk_per_beam_truncated",
        function="beam_search",
        description="top-k taken inside each hypothesis, concatenated in beam order and cut to k "
        "without ranking across hypotheses",
        hint="The beam must keep the best candidates over all hypotheses together. Check how you "
        "combine the candidates of different hypotheses before cutting to the beam size.",
        edits=(
            (
                '        order = np.argsort(-flat, kind="stable")[:k]\n',
                '        per_beam = np.argsort(-candidates, axis=1, kind="stable")[:, :k]\n'
                "        order = (per_beam + V * np.arange(len(live))[:, None]).reshape(-1)[:k]\n",
            ),
        ),
    ),
    Mutant(
        name="beam_refilled_after_eos",
        function="beam_search",
        description="the live beam is refilled to beam_size after hypotheses finish instead of "
        "shrinking",
        hint="When a hypothesis finishes, the number of live hypotheses should go down. Check how "
        "many candidates you keep at each step.",
        edits=(("        k = beam_size - len(finished)\n", "        k = beam_size\n"),),
    ),
    Mutant(
        name="beam_ties_reversed",
        function="beam_search",
        description="equal scores broken towards the later hypothesis / higher token id",
        hint="Your choice differs only where candidates have exactly equal scores. Check the "
        "tie-breaking order of your sort: earlier hypothesis first, then lower token id.",
        edits=(
            (
                '        order = np.argsort(-flat, kind="stable")[:k]\n',
                '        order = np.argsort(flat, kind="stable")[::-1][:k]\n',
            ),
        ),
    ),
    Mutant(
        name="beam_scores_not_accumulated",
        function="beam_search",
        description="candidates ranked by the last token's log-probability only, not the whole "
        "sequence's",
        hint="A hypothesis's score is the log-probability of the whole sequence so far. Check "
        "what you add up when you extend a hypothesis by one token.",
        edits=(
            (
                "            rows.append(logp + _log_probs(log_probs))\n",
                "            rows.append(_log_probs(log_probs))\n",
            ),
        ),
    ),
    # --- gnmt_length_penalty ---------------------------------------------------------------------
    Mutant(
        name="gnmt_power_precedence",
        function="gnmt_length_penalty",
        description="operator precedence: (5 + length) / 6 ** alpha",
        hint="In Python ** binds tighter than /. Check which part of the formula the exponent "
        "applies to.",
        edits=(
            ("    return ((5 + length) / 6) ** alpha\n", "    return (5 + length) / 6**alpha\n"),
        ),
    ),
    # --- sample_sequence -------------------------------------------------------------------------
    Mutant(
        name="sample_ignores_eos",
        function="sample_sequence",
        description="sampling keeps going after EOS, always to max_len",
        hint="Your samples continue after the end-of-sequence token. When should the loop stop?",
        edits=(("        if sampled == eos:\n            break\n", ""),),
    ),
    Mutant(
        name="sample_ignores_temperature",
        function="sample_sequence",
        description="samples from the untempered distribution (temperature 1)",
        hint="Your samples only match at temperature 1. Check that the temperature argument "
        "reaches the probabilities you sample from.",
        edits=(
            (
                "softmax_with_temperature(_log_probs(log_probs), temperature)",
                "softmax_with_temperature(_log_probs(log_probs), 1.0)",
            ),
        ),
    ),
    Mutant(
        name="sample_softmax_of_probabilities",
        function="sample_sequence",
        description="log-probabilities exponentiated before the softmax (softmax of probabilities)",
        hint="step_fn returns log-probabilities. Check what you pass to the softmax: it expects "
        "logits, and log-probabilities are logits.",
        edits=(
            (
                "softmax_with_temperature(_log_probs(log_probs), temperature)",
                "softmax_with_temperature(np.exp(_log_probs(log_probs)), temperature)",
            ),
        ),
    ),
]

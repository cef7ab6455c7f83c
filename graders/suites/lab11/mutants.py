"""Known lab 11 mistakes, each written as an edit of the reference ``solutions/lab11/seq2seq.py``
(the README's "Known mistakes"; where a mistake does not fit the fixed parameter shapes it is
written in the closest form that does, said in its description)."""

from rnngrade.suite import Mutant

ATTENTION = "        alpha = _masked_softmax(scores, mask)\n"
READOUT = "torch.cat([s_new, ctx], dim=-1), params[\"out.weight\"]"

MUTANTS = [
    # --- encode ------------------------------------------------------------------------------
    Mutant(
        name="encoder_not_packed",
        function="encode",
        description="the GRU runs over the padded batch: the backward direction reads padding",
        hint="A string must get the same annotations however much padding follows it. Which "
        "direction of your GRU starts in the padding, and what does pack_padded_sequence do "
        "about it?",
        edits=(("    if pack:\n        packed", "    if False:\n        packed"),),
    ),
    Mutant(
        name="s0_from_last_column",
        function="encode",
        description="s0 built from the annotations of the last column instead of h_n",
        hint="The forward direction ends at each string's last real digit and the backward one "
        "at position 0. Which column of H holds them, and is it the same for every string?",
        edits=(("torch.cat([h_n[0], h_n[1]], dim=-1)", "H[:, -1]"),),
    ),
    # --- decoder_step ------------------------------------------------------------------------
    Mutant(
        name="luong_order",
        function="decoder_step",
        description="attention scores read the updated state (Luong's order: the state is "
        "updated first, with a zero context) instead of the previous state",
        hint="This decoder is Bahdanau's: which state do the scores read, the one the step "
        "starts from or the one it produces?",
        edits=(("F.linear(s, params[\"W_a.weight\"])[:, None, :]",
                "F.linear(_gru_cell(torch.cat([x, torch.zeros_like(H[:, 0])], dim=-1), s, "
                "params), params[\"W_a.weight\"])[:, None, :]"),),
    ),
    Mutant(
        name="score_without_tanh",
        function="decoder_step",
        description="the additive score without its tanh: v_a·(W_a s + U_a h_j)",
        hint="Compare your score with e_j = v_a·tanh(W_a s + U_a h_j): without the "
        "nonlinearity, what does the score of position j still depend on?",
        edits=(("torch.tanh(query + keys)", "(query + keys)"),),
    ),
    Mutant(
        name="softmax_over_batch",
        function="decoder_step",
        description="the attention softmax taken over the batch axis instead of the positions",
        hint="Each example's weights should sum to 1 over its own source positions. Over which "
        "axis does your softmax normalise?",
        edits=((ATTENTION, "        alpha = torch.softmax(scores.masked_fill(~mask, "
                "torch.finfo(scores.dtype).min), dim=0) * mask\n"),),
    ),
    Mutant(
        name="mask_minus_inf",
        function="decoder_step",
        description="padding filled with −inf before the softmax: NaN on a row without real "
        "positions",
        hint="What does softmax give on a row whose every entry is −inf? Fill with a large "
        "finite negative number, or zero the weights afterwards.",
        edits=((ATTENTION, "        alpha = torch.softmax(scores.masked_fill(~mask, "
                "float(\"-inf\")), dim=-1)\n"),),
    ),
    Mutant(
        name="mask_inverted",
        function="decoder_step",
        description="the mask read with True meaning padding (the other convention)",
        hint="In this lab mask is True on real positions. Which positions receive your "
        "weights?",
        edits=((ATTENTION, "        alpha = _masked_softmax(scores, ~mask)\n"),),
    ),
    Mutant(
        name="context_not_in_output",
        function="decoder_step",
        description="the output layer reads only the state, not the context (the context "
        "columns of out.weight unused)",
        hint="The logits come from [s_new; ctx]. Does the output layer see the context?",
        edits=((READOUT, "s_new, params[\"out.weight\"][:, :s_new.shape[-1]]"),),
    ),
    Mutant(
        name="three_way_output",
        function="decoder_step",
        description="the output layer reads [s_new; ctx; embedding] (three-way), which does "
        "not fit out.weight (V, H + C)",
        hint="The output layer here reads [s_new; ctx] only, so out.weight is (V, H + C).",
        edits=((READOUT, "torch.cat([s_new, ctx, x], dim=-1), params[\"out.weight\"]"),),
    ),
    # --- masked_token_loss -------------------------------------------------------------------
    Mutant(
        name="loss_includes_pad",
        function="masked_token_loss",
        description="the cross-entropy averaged over every position, PAD targets included",
        hint="PAD positions are not part of any answer. Which positions does your mean run "
        "over?",
        edits=((",\n                           ignore_index=pad)", ")"),),
    ),
    Mutant(
        name="loss_mean_per_sequence",
        function="masked_token_loss",
        description="the loss averaged per sequence, then over the batch (short strings "
        "weigh more)",
        hint="The README's loss is one mean over all real target positions of the batch. Do "
        "short strings weigh the same per token as long ones in yours?",
        edits=(("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                "tgt.reshape(-1),\n                           ignore_index=pad)",
                "    per = F.cross_entropy(logits.transpose(1, 2), tgt, ignore_index=pad, "
                "reduction=\"none\")\n    real = (tgt != pad)\n"
                "    return ((per * real).sum(1) / real.sum(1)).mean()"),),
    ),
    # --- greedy_decode_batch, sequence_metrics -----------------------------------------------
    Mutant(
        name="greedy_teacher_forced",
        function="greedy_decode_batch",
        description="greedy decoding fed the true previous token (the reversed source: "
        "teacher forcing) instead of its own argmax",
        hint="Free-running decoding never sees the answer: each step reads the token the model "
        "itself chose at the step before.",
        edits=(("            y = logits.argmax(dim=-1)\n",
                "            t = len(tokens)\n"
                "            where = (lens.to(src.device) - 1 - t).clamp(min=0)\n"
                "            y = torch.where(t < lens.to(src.device), src.gather(1, "
                "where[:, None])[:, 0], EOS)\n"),),
    ),
    Mutant(
        name="accuracy_counts_padding",
        function="sequence_metrics",
        description="sequence accuracy asks every position to match, the PAD positions after "
        "EOS included",
        hint="Decoding runs past EOS; what it writes there is not part of the answer. Which "
        "positions must be right for a sequence to count?",
        edits=(("(right | ~real).all(dim=1)", "(pred == tgt).all(dim=1)"),),
    ),
    # --- train_seq2seq -----------------------------------------------------------------------
    Mutant(
        name="same_batch_every_step",
        function="train_seq2seq",
        description="the data generator re-created at every update: the same 64 strings "
        "every time",
        hint="A fresh batch at every update comes from one generator made once before the "
        "loop.",
        edits=(("        src, dec_in, tgt, lens = make_reversal_batch(64, data_rng, 3, MAX_LEN)",
                "        data_rng = np.random.default_rng(seed)\n"
                "        src, dec_in, tgt, lens = make_reversal_batch(64, data_rng, 3, "
                "MAX_LEN)"),),
    ),
    # --- bidirectional_summary, attention_pool -----------------------------------------------
    Mutant(
        name="summary_backward_only",
        function="bidirectional_summary",
        description="h_n[-1] only: the backward direction without the forward one",
        hint="h_n holds one state per direction. Which of them is h_n[-1], and where is the "
        "other?",
        edits=(("return torch.cat([h_n[-2], h_n[-1]], dim=-1)", "return h_n[-1]"),),
    ),
    Mutant(
        name="summary_reads_padding",
        function="bidirectional_summary",
        description="the LSTM runs over the padded batch: both final states read padding",
        hint="A sequence's summary must not depend on how much padding follows it. Does your "
        "LSTM ever see a padded position?",
        edits=(("functional_call(lstm, dict(weights), (packed,))",
                "functional_call(lstm, dict(weights), (x,))"),),
    ),
    Mutant(
        name="pool_mask_inverted",
        function="attention_pool",
        description="the mask read with True meaning padding (seed 002's convention)",
        hint="In this lab mask is True on real positions. Which positions receive your "
        "weights?",
        edits=(("weights = _masked_softmax(scores, mask)",
                "weights = _masked_softmax(scores, ~mask)"),),
    ),
    Mutant(
        name="pool_minus_inf",
        function="attention_pool",
        description="padding filled with −inf: NaN on a row without real positions",
        hint="What does softmax give on a row whose every entry is −inf?",
        edits=(("weights = _masked_softmax(scores, mask)",
                "weights = torch.softmax(scores.masked_fill(~mask, float(\"-inf\")), dim=-1)"),),
    ),
]

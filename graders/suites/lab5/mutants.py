"""Known mistakes of lab5 (attention) as edits of solutions/lab5/attention.py."""

from __future__ import annotations

from rnngrade.suite import Mutant

MUTANTS: list[Mutant] = [
    # ---- masked_softmax ----
    Mutant(
        name="mask_filled_with_inf",
        function="masked_softmax",
        description="masked scores set to −inf: a row with no real position becomes NaN",
        hint="Your weights contain NaN for a row where every position is masked. What does "
        "softmax give when every score in a row is −inf, and what should such a row return?",
        edits=(
            (
                "very_negative = torch.finfo(scores.dtype).min",
                'very_negative = float("-inf")',
            ),
        ),
        patterns=("nan_or_inf",),
    ),
    Mutant(
        name="mask_ignored",
        function="masked_softmax",
        description="plain softmax: padded positions receive weight",
        hint="Your weights are not zero on positions where the mask is False. Where do you use "
        "the mask?",
        edits=(
            ("filled = scores.masked_fill(~mask, very_negative)", "filled = scores"),
            ("weights = weights * mask", "weights = weights"),
        ),
    ),
    Mutant(
        name="mask_inverted",
        function="masked_softmax",
        description="the mask read the wrong way round: weight only on padded positions",
        hint="The mask is True on REAL positions (the ones to keep) and False on padding. Check "
        "which positions you remove.",
        edits=(
            ("scores.masked_fill(~mask, very_negative)", "scores.masked_fill(mask, very_negative)"),
            ("weights = weights * mask", "weights = weights * ~mask"),
        ),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="mask_applied_after_softmax",
        function="masked_softmax",
        description="softmax over all positions, padded weights zeroed afterwards (rows do not "
        "sum to 1)",
        hint="Your masked positions are zero, but do the remaining weights of a row still sum to "
        "1? Think about when the mask has to act.",
        edits=(("filled = scores.masked_fill(~mask, very_negative)", "filled = scores"),),
    ),
    Mutant(
        name="softmax_over_batch",
        function="masked_softmax",
        description="softmax taken over the batch axis instead of the source positions",
        hint="Check the axis of your softmax: the weights of one example must sum to 1 over its "
        "source positions, not across the examples of the batch.",
        edits=(("torch.softmax(filled, dim=-1)", "torch.softmax(filled, dim=0)"),),
    ),
    # ---- additive_attention ----
    Mutant(
        name="additive_tanh_missing",
        function="additive_attention",
        description="e_j = v_aᵀ(W_a s + U_a h_j): the tanh of the Bahdanau score is missing",
        hint="Your additive scores are a linear function of s and h_j. Look at the score "
        "e_j = v_aᵀ tanh(W_a s + U_a h_j) once more.",
        edits=(
            (
                "torch.tanh(query.unsqueeze(1) + keys) @ v_a",
                "(query.unsqueeze(1) + keys) @ v_a",
            ),
        ),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="additive_context_from_scores",
        function="additive_attention",
        description="context weighted by the raw scores e instead of the weights alpha",
        hint="Your alpha is right but your context is not. Which quantity should weight the "
        "annotations h_j?",
        edits=(
            (
                'torch.einsum("bs,bse->be", alpha, H)  # Σ_j',
                'torch.einsum("bs,bse->be", scores, H)  # Σ_j',
            ),
        ),
    ),
    # ---- dot_attention ----
    Mutant(
        name="dot_context_from_scores",
        function="dot_attention",
        description="context weighted by the raw scores e instead of the weights alpha",
        hint="Your alpha is right but your context is not. Which quantity should weight the "
        "annotations h_j?",
        edits=(
            (
                'torch.einsum("bs,bsd->bd", alpha, H)',
                'torch.einsum("bs,bsd->bd", scores, H)',
            ),
        ),
    ),
    # ---- general_attention ----
    Mutant(
        name="general_W_transposed",
        function="general_attention",
        description="score sᵀ Wᵀ h_j (only runs when Hd == He)",
        hint="Check the shape bookkeeping of the bilinear score sᵀ W h_j: W is (Hd, He); which "
        "side of W does s multiply?",
        edits=(("query = s @ W  #", "query = s @ W.T  #"),),
    ),
    # ---- scaled_dot_product_attention ----
    Mutant(
        name="sdpa_no_sqrt_dk",
        function="scaled_dot_product_attention",
        description="scores Q Kᵀ not divided by √dk",
        hint="Your weights are too peaked. Look at the scaling of the scores Q Kᵀ.",
        edits=(
            (
                "scores = Q @ K.transpose(1, 2) / dk**0.5",
                "scores = Q @ K.transpose(1, 2)",
            ),
        ),
    ),
    Mutant(
        name="sdpa_scaled_by_dk",
        function="scaled_dot_product_attention",
        description="scores divided by dk instead of √dk",
        hint="Your weights are too flat. Check the number you divide the scores Q Kᵀ by.",
        edits=(("/ dk**0.5", "/ dk"),),
    ),
    Mutant(
        name="sdpa_causal_excludes_diagonal",
        function="scaled_dot_product_attention",
        description="causal mask hides key i from query i (strictly lower triangle)",
        hint="With causal=True, query i may look at keys j <= i. Does your causal mask let a "
        "query see its own position?",
        edits=(("torch.tril(allowed, diagonal=0)", "torch.tril(allowed, diagonal=-1)"),),
    ),
    Mutant(
        name="sdpa_causal_sees_future",
        function="scaled_dot_product_attention",
        description="causal mask keeps the upper triangle: queries see the future, not the past",
        hint="With causal=True, query i may look at keys j <= i only. Check which triangle of the "
        "(Tq, Tk) score matrix you keep.",
        edits=(("torch.tril(allowed, diagonal=0)", "torch.triu(allowed, diagonal=0)"),),
    ),
    Mutant(
        name="sdpa_mask_ignored",
        function="scaled_dot_product_attention",
        description="the key padding mask is ignored",
        hint="Your weights are not zero on padded keys. Where do you combine mask with the "
        "(causal) pattern of allowed keys?",
        edits=(("allowed = allowed & mask.unsqueeze(1)", "allowed = allowed"),),
    ),
    # ---- causal_linear_attention ----
    Mutant(
        name="linear_no_normaliser",
        function="causal_linear_attention",
        description="y_t = S_tᵀ φ(q_t): the normaliser z_tᵀ φ(q_t) + eps left out",
        hint="Your outputs grow with t. Look at the denominator of y_t.",
        edits=(("outputs.append(numerator / denominator)", "outputs.append(numerator)"),),
    ),
    Mutant(
        name="linear_feature_map_without_one",
        function="causal_linear_attention",
        description="φ(x) = elu(x) without the + 1 (features can be negative)",
        hint="Check your feature map φ: it must be positive for every input.",
        edits=(("elu(Q) + 1", "elu(Q)"), ("elu(K) + 1", "elu(K)")),
    ),
    Mutant(
        name="linear_reads_state_before_update",
        function="causal_linear_attention",
        description="y_t computed from S_{t−1}, z_{t−1}: position t does not see itself",
        hint="Causal attention at position t includes position t itself. Check the order in "
        "which you update the running sums and compute y_t.",
        edits=(
            (
                "        S = S + phi_k[:, t, :, None] * V[:, t, None, :]",
                '        numerator = torch.einsum("bk,bkv->bv", phi_q[:, t], S)\n'
                "        denominator = (z * phi_q[:, t]).sum(dim=-1, keepdim=True) + eps\n"
                "        S = S + phi_k[:, t, :, None] * V[:, t, None, :]",
            ),
            (
                '        numerator = torch.einsum("bk,bkv->bv", phi_q[:, t], S)'
                "  # S_tᵀ φ(q_t), (B, dv)\n"
                "        denominator = (z * phi_q[:, t]).sum(dim=-1, keepdim=True) + eps"
                "  # (B, 1)\n",
                "",
            ),
        ),
    ),
]

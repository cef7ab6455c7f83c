# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab5` to check.
"""Lab 5 — attention.

Everything here is PyTorch, batch-first: the first axis of every tensor is the batch ``B``.
A decoder state ``s`` is ``(B, Hd)``; the encoder annotations ``H`` are ``(B, S, He)``, one row per
source position. Padding is described by a boolean ``mask`` of shape ``(B, S)`` that is **True on
real source positions** and False on padding.

Results keep the dtype and device of the inputs (float32 in, float32 out; GPU in, GPU out). Use
torch operations only, so that autograd works and the code runs on the GPU.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis that ignores masked-out positions.

    Arguments:
        scores: attention scores, shape (B, S) (more leading axes, e.g. (B, Tq, S), also work).
        mask: bool, True on real positions, same shape as ``scores`` or broadcastable to it.

    Returns:
        weights, same shape and dtype as ``scores``: exactly 0 where ``mask`` is False, each row
        sums to 1 over its real positions. A row with no real position at all is all zeros,
        never NaN.
    """
    raise NotImplementedError("masked_softmax: not implemented yet — replace this line with your code")


def additive_attention(
    s: torch.Tensor,
    H: torch.Tensor,
    W_a: torch.Tensor,
    U_a: torch.Tensor,
    v_a: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Additive (Bahdanau) attention.

    Arguments:
        s: decoder state, shape (B, Hd).
        H: encoder annotations h_1 … h_S, shape (B, S, He).
        W_a: (da, Hd), U_a: (da, He), v_a: (da,): the parameters of the score.
        mask: bool (B, S), True on real source positions.

    Score of source position j (for each example of the batch):
        e_j = v_aᵀ tanh(W_a s + U_a h_j)
    then alpha = masked_softmax(e, mask) and context = Σ_j alpha_j h_j.

    Returns:
        context (B, He) and alpha (B, S).
    """
    raise NotImplementedError("additive_attention: not implemented yet — replace this line with your code")


def dot_attention(
    s: torch.Tensor, H: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dot-product (Luong) attention.

    Arguments:
        s: decoder state, shape (B, Hd).
        H: encoder annotations, shape (B, S, He), with He == Hd.
        mask: bool (B, S), True on real source positions.

    Score of source position j: e_j = sᵀ h_j; alpha = masked_softmax(e, mask);
    context = Σ_j alpha_j h_j.

    Returns:
        context (B, He) and alpha (B, S).
    """
    raise NotImplementedError("dot_attention: not implemented yet — replace this line with your code")


def general_attention(
    s: torch.Tensor, H: torch.Tensor, W: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """ "General" (Luong) attention with a bilinear score.

    Arguments:
        s: decoder state, shape (B, Hd).
        H: encoder annotations, shape (B, S, He).
        W: (Hd, He).
        mask: bool (B, S), True on real source positions.

    Score of source position j: e_j = sᵀ W h_j; alpha = masked_softmax(e, mask);
    context = Σ_j alpha_j h_j.

    Returns:
        context (B, He) and alpha (B, S).
    """
    raise NotImplementedError("general_attention: not implemented yet — replace this line with your code")


def scaled_dot_product_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention (Vaswani et al.), like F.scaled_dot_product_attention.

    Arguments:
        Q: queries (B, Tq, dk); K: keys (B, Tk, dk); V: values (B, Tk, dv).
        mask: None, or bool (B, Tk), True on real keys (False keys are never attended to).
        causal: if True, query i only sees keys j <= i (itself and the past).

    weights = softmax over the keys of Q Kᵀ / √dk, with the masked-out keys removed
    (use masked_softmax); out = weights V. A query that sees no key gets zeros.

    Returns:
        out (B, Tq, dv) and weights (B, Tq, Tk).
    """
    raise NotImplementedError("scaled_dot_product_attention: not implemented yet — replace this line with your code")


def causal_linear_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """Causal linear attention (Katharopoulos et al. 2020) computed as a recurrence.

    Arguments:
        Q: queries (B, T, dk); K: keys (B, T, dk); V: values (B, T, dv).
        eps: added to the normaliser.

    With the positive feature map φ(x) = elu(x) + 1, run over t = 0 … T−1 with S_{−1} = 0 (dk, dv)
    and z_{−1} = 0 (dk,) for every example:
        S_t = S_{t−1} + φ(k_t) v_tᵀ
        z_t = z_{t−1} + φ(k_t)
        y_t = S_tᵀ φ(q_t) / (z_tᵀ φ(q_t) + eps)
    This is causal attention with the similarity φ(q_t)ᵀφ(k_j) in place of exp(q_tᵀk_j):
        y_t = Σ_{j≤t} (φ(q_t)ᵀφ(k_j)) v_j / (Σ_{j≤t} φ(q_t)ᵀφ(k_j) + eps),
    computed at a cost linear in T instead of quadratic.

    Returns:
        y (B, T, dv).
    """
    raise NotImplementedError("causal_linear_attention: not implemented yet — replace this line with your code")

"""Public tests for lab 5. Run them with:  pytest assignments/lab5

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab5.npz, computed by the course's reference solution; scaled dot-product attention
is also compared with torch.nn.functional.scaled_dot_product_attention, and linear attention with
the quadratic causal form computed here.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them.
"""

import pytest
import torch

from rnngrade.testing import CheckFailure, assert_outputs

STUDENT_MODULE = "attention"


# ------------------------------------------------------------------ helpers (not tests)

def randn(generator, *shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def padding_mask(lengths, S):
    """bool (B, S), True on the first lengths[b] positions of row b."""
    return torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]


def describe(value):
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def expect_tensor(name, value, shape):
    if value is None:
        raise CheckFailure(f"{name} is None — looks unfinished")
    if not isinstance(value, torch.Tensor):
        raise CheckFailure(f"{name} should be a torch tensor, got {describe(value)}")
    if tuple(value.shape) != tuple(shape):
        raise CheckFailure(f"{name} has shape {tuple(value.shape)}, expected {tuple(shape)}")


def expect_pair(name, value, names, shapes):
    if not isinstance(value, tuple) or len(value) != 2:
        raise CheckFailure(f"{name} should return a pair {names}, got {describe(value)}")
    for label, item, shape in zip(names, value, shapes):
        expect_tensor(f"{name}: {label}", item, shape)


def expect_masked_weights(name, weights, allowed):
    """No NaN; exactly 0 where ``allowed`` is False; each row with an allowed position sums to 1,
    a row without one is all zeros."""
    if torch.isnan(weights).any():
        where = [int(i) for i in torch.nonzero(torch.isnan(weights))[0]]
        raise CheckFailure(f"{name} contains NaN (first at {where}); a row with no real "
                           "position must give zeros, never NaN")
    allowed = allowed.expand(weights.shape)
    leaked = weights[~allowed]
    if leaked.numel() and bool((leaked != 0).any()):
        where = [int(i) for i in torch.nonzero((weights != 0) & ~allowed)[0]]
        raise CheckFailure(f"{name} is not exactly 0 on masked positions (first at {where}, "
                           f"largest |weight| there {float(leaked.abs().max()):.3g})")
    sums = weights.sum(dim=-1)
    real_rows = allowed.any(dim=-1)
    # the sum of a handful of weights in float64 is 1 up to a few roundings of 1e-16
    bad = ((sums - 1).abs() > 1e-10) & real_rows
    if bad.any():
        where = [int(i) for i in torch.nonzero(bad)[0]]
        raise CheckFailure(f"{name}: the weights of row {where} sum to "
                           f"{float(sums[tuple(where)]):.6g}, not 1 (softmax over the real "
                           "positions only)")


def quadratic_causal_linear_attention(Q, K, V, eps):
    """y_t = Σ_{j≤t} (φ(q_t)·φ(k_j)) v_j / (Σ_{j≤t} φ(q_t)·φ(k_j) + eps), all t at once."""
    phi_q = torch.nn.functional.elu(Q) + 1
    phi_k = torch.nn.functional.elu(K) + 1
    T = Q.shape[1]
    similarity = (phi_q @ phi_k.transpose(1, 2)) * torch.tril(torch.ones(T, T, dtype=Q.dtype))
    return (similarity @ V) / (similarity.sum(dim=-1, keepdim=True) + eps)


# ------------------------------------------------------------------ masked_softmax

@pytest.mark.points(3)
def test_masked_softmax_values(student, vectors):
    for name in ("masked_softmax_padding", "masked_softmax_empty_row", "masked_softmax_float32"):
        case = vectors.case(name)
        weights = student.masked_softmax(*case.args)
        expect_tensor(f"masked_softmax ({name})", weights, case.args[0].shape)
        assert_outputs(weights, case.outputs, f"masked_softmax ({name}) weights",
                       inputs=case.args)


@pytest.mark.points(3)
def test_masked_softmax_zeros_nans_and_sums(student):
    """Random scores of ±30 and a mask with a full row, a scattered row and an empty row."""
    g = torch.Generator().manual_seed(5)
    scores = 30 * randn(g, 4, 7)
    mask = torch.rand(4, 7, generator=g) < 0.5
    mask[0] = True
    mask[1] = False
    mask[2, 3] = True
    weights = student.masked_softmax(scores, mask)
    expect_tensor("masked_softmax", weights, (4, 7))
    expect_masked_weights("masked_softmax weights", weights, mask)


# ------------------------------------------------------------------ additive, dot, general

@pytest.mark.points(2)
def test_attention_shapes(student):
    """Shapes of every function on sizes where Hd, He, da, S, B all differ."""
    g = torch.Generator().manual_seed(6)
    B, S, Hd, He, da = 2, 5, 3, 4, 6
    s, H = randn(g, B, Hd), randn(g, B, S, He)
    mask = padding_mask([5, 2], S)
    expect_pair("additive_attention", student.additive_attention(
        s, H, randn(g, da, Hd), randn(g, da, He), randn(g, da), mask),
        ("context", "alpha"), ((B, He), (B, S)))
    expect_pair("dot_attention", student.dot_attention(randn(g, B, He), H, mask),
                ("context", "alpha"), ((B, He), (B, S)))
    expect_pair("general_attention", student.general_attention(s, H, randn(g, Hd, He), mask),
                ("context", "alpha"), ((B, He), (B, S)))
    Tq, Tk, dk, dv = 3, 5, 4, 2
    expect_pair("scaled_dot_product_attention", student.scaled_dot_product_attention(
        randn(g, B, Tq, dk), randn(g, B, Tk, dk), randn(g, B, Tk, dv)),
        ("out", "weights"), ((B, Tq, dv), (B, Tq, Tk)))
    expect_tensor("causal_linear_attention", student.causal_linear_attention(
        randn(g, B, Tk, dk), randn(g, B, Tk, dk), randn(g, B, Tk, dv)), (B, Tk, dv))


@pytest.mark.points(3)
def test_additive_attention_values(student, vectors):
    for name in ("additive_attention_small", "additive_attention_single"):
        case = vectors.case(name)
        got = student.additive_attention(*case.args)
        assert_outputs(got, case.outputs, f"additive_attention ({name})",
                       names=(f"context ({name})", f"alpha ({name})"), inputs=case.args)


@pytest.mark.points(2)
def test_dot_attention_values(student, vectors):
    for name in ("dot_attention_small", "dot_attention_single"):
        case = vectors.case(name)
        got = student.dot_attention(*case.args)
        assert_outputs(got, case.outputs, f"dot_attention ({name})",
                       names=(f"context ({name})", f"alpha ({name})"), inputs=case.args)


@pytest.mark.points(2)
def test_general_attention_values(student, vectors):
    for name in ("general_attention_small", "general_attention_square"):
        case = vectors.case(name)
        got = student.general_attention(*case.args)
        assert_outputs(got, case.outputs, f"general_attention ({name})",
                       names=(f"context ({name})", f"alpha ({name})"), inputs=case.args)


# ------------------------------------------------------------------ scaled dot-product attention

@pytest.mark.points(3)
def test_scaled_dot_product_attention_values(student, vectors):
    for name in ("sdpa_plain", "sdpa_cross_with_mask", "sdpa_causal",
                 "sdpa_causal_padded_float32"):
        case = vectors.case(name)
        got = student.scaled_dot_product_attention(*case.args)
        assert_outputs(got, case.outputs, f"scaled_dot_product_attention ({name})",
                       names=(f"out ({name})", f"weights ({name})"), inputs=case.args)


@pytest.mark.points(2)
@pytest.mark.parametrize("causal", [False, True], ids=["padding", "padding_and_causal"])
def test_scaled_dot_product_attention_matches_torch(student, causal):
    """out against torch.nn.functional.scaled_dot_product_attention with the same boolean mask
    (every query keeps at least one key, so torch's result is well defined)."""
    g = torch.Generator().manual_seed(7)
    B, T, dk, dv = 3, 6, 5, 4
    Q, K, V = randn(g, B, T, dk), randn(g, B, T, dk), randn(g, B, T, dv)
    mask = padding_mask([6, 4, 1], T)
    got = student.scaled_dot_product_attention(Q, K, V, mask, causal)
    expect_pair("scaled_dot_product_attention", got, ("out", "weights"),
                ((B, T, dv), (B, T, T)))
    allowed = mask[:, None, :].expand(B, T, T)
    if causal:
        allowed = allowed & torch.tril(torch.ones(T, T, dtype=torch.bool))
    expect_masked_weights("scaled_dot_product_attention weights", got[1], allowed)
    want = torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)
    assert_outputs(got[0], want, "scaled_dot_product_attention out (against torch)",
                   inputs=(Q,))


@pytest.mark.points(2)
def test_scaled_dot_product_attention_gradients_match_torch(student):
    """Autograd through your function gives torch's gradients for Q, K and V."""
    g = torch.Generator().manual_seed(8)
    B, T, dk, dv = 2, 5, 3, 4
    Q, K, V = randn(g, B, T, dk), randn(g, B, T, dk), randn(g, B, T, dv)
    mask = padding_mask([5, 3], T)
    upstream = randn(g, B, T, dv)
    result = student.helper("autograd", "scaled_dot_product_attention", (Q, K, V, mask, True),
                            [upstream, torch.zeros(B, T, T, dtype=torch.float64)], [0, 1, 2])
    leaves = [x.clone().requires_grad_(True) for x in (Q, K, V)]
    allowed = mask[:, None, :] & torch.tril(torch.ones(T, T, dtype=torch.bool))
    out = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=allowed)
    wanted = torch.autograd.grad((out * upstream).sum(), leaves)
    for name, got, want in zip("QKV", result["grads"], wanted):
        if got is None:
            raise CheckFailure(f"no gradient reached {name}: autograd cannot follow your "
                               "computation (use torch operations only: no .numpy(), .item() "
                               "or .detach())")
        assert_outputs(got, want, f"gradient of {name}", inputs=(Q,))


# ------------------------------------------------------------------ causal linear attention

@pytest.mark.points(3)
def test_causal_linear_attention_values(student, vectors):
    for name in ("linear_attention_small", "linear_attention_eps", "linear_attention_float32"):
        case = vectors.case(name)
        got = student.causal_linear_attention(*case.args)
        assert_outputs(got, case.outputs, f"causal_linear_attention ({name}) out",
                       inputs=case.args)


@pytest.mark.points(3)
def test_causal_linear_attention_equals_the_quadratic_form(student):
    g = torch.Generator().manual_seed(9)
    B, T, dk, dv = 2, 9, 3, 5
    Q, K, V = randn(g, B, T, dk), randn(g, B, T, dk), randn(g, B, T, dv)
    got = student.causal_linear_attention(Q, K, V, 1e-3)
    expect_tensor("causal_linear_attention", got, (B, T, dv))
    assert_outputs(got, quadratic_causal_linear_attention(Q, K, V, 1e-3),
                   "causal_linear_attention out (against the quadratic causal form)",
                   inputs=(Q,))

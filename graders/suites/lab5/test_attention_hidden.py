"""Hidden suite for lab5: attention (contract: assignments/lab5/README.md).

Every function against the reference on random sizes and masks (fully masked rows included: no
NaN anywhere, exact zeros on masked positions, rows summing to 1 otherwise);
scaled_dot_product_attention against torch.nn.functional.scaled_dot_product_attention (CPU, CUDA);
causal_linear_attention against the quadratic causal form; the no-peek property of both causal
forms tested directly; autograd gradients against the reference's and torch's.
"""

import pytest
import torch

from rnngrade.suite import EXACT, FLOAT64, CheckFailure, Tolerance, device_params

# float32 on CUDA with TF32 off: the student's kernels and torch's fused attention kernels sum in
# different orders; each rounding is 6e-8 and a row of attention sums at most a few dozen O(1)
# terms, so the two differ by ~1e-6 on O(1) outputs and gradients. The float32 tolerance (1e-5
# abs, 1e-4 rel) keeps 10x above that.
CUDA_FLOAT32 = Tolerance(1e-5, 1e-4, "float32 on CUDA (TF32 off); summation order ~1e-6")


# ------------------------------------------------------------------ inputs

def tensor(rng, shape, device="cpu", dtype=torch.float64, scale=1.0):
    return torch.from_numpy(scale * rng.standard_normal(shape)).to(device=device, dtype=dtype)


def lengths_mask(lengths, S, device="cpu"):
    """bool (B, S), True on the first lengths[b] positions of row b (0: a fully masked row)."""
    return (torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]).to(device)


def scattered_mask(rng, B, S, device="cpu"):
    """A random mask with, when B allows, one fully masked row and one full row."""
    mask = torch.from_numpy(rng.random((B, S)) < 0.6)
    mask[:, 0] |= torch.from_numpy(rng.random(B) < 0.5)
    if B >= 2:
        mask[0] = False
        mask[-1] = True
    return mask.to(device)


def mask_for(kind, rng, B, S, device="cpu"):
    if kind == "full":
        return torch.ones(B, S, dtype=torch.bool, device=device)
    if kind == "lengths":  # descending lengths, the last one 0 (a fully masked row) when B > 1
        lengths = [S - (b * S) // B for b in range(B)]
        if B >= 2:
            lengths[-1] = 0
        return lengths_mask(lengths, S, device)
    return scattered_mask(rng, B, S, device)


def allowed_keys(mask, causal, Tq, Tk):
    """(B, Tq, Tk) on the CPU: key j visible to query i."""
    B = mask.shape[0] if mask is not None else 1
    allowed = torch.ones(B, Tq, Tk, dtype=torch.bool)
    if mask is not None:
        allowed = allowed & mask.cpu()[:, None, :]
    if causal:
        allowed = allowed & torch.tril(torch.ones(Tq, Tk, dtype=torch.bool))
    return allowed


def dtype_for(device):
    return torch.float64 if device == "cpu" else torch.float32


def tol_for(device):
    return None if device == "cpu" else CUDA_FLOAT32


# ------------------------------------------------------------------ probes

def expect_shape(function, value, shape):
    """Raise a clear failure before indexing a result of the wrong kind or shape."""
    if value is None:
        raise CheckFailure(f"{function} returns None — looks unfinished")
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = (f"shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
               else f"a {type(value).__name__}")
        raise CheckFailure(f"{function}: got {got}, expected a tensor of shape {tuple(shape)}")
    return value


def pair(function, result):
    if not isinstance(result, tuple) or len(result) != 2:
        raise CheckFailure(f"{function} should return a pair (out, weights)")
    return result


def masked_entries(weights, allowed):
    """The weights where ``allowed`` is False (all must be exactly 0)."""
    return weights[~allowed.to(weights.device)]


def row_sums(weights, allowed):
    """The sums of the rows that have at least one allowed position (all must be 1)."""
    return weights.sum(dim=-1)[allowed.any(dim=-1).to(weights.device)]


def call(function):
    return lambda m, *a: getattr(m, function)(*a)


def autograd_probe(function, upstream, wrt):
    """A probe: autograd through ``function`` beside the module; outputs, then gradients."""

    def probe(m, *args):
        result = m.helper("autograd", function, args, upstream, wrt)
        outputs = result["outputs"]
        outputs = tuple(outputs) if isinstance(outputs, tuple | list) else (outputs,)
        for i, grad in zip(wrt, result["grads"]):
            if grad is None:
                raise CheckFailure(f"no gradient reached argument {i + 1} of {function}: "
                                   "autograd cannot follow the computation (torch operations "
                                   "only: no .numpy(), .item() or .detach())")
        return (*outputs, *result["grads"])

    return probe


def quadratic_causal_linear_attention(Q, K, V, eps=1e-6):
    """y_t = Σ_{j≤t} (φ(q_t)·φ(k_j)) v_j / (Σ_{j≤t} φ(q_t)·φ(k_j) + eps), φ = elu + 1, in
    float64: an independent statement of what the recurrence must compute."""
    dtype = Q.dtype
    Q, K, V = (t.to(torch.float64) for t in (Q, K, V))
    phi_q = torch.nn.functional.elu(Q) + 1
    phi_k = torch.nn.functional.elu(K) + 1
    T = Q.shape[1]
    causal = torch.tril(torch.ones(T, T, dtype=torch.float64, device=Q.device))
    similarity = (phi_q @ phi_k.transpose(1, 2)) * causal
    out = (similarity @ V) / (similarity.sum(dim=-1, keepdim=True) + eps)
    return out.to(dtype)


def torch_sdpa(Q, K, V, mask=None, causal=False):
    """(out, weights): out from torch.nn.functional.scaled_dot_product_attention with the same
    boolean pattern, weights from an explicit softmax over the visible keys (every query here
    sees at least one key)."""
    Tq, Tk, dk = Q.shape[1], K.shape[1], Q.shape[2]
    allowed = allowed_keys(mask, causal, Tq, Tk).to(Q.device)
    out = torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)
    scores = (Q @ K.transpose(1, 2) / dk**0.5).masked_fill(~allowed, float("-inf"))
    return out, torch.softmax(scores, dim=-1)


# ------------------------------------------------------------------ masked_softmax

MASK_KINDS = ["full", "lengths", "scattered"]


@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("B, S", [(3, 5), (1, 4), (6, 12), (4, 1)], ids=str)
def test_masked_softmax_random(check, rng, B, S, kind):
    scores, mask = tensor(rng, (B, S), scale=3.0), mask_for(kind, rng, B, S)
    check.expect(f"masked_softmax ({kind} mask)", call("masked_softmax"), (scores, mask),
                 names=("weights",))


@pytest.mark.parametrize("scale", [1.0, 30.0, 1000.0], ids=lambda s: f"scores_x{s:g}")
def test_masked_softmax_zeros_and_sums(check, rng, scale):
    """No NaN anywhere, exactly 0 on masked positions (and on rows with no real position), rows
    with a real position sum to 1."""
    B, S = 6, 9
    scores, mask = tensor(rng, (B, S), scale=scale), scattered_mask(rng, B, S)

    def weights_of(m, scores, mask):
        return expect_shape("masked_softmax", m.masked_softmax(scores, mask), (B, S))

    check.expect("masked_softmax weights at masked positions",
                 lambda m, *a: masked_entries(weights_of(m, *a), mask), (scores, mask),
                 oracle=lambda *a: masked_entries(torch.zeros(B, S, dtype=torch.float64), mask),
                 tol=EXACT, names=("weights at masked positions",))
    real_rows = int(mask.any(dim=-1).sum())
    check.expect("masked_softmax row sums", lambda m, *a: row_sums(weights_of(m, *a), mask),
                 (scores, mask), oracle=lambda *a: torch.ones(real_rows, dtype=torch.float64),
                 tol=FLOAT64, names=("sums of rows with a real position",))


# ------------------------------------------------------------------ additive, dot, general

ATTENTION_SIZES = [  # (B, S, Hd, He, da)
    pytest.param(3, 5, 4, 6, 7, id="B3-S5-Hd4-He6"),
    pytest.param(1, 1, 2, 3, 2, id="B1-S1"),
    pytest.param(4, 7, 5, 5, 3, id="Hd=He"),
    pytest.param(8, 16, 12, 10, 9, id="B8-S16"),
]


def attention_args(rng, kind, B, S, Hd, He, da, mask_kind):
    s, H = tensor(rng, (B, Hd)), tensor(rng, (B, S, He))
    mask = mask_for(mask_kind, rng, B, S)
    if kind == "additive":
        return (s, H, tensor(rng, (da, Hd), scale=0.8), tensor(rng, (da, He), scale=0.8),
                tensor(rng, (da,)), mask)
    if kind == "dot":
        return (tensor(rng, (B, He)), H, mask)
    return (s, H, tensor(rng, (Hd, He), scale=Hd**-0.5), mask)


@pytest.mark.parametrize("mask_kind", ["lengths", "scattered"])
@pytest.mark.parametrize("B, S, Hd, He, da", ATTENTION_SIZES)
def test_additive_attention_random(check, rng, B, S, Hd, He, da, mask_kind):
    args = attention_args(rng, "additive", B, S, Hd, He, da, mask_kind)
    check.expect("additive_attention", call("additive_attention"), args,
                 names=("context", "alpha"))


@pytest.mark.parametrize("zero", ["s", "W_a", "U_a"])
def test_additive_attention_term_isolation(check, rng, zero):
    """One input or weight at zero, so a missing or misplaced term shows on its own."""
    names = ("s", "H", "W_a", "U_a", "v_a", "mask")
    args = dict(zip(names, attention_args(rng, "additive", 3, 6, 4, 5, 7, "lengths")))
    args[zero] = torch.zeros_like(args[zero])
    check.expect(f"additive_attention with {zero} = 0", call("additive_attention"),
                 tuple(args[n] for n in names), names=("context", "alpha"))


@pytest.mark.parametrize("mask_kind", ["full", "lengths", "scattered"])
@pytest.mark.parametrize("B, S, Hd, He, da", ATTENTION_SIZES)
def test_dot_attention_random(check, rng, B, S, Hd, He, da, mask_kind):
    args = attention_args(rng, "dot", B, S, Hd, He, da, mask_kind)
    check.expect("dot_attention", call("dot_attention"), args, names=("context", "alpha"))


@pytest.mark.parametrize("mask_kind", ["lengths", "scattered"])
@pytest.mark.parametrize("B, S, Hd, He, da", ATTENTION_SIZES)
def test_general_attention_random(check, rng, B, S, Hd, He, da, mask_kind):
    args = attention_args(rng, "general", B, S, Hd, He, da, mask_kind)
    check.expect("general_attention", call("general_attention"), args,
                 names=("context", "alpha"))


# ------------------------------------------------------------------ scaled dot-product attention

SDPA_CASES = [  # (B, Tq, Tk, dk, dv, key lengths or None, causal); every query sees a key
    pytest.param(2, 4, 6, 8, 3, None, False, id="cross-no_mask"),
    pytest.param(3, 5, 7, 4, 5, (7, 3, 1), False, id="cross-key_mask"),
    pytest.param(2, 6, 6, 16, 4, None, True, id="causal"),
    pytest.param(3, 6, 6, 5, 2, (6, 4, 2), True, id="causal-key_mask"),
    pytest.param(2, 3, 5, 6, 4, None, True, id="causal-Tq<Tk"),
    pytest.param(1, 1, 1, 3, 2, None, True, id="T1"),
    pytest.param(4, 16, 16, 32, 8, (16, 9, 16, 1), True, id="larger-causal-key_mask"),
]


def sdpa_args(rng, device, B, Tq, Tk, dk, dv, lengths, causal):
    dtype = dtype_for(device)
    args = (tensor(rng, (B, Tq, dk), device, dtype), tensor(rng, (B, Tk, dk), device, dtype),
            tensor(rng, (B, Tk, dv), device, dtype))
    mask = lengths_mask(lengths, Tk, device) if lengths is not None else None
    return (*args, mask, causal)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("B, Tq, Tk, dk, dv, lengths, causal", SDPA_CASES)
def test_scaled_dot_product_attention_vs_torch(check, rng, device, B, Tq, Tk, dk, dv, lengths,
                                               causal):
    args = sdpa_args(rng, device, B, Tq, Tk, dk, dv, lengths, causal)
    check.expect(f"scaled_dot_product_attention against torch on {device}",
                 call("scaled_dot_product_attention"), args, oracle=torch_sdpa,
                 tol=tol_for(device), names=("out", "weights"))


@pytest.mark.parametrize("case", ["empty_key_mask_row", "causal_first_key_masked"])
def test_scaled_dot_product_attention_queries_without_keys(check, rng, case):
    """A query that may see no key gets zero weights and a zero output, never NaN (compared with
    the reference: backends disagree on what torch returns there)."""
    B, T, dk, dv = 3, 5, 4, 3
    Q, K, V = tensor(rng, (B, T, dk)), tensor(rng, (B, T, dk)), tensor(rng, (B, T, dv))
    mask = lengths_mask([5, 0, 3], T)
    causal = case == "causal_first_key_masked"
    if causal:
        mask = torch.ones(B, T, dtype=torch.bool)
        mask[:, 0] = False  # query 0 sees only key 0, which is padding
        mask[2, :3] = False
    check.expect(f"scaled_dot_product_attention ({case})", call("scaled_dot_product_attention"),
                 (Q, K, V, mask, causal), names=("out", "weights"))
    allowed = allowed_keys(mask, causal, T, T)

    def weights_of(m, *a):
        weights = pair("scaled_dot_product_attention", m.scaled_dot_product_attention(*a))[1]
        return expect_shape("scaled_dot_product_attention weights", weights, (B, T, T))

    check.expect("scaled_dot_product_attention weights on hidden keys",
                 lambda m, *a: masked_entries(weights_of(m, *a), allowed),
                 (Q, K, V, mask, causal),
                 oracle=lambda *a: masked_entries(torch.zeros(B, T, T, dtype=torch.float64),
                                                  allowed),
                 tol=EXACT, names=("weights on hidden keys",))


def test_scaled_dot_product_attention_causal_no_peek(check, rng):
    """Changing the keys and values after position t0 leaves outputs and weights of the queries
    up to t0 unchanged: both runs in one probe, so the check compares the change with zero
    (and a failing masked_softmax is replaced in both runs alike, grading/stand_ins.py)."""
    B, T, dk, dv, t0 = 2, 7, 4, 3, 3
    Q, K, V = tensor(rng, (B, T, dk)), tensor(rng, (B, T, dk)), tensor(rng, (B, T, dv))
    K2, V2 = K.clone(), V.clone()
    K2[:, t0 + 1:] = tensor(rng, (B, T - t0 - 1, dk), scale=3.0)
    V2[:, t0 + 1:] = tensor(rng, (B, T - t0 - 1, dv), scale=3.0)

    def prefix(m, Q, K, V):
        out, weights = pair("scaled_dot_product_attention",
                            m.scaled_dot_product_attention(Q, K, V, None, True))
        out = expect_shape("scaled_dot_product_attention out", out, (B, T, dv))
        weights = expect_shape("scaled_dot_product_attention weights", weights, (B, T, T))
        return out[:, : t0 + 1], weights[:, : t0 + 1]

    def change(m, Q, K, V, K2, V2):
        (out, weights), (out2, weights2) = prefix(m, Q, K, V), prefix(m, Q, K2, V2)
        return out2 - out, weights2 - weights

    def unchanged(Q, *_):
        return (torch.zeros(B, t0 + 1, dv, dtype=Q.dtype),
                torch.zeros(B, t0 + 1, T, dtype=Q.dtype))

    check.expect("scaled_dot_product_attention (causal): change of the queries up to t0 after "
                 "changing later keys and values", change, (Q, K, V, K2, V2), oracle=unchanged,
                 names=("out up to t0", "weights up to t0"))


# ------------------------------------------------------------------ causal linear attention

LINEAR_CASES = [  # (B, T, dk, dv, eps)
    pytest.param(2, 6, 3, 4, 1e-6, id="B2-T6"),
    pytest.param(1, 1, 2, 3, 1e-6, id="T1"),
    pytest.param(3, 5, 1, 2, 0.5, id="dk1-eps0.5"),
    pytest.param(4, 64, 8, 6, 1e-6, id="T64"),
]


@pytest.mark.parametrize("B, T, dk, dv, eps", LINEAR_CASES)
def test_causal_linear_attention_vs_quadratic_form(check, rng, B, T, dk, dv, eps):
    args = (tensor(rng, (B, T, dk)), tensor(rng, (B, T, dk)), tensor(rng, (B, T, dv)), eps)
    check.expect("causal_linear_attention against the quadratic causal form",
                 call("causal_linear_attention"), args,
                 oracle=quadratic_causal_linear_attention, names=("out",), time_axis=1)


def test_causal_linear_attention_default_eps(check, rng):
    args = (tensor(rng, (2, 5, 3)), tensor(rng, (2, 5, 3)), tensor(rng, (2, 5, 2)))
    check.expect("causal_linear_attention with the default eps", call("causal_linear_attention"),
                 args, names=("out",), time_axis=1)


def test_causal_linear_attention_no_peek(check, student, rng):
    """Changing the keys and values after position t0 leaves the outputs up to t0 unchanged."""
    B, T, dk, dv, t0 = 2, 8, 3, 4, 4
    Q, K, V = tensor(rng, (B, T, dk)), tensor(rng, (B, T, dk)), tensor(rng, (B, T, dv))
    K2, V2 = K.clone(), V.clone()
    K2[:, t0 + 1:] = tensor(rng, (B, T - t0 - 1, dk), scale=3.0)
    V2[:, t0 + 1:] = tensor(rng, (B, T - t0 - 1, dv), scale=3.0)

    def prefix(m, Q, K, V):
        out = expect_shape("causal_linear_attention", m.causal_linear_attention(Q, K, V),
                           (B, T, dv))
        return out[:, : t0 + 1]

    before = prefix(student, Q, K, V)
    check.expect("causal_linear_attention: outputs up to t0 after changing later keys and "
                 "values", prefix, (Q, K2, V2), oracle=lambda *a: before,
                 names=("out up to t0",))


# ------------------------------------------------------------------ every function: dtype, device

ALL_FUNCTIONS = ["masked_softmax", "additive_attention", "dot_attention", "general_attention",
                 "scaled_dot_product_attention", "causal_linear_attention"]


def float32_case(rng, function, device):
    """Arguments of ``function`` in float32 on ``device``, with a fully masked row."""
    def t(*shape, scale=1.0):
        return tensor(rng, shape, device, torch.float32, scale)

    mask = lengths_mask([5, 2, 0], 5, device)
    if function == "masked_softmax":
        return (t(3, 5, scale=3.0), mask)
    if function == "additive_attention":
        return (t(3, 4), t(3, 5, 6), t(7, 4), t(7, 6), t(7), mask)
    if function == "dot_attention":
        return (t(3, 6), t(3, 5, 6), mask)
    if function == "general_attention":
        return (t(3, 4), t(3, 5, 6), t(4, 6, scale=0.5), mask)
    if function == "scaled_dot_product_attention":
        return (t(3, 5, 4), t(3, 5, 4), t(3, 5, 3), lengths_mask([5, 2, 1], 5, device), True)
    return (t(3, 5, 4), t(3, 5, 4), t(3, 5, 3))


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("function", ALL_FUNCTIONS)
def test_float32_on_device(check, rng, device, function):
    """float32 inputs on each device against the reference computed in float64 on the same
    device: results stay float32 and on the inputs' device."""
    check.expect(f"{function} (float32 on {device})", call(function),
                 float32_case(rng, function, device), tol=tol_for(device))


# ------------------------------------------------------------------ gradients

OUTPUT_NAMES = {"masked_softmax": ("weights",), "additive_attention": ("context", "alpha"),
                "dot_attention": ("context", "alpha"), "general_attention": ("context", "alpha"),
                "scaled_dot_product_attention": ("out", "weights"),
                "causal_linear_attention": ("out",)}


def gradient_case(rng, function):
    """(arguments, upstream gradients for every output tensor, positions to differentiate)."""
    mask = lengths_mask([6, 3, 0], 6)
    if function == "masked_softmax":
        return (tensor(rng, (3, 6), scale=2.0), mask), [tensor(rng, (3, 6))], [0]
    if function == "additive_attention":
        args = (tensor(rng, (3, 4)), tensor(rng, (3, 6, 5)), tensor(rng, (7, 4)),
                tensor(rng, (7, 5)), tensor(rng, (7,)), mask)
        return args, [tensor(rng, (3, 5)), tensor(rng, (3, 6))], [0, 1, 2, 3, 4]
    if function == "dot_attention":
        args = (tensor(rng, (3, 5)), tensor(rng, (3, 6, 5)), mask)
        return args, [tensor(rng, (3, 5)), tensor(rng, (3, 6))], [0, 1]
    if function == "general_attention":
        args = (tensor(rng, (3, 4)), tensor(rng, (3, 6, 5)), tensor(rng, (4, 5), scale=0.5), mask)
        return args, [tensor(rng, (3, 5)), tensor(rng, (3, 6))], [0, 1, 2]
    if function == "scaled_dot_product_attention":
        args = (tensor(rng, (3, 6, 4)), tensor(rng, (3, 6, 4)), tensor(rng, (3, 6, 2)),
                lengths_mask([6, 3, 1], 6), True)
        return args, [tensor(rng, (3, 6, 2)), tensor(rng, (3, 6, 6))], [0, 1, 2]
    args = (tensor(rng, (2, 7, 3)), tensor(rng, (2, 7, 3)), tensor(rng, (2, 7, 4)))
    return args, [tensor(rng, (2, 7, 4))], [0, 1, 2]


@pytest.mark.parametrize("function", ALL_FUNCTIONS)
def test_gradients_vs_reference(check, rng, function):
    """Autograd through the student's function gives the reference's gradients (and no NaN on
    fully masked rows)."""
    args, upstream, wrt = gradient_case(rng, function)
    check.expect(f"{function}: autograd gradients", autograd_probe(function, upstream, wrt),
                 args, names=(*OUTPUT_NAMES[function],
                              *(f"gradient of argument {i + 1}" for i in wrt)))


@pytest.mark.parametrize("device", device_params())
def test_scaled_dot_product_attention_gradients_vs_torch(check, rng, device):
    """Autograd through the student's function against autograd through torch's."""
    B, T, dk, dv = 3, 6, 4, 5
    args = sdpa_args(rng, device, B, T, T, dk, dv, (6, 4, 1), True)
    dtype = dtype_for(device)
    upstream = [tensor(rng, (B, T, dv), device, dtype),
                torch.zeros(B, T, T, device=device, dtype=dtype)]

    def oracle(Q, K, V, mask, causal):
        leaves = [x.clone().requires_grad_(True) for x in (Q, K, V)]
        out, weights = torch_sdpa(*leaves, mask, causal)
        grads = torch.autograd.grad((out * upstream[0]).sum(), leaves)
        return (out.detach(), weights.detach(), *grads)

    check.expect(f"scaled_dot_product_attention gradients against torch on {device}",
                 autograd_probe("scaled_dot_product_attention", upstream, [0, 1, 2]), args,
                 oracle=oracle, tol=tol_for(device),
                 names=("out", "weights", "gradient of Q", "gradient of K", "gradient of V"))

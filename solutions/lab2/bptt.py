"""Lab 2 — backpropagation through time.

The NumPy functions use the classic column layout of lab 1: features down, examples across, time
last. An input sequence ``x`` has shape ``(n_x, m, T_x)``; a hidden state ``a`` has shape
``(n_a, m)``.

``parameters`` is a dict with
    Wax (n_a, n_x)   input  → hidden
    Waa (n_a, n_a)   hidden → hidden
    Wya (n_y, n_a)   hidden → output
    ba  (n_a, 1)     hidden bias
    by  (n_y, 1)     output bias

``rnn_cell_forward`` and ``rnn_forward`` are the forward pass of lab 1 and ship filled in. Your
backward functions receive the caches that *these* forward functions return, so if you replace them
by your own lab 1 code, keep the two consistent.

Every gradient has the shape of the quantity it differentiates (``dWax`` like ``Wax``, …), and the
results keep the dtype of the inputs (float32 in, float32 out).
"""

from collections.abc import Callable

import numpy as np


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over axis 0 (each column sums to 1), stable for large logits."""
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


def rnn_cell_forward(xt: np.ndarray, a_prev: np.ndarray, parameters: dict) -> tuple:
    """One time step of the RNN (from lab 1).

    xt (n_x, m), a_prev (n_a, m). Returns ``(a_next, yt_pred, cache)`` with
        a_next  = tanh(Waa · a_prev + Wax · xt + ba)     (n_a, m)
        yt_pred = softmax(Wya · a_next + by)             (n_y, m)
        cache   = (a_next, a_prev, xt, parameters)
    """
    a_next = np.tanh(
        np.dot(parameters["Waa"], a_prev) + np.dot(parameters["Wax"], xt) + parameters["ba"]
    )
    yt_pred = softmax(np.dot(parameters["Wya"], a_next) + parameters["by"])
    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache


def rnn_forward(x: np.ndarray, a0: np.ndarray, parameters: dict) -> tuple:
    """The RNN over a whole sequence (from lab 1).

    x (n_x, m, T_x), a0 (n_a, m). Returns ``(a, y_pred, caches)``: ``a (n_a, m, T_x)`` the
    hidden state after every step, ``y_pred (n_y, m, T_x)``, and
    ``caches = (list of the T_x cell caches, x)``.
    """
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a = np.zeros((n_a, m, T_x), dtype=x.dtype)
    y_pred = np.zeros((n_y, m, T_x), dtype=x.dtype)
    caches = []
    a_next = a0
    for t in range(T_x):
        a_next, yt_pred, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
    return a, y_pred, (caches, x)


def rnn_cell_backward(da_next: np.ndarray, cache: tuple) -> dict:
    """Backward pass through one RNN step.

    da_next: (n_a, m)  the gradient of the loss with respect to a_next
    cache:   what ``rnn_cell_forward`` returned: (a_next, a_prev, xt, parameters)

    The step computed a_next = tanh(z) with z = Waa · a_prev + Wax · xt + ba. Since
    tanh'(z) = 1 − tanh(z)² = 1 − a_next², the gradient reaching z is dz = (1 − a_next²) ⊙ da_next,
    and from it
        dxt    = Waxᵀ · dz        (n_x, m)
        da_prev = Waaᵀ · dz       (n_a, m)
        dWax   = dz · xtᵀ         (n_a, n_x)
        dWaa   = dz · a_prevᵀ     (n_a, n_a)
        dba    = dz summed over the m examples, kept as a column (n_a, 1)

    Returns a dict with keys "dxt", "da_prev", "dWax", "dWaa", "dba".
    """
    # BEGIN SOLUTION
    a_next, a_prev, xt, parameters = cache
    Wax = parameters["Wax"]
    Waa = parameters["Waa"]
    dz = (1 - a_next ** 2) * da_next
    dxt = Wax.T @ dz
    da_prev = Waa.T @ dz
    dWax = dz @ xt.T
    dWaa = dz @ a_prev.T
    dba = np.sum(dz, axis=1, keepdims=True)
    return {"dxt": dxt, "da_prev": da_prev, "dWax": dWax, "dWaa": dWaa, "dba": dba}
    # END SOLUTION


def rnn_backward(da: np.ndarray, caches: tuple) -> dict:
    """Backpropagation through time over a whole sequence.

    da:     (n_a, m, T_x)  the upstream gradient of every hidden state: da[:, :, t] is
            ∂L/∂a[:, :, t] coming from outside the recurrence (e.g. from the output layer)
    caches: what ``rnn_forward`` returned: (list of cell caches, x)

    Walk backwards in time. The hidden state of step t also fed step t+1, so the gradient that
    reaches it is da[:, :, t] *plus* the da_prev that step t+1 sent back. The weights are shared
    by all steps: add up their gradients over t.

    Returns a dict with
        "dx"   (n_x, m, T_x)  gradient of every input
        "da0"  (n_a, m)       gradient of the initial hidden state
        "dWax" (n_a, n_x), "dWaa" (n_a, n_a), "dba" (n_a, 1)
    """
    # BEGIN SOLUTION
    cell_caches, x = caches
    n_a, m, T_x = da.shape
    n_x = x.shape[0]
    dx = np.zeros((n_x, m, T_x), dtype=da.dtype)
    dWax = np.zeros((n_a, n_x), dtype=da.dtype)
    dWaa = np.zeros((n_a, n_a), dtype=da.dtype)
    dba = np.zeros((n_a, 1), dtype=da.dtype)
    da_prevt = np.zeros((n_a, m), dtype=da.dtype)
    for t in reversed(range(T_x)):
        grads = rnn_cell_backward(da[:, :, t] + da_prevt, cell_caches[t])
        dx[:, :, t] = grads["dxt"]
        dWax += grads["dWax"]
        dWaa += grads["dWaa"]
        dba += grads["dba"]
        da_prevt = grads["da_prev"]
    return {"dx": dx, "da0": da_prevt, "dWax": dWax, "dWaa": dWaa, "dba": dba}
    # END SOLUTION


def clip(gradients: dict, maxValue: float) -> dict:
    """Clip every gradient element-wise to the interval [−maxValue, maxValue].

    gradients: dict of arrays (classically "dWaa", "dWax", "dWya", "db", "dby", but any keys)
    maxValue:  a positive number

    Each entry below −maxValue becomes −maxValue, each entry above maxValue becomes maxValue,
    the others stay as they are. Returns a dict with the same keys (arrays of the same shapes and
    dtypes).
    """
    # BEGIN SOLUTION
    return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}
    # END SOLUTION


def clip_by_global_norm(grads: dict, max_norm: float) -> tuple:
    """Rescale all gradients together so that their joint L2 norm is at most ``max_norm``.

    grads:    dict of arrays
    max_norm: a positive number

    norm is the L2 norm of all entries of all arrays taken together:
        norm = sqrt(sum over every array g of sum(g ** 2)).
    Every array is multiplied by the same factor min(1, max_norm / (norm + 1e-12)), so the
    direction of the whole gradient is kept and nothing changes when norm <= max_norm.

    Returns ``(clipped_grads, norm_before)``: a dict with the same keys, shapes and dtypes, and
    the norm before clipping as a Python float.
    """
    # BEGIN SOLUTION
    total = sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads.values())
    norm = float(np.sqrt(total))
    scale = min(1.0, max_norm / (norm + 1e-12))
    clipped = {name: g * scale for name, g in grads.items()}
    return clipped, norm
    # END SOLUTION


def numerical_gradient(f: Callable[[], float], x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Estimate the gradient of a scalar function by central differences.

    f:   a function without arguments that returns a number; it reads the array ``x``
    x:   the array to differentiate with respect to (any shape)
    eps: the step

    For every entry x[i] in turn: set it to x[i] + eps and call f, set it to x[i] − eps and call
    f, then put the original value back *exactly*, and use
        grad[i] = (f(x + eps) − f(x − eps)) / (2 eps).
    Returns ``grad``, an array of the shape and dtype of ``x``. When the function returns, ``x``
    holds exactly the values it held before.
    """
    # BEGIN SOLUTION
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + eps
        f_plus = float(f())
        x[index] = old - eps
        f_minus = float(f())
        x[index] = old
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
    # END SOLUTION


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """The largest entry-wise relative error between two arrays of the same shape.

    error = max over entries of |a − b| / max(|a|, |b|, 1e-12)

    The 1e-12 floor makes two zeros agree (error 0) instead of giving 0 / 0 = NaN.
    Returns a Python float.
    """
    # BEGIN SOLUTION
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    scale = np.maximum(scale, 1e-12)
    return float(np.max(np.abs(a - b) / scale))
    # END SOLUTION


def char_rnn_loss_and_grads(p: dict, X: np.ndarray, Y: np.ndarray, h0: np.ndarray) -> tuple:
    """Loss and gradients of a character-level RNN language model on one batch.

    States are columns, one per stream of text:
        p["W_xh"] (H, V), p["W_hh"] (H, H), p["b_h"] (H,), p["W_hy"] (V, H), p["b_y"] (V,)
        X, Y: int arrays (B, T) of character ids; Y is X shifted by one character
        h0:   (H, B) the state carried over from the previous batch

    For t = 0 .. T−1 (column b belongs to stream b):
        z_t      = W_xh[:, X[:, t]] + W_hh · h_{t−1} + b_h[:, None]     (H, B)
        h_t      = tanh(z_t)
        logits_t = W_hy · h_t + b_y[:, None]                            (V, B)
    loss = the mean over all B·T positions of −ln softmax(logits_t)[Y[b, t], b].

    W_xh[:, X[:, t]] picks one column of W_xh per stream (a one-hot input times W_xh). When two
    streams read the same character at the same step, that column receives both gradients: add
    them with ``np.add.at``; ``dW_xh[:, X[:, t]] += ...`` would keep only one of them.
    No gradient flows into h0 (truncated backpropagation through time).

    Returns ``(loss, grads, h_last)``: loss a Python float, grads a dict with the keys and shapes
    of ``p``, and h_last = h_{T−1} of shape (H, B), to be fed as h0 of the next batch.
    """
    # BEGIN SOLUTION
    W_xh, W_hh, b_h = p["W_xh"], p["W_hh"], p["b_h"]
    W_hy, b_y = p["W_hy"], p["b_y"]
    B, T = X.shape
    streams = np.arange(B)
    scale = 1.0 / (B * T)

    hs = [h0]
    probs = []
    loss = 0.0
    for t in range(T):
        z = W_xh[:, X[:, t]] + W_hh @ hs[-1] + b_h[:, None]
        h = np.tanh(z)
        logits = W_hy @ h + b_y[:, None]
        shifted = logits - np.max(logits, axis=0, keepdims=True)
        log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=0, keepdims=True))
        loss -= float(np.sum(log_probs[Y[:, t], streams]))
        hs.append(h)
        probs.append(np.exp(log_probs))
    loss *= scale

    grads = {name: np.zeros_like(value) for name, value in p.items()}
    dh_next = np.zeros_like(hs[-1])
    for t in reversed(range(T)):
        dlogits = probs[t].copy()
        dlogits[Y[:, t], streams] -= 1
        dlogits *= scale
        grads["W_hy"] += dlogits @ hs[t + 1].T
        grads["b_y"] += np.sum(dlogits, axis=1)
        dh = W_hy.T @ dlogits + dh_next
        dz = (1 - hs[t + 1] ** 2) * dh
        np.add.at(grads["W_xh"], (slice(None), X[:, t]), dz)
        grads["W_hh"] += dz @ hs[t].T
        grads["b_h"] += np.sum(dz, axis=1)
        dh_next = W_hh.T @ dz
    return loss, grads, hs[-1]
    # END SOLUTION

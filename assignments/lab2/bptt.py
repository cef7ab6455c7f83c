# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab2` to check.
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
    raise NotImplementedError("rnn_cell_backward: not implemented yet — replace this line with your code")


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
    raise NotImplementedError("rnn_backward: not implemented yet — replace this line with your code")


def clip(gradients: dict, maxValue: float) -> dict:
    """Clip every gradient element-wise to the interval [−maxValue, maxValue].

    gradients: dict of arrays (classically "dWaa", "dWax", "dWya", "db", "dby", but any keys)
    maxValue:  a positive number

    Each entry below −maxValue becomes −maxValue, each entry above maxValue becomes maxValue,
    the others stay as they are. Returns a dict with the same keys (arrays of the same shapes and
    dtypes).
    """
    raise NotImplementedError("clip: not implemented yet — replace this line with your code")


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
    raise NotImplementedError("clip_by_global_norm: not implemented yet — replace this line with your code")


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
    raise NotImplementedError("numerical_gradient: not implemented yet — replace this line with your code")


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """The largest entry-wise relative error between two arrays of the same shape.

    error = max over entries of |a − b| / max(|a|, |b|, 1e-12)

    The 1e-12 floor makes two zeros agree (error 0) instead of giving 0 / 0 = NaN.
    Returns a Python float.
    """
    raise NotImplementedError("relative_error: not implemented yet — replace this line with your code")


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
    raise NotImplementedError("char_rnn_loss_and_grads: not implemented yet — replace this line with your code")

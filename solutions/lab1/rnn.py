"""Lab 1 — a recurrent neural network, forward pass, step by step.

The NumPy functions use the classic column layout: features down, examples across, time last.
An input sequence ``x`` has shape ``(n_x, m, T_x)``; a hidden state ``a`` has shape ``(n_a, m)``.

``parameters`` is a dict with
    Wax (n_a, n_x)   input  → hidden
    Waa (n_a, n_a)   hidden → hidden
    Wya (n_y, n_a)   hidden → output
    ba  (n_a, 1)     hidden bias
    by  (n_y, 1)     output bias

``rnn_forward_batch`` is the same recurrence in PyTorch, batch-first, for a whole batch at once.
"""

import numpy as np
import torch


def softmax(x):
    """Softmax over axis 0: every column of the result is a probability vector.

    x: array (n, m) of logits (any float dtype).
    Returns an array of the same shape and dtype whose columns sum to 1.
    Must not overflow for logits as large as ±1000: subtract each column's maximum first
    (softmax does not change when a constant is added to a column).
    """
    # BEGIN SOLUTION
    shifted = x - np.max(x, axis=0, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=0, keepdims=True)
    # END SOLUTION


def rnn_cell_forward(xt, a_prev, parameters):
    """One time step of the RNN.

    xt:     (n_x, m)  input at time t
    a_prev: (n_a, m)  hidden state at time t-1
    parameters: dict with Wax, Waa, Wya, ba, by (see the module docstring)

    Computes
        a_next  = tanh(Waa · a_prev + Wax · xt + ba)     shape (n_a, m)
        yt_pred = softmax(Wya · a_next + by)             shape (n_y, m)
    and returns ``(a_next, yt_pred, cache)`` with ``cache = (a_next, a_prev, xt, parameters)``,
    the values a backward pass will need.
    """
    # BEGIN SOLUTION
    Wax = parameters["Wax"]
    Waa = parameters["Waa"]
    Wya = parameters["Wya"]
    ba = parameters["ba"]
    by = parameters["by"]
    pre_activation = np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba
    a_next = np.tanh(pre_activation)
    logits = np.dot(Wya, a_next) + by
    yt_pred = softmax(logits)
    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache
    # END SOLUTION


def rnn_forward(x, a0, parameters):
    """The RNN over a whole sequence.

    x:  (n_x, m, T_x)  inputs for every time step
    a0: (n_a, m)       initial hidden state
    parameters: as for ``rnn_cell_forward``

    Returns ``(a, y_pred, caches)``:
        a      (n_a, m, T_x)  the hidden state after each step (a[:, :, t] is a⟨t+1⟩ of step t)
        y_pred (n_y, m, T_x)  the prediction at each step
        caches ``(list of the cell caches, x)``
    Results have the dtype of ``x``.
    """
    # BEGIN SOLUTION
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a = np.zeros((n_a, m, T_x), dtype=x.dtype)
    y_pred = np.zeros((n_y, m, T_x), dtype=x.dtype)
    caches = []
    a_prev = a0
    for t in range(T_x):
        a_next, yt_pred, cache = rnn_cell_forward(x[:, :, t], a_prev, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
        a_prev = a_next
    return a, y_pred, (caches, x)
    # END SOLUTION


def rnn_forward_batch(X, W_h, W_x, b, h0):
    """The same recurrence in PyTorch, batch-first, on whatever device the inputs are on.

    X:   (B, T, d)  a batch of input sequences
    W_h: (H, H)     hidden → hidden
    W_x: (H, d)     input  → hidden
    b:   (H,)       bias
    h0:  (B, H)     initial hidden states

    h_t = tanh(h_{t-1} W_hᵀ + x_t W_xᵀ + b) for t = 1..T.
    Returns every state, a tensor (B, T, H) with the dtype and device of ``X``.
    """
    # BEGIN SOLUTION
    inputs = X @ W_x.T + b
    h = h0
    states = []
    for t in range(X.shape[1]):
        h = torch.tanh(h @ W_h.T + inputs[:, t])
        states.append(h)
    return torch.stack(states, dim=1)
    # END SOLUTION

# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab3` to check.
"""Lab 3 — the long short-term memory (LSTM).

Part 1 (NumPy) uses the classic column layout: features down, examples across, time last. An input
sequence ``x`` has shape ``(n_x, m, T_x)``; the hidden state ``a`` and the cell state ``c`` have
shape ``(n_a, m)``. The gates read ``concat = [a_prev; xt]``, the previous hidden state stacked
*on top of* the input, shape ``(n_a + n_x, m)``.

``parameters`` is a dict with
    Wf, Wi, Wc, Wo (n_a, n_a + n_x)   forget gate, update (input) gate, candidate, output gate
    bf, bi, bc, bo (n_a, 1)           their biases
    Wy (n_y, n_a), by (n_y, 1)        hidden state → prediction

Part 2 (PyTorch) uses PyTorch's own layout: batch-first rows ``(B, features)``, and the four gates
stacked in one matrix in the order **i, f, g, o** (input, forget, candidate ``g``, output), each a
block of ``H`` rows: ``W_ih (4H, d)``, ``W_hh (4H, H)``. PyTorch keeps two bias vectors,
``b_ih`` and ``b_hh`` (4H,); only their sum matters. These functions run on whatever device their
inputs are on.

Results keep the dtype of the inputs (float32 in, float32 out).
"""

import numpy as np
import torch


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function σ(x) = 1 / (1 + e^(−x)), element-wise."""
    return 1 / (1 + np.exp(-x))


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over axis 0 (each column sums to 1), stable for large logits."""
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


def lstm_cell_forward(
    xt: np.ndarray, a_prev: np.ndarray, c_prev: np.ndarray, parameters: dict
) -> tuple:
    """One time step of the LSTM.

    xt:     (n_x, m)  input at time t
    a_prev: (n_a, m)  hidden state at time t−1
    c_prev: (n_a, m)  cell state (memory) at time t−1
    parameters: dict with Wf, bf, Wi, bi, Wc, bc, Wo, bo, Wy, by (see the module docstring)

    With concat = [a_prev; xt] (hidden rows first), shape (n_a + n_x, m):
        ft      = σ(Wf · concat + bf)          forget gate
        it      = σ(Wi · concat + bi)          update (input) gate
        cct     = tanh(Wc · concat + bc)       candidate value
        c_next  = ft ⊙ c_prev + it ⊙ cct       new cell state
        ot      = σ(Wo · concat + bo)          output gate
        a_next  = ot ⊙ tanh(c_next)            new hidden state
        yt_pred = softmax(Wy · a_next + by)    prediction, (n_y, m)
    (⊙ is the element-wise product, ``*`` in NumPy.)

    Returns ``(a_next, c_next, yt_pred, cache)`` with
    ``cache = (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)``.
    """
    raise NotImplementedError("lstm_cell_forward: not implemented yet — replace this line with your code")


def lstm_forward(x: np.ndarray, a0: np.ndarray, parameters: dict) -> tuple:
    """The LSTM over a whole sequence.

    x:  (n_x, m, T_x)  inputs for every time step
    a0: (n_a, m)       initial hidden state; the initial cell state c0 is all zeros
    parameters: as for ``lstm_cell_forward``

    Returns ``(a, y, c, caches)``:
        a (n_a, m, T_x)  the hidden state after each step
        y (n_y, m, T_x)  the prediction at each step
        c (n_a, m, T_x)  the cell state after each step
        caches ``(list of the T_x cell caches, x)``
    """
    raise NotImplementedError("lstm_forward: not implemented yet — replace this line with your code")


def lstm_cell_backward(da_next: np.ndarray, dc_next: np.ndarray, cache: tuple) -> dict:
    """Backward pass through one LSTM step.

    da_next: (n_a, m)  gradient of the loss with respect to a_next
    dc_next: (n_a, m)  gradient of the loss with respect to c_next from *later* steps
    cache:   what ``lstm_cell_forward`` returned

    The loss is L = Σ da_next ⊙ a_next + Σ dc_next ⊙ c_next. Because a_next = ot ⊙ tanh(c_next),
    c_next also influences L through a_next, so the full gradient reaching c_next is
        dc = dc_next + da_next ⊙ ot ⊙ (1 − tanh(c_next)²).
    From there, through the pre-activations of the gates (σ' = σ(1 − σ), tanh' = 1 − tanh²):
        dot  = da_next ⊙ tanh(c_next) ⊙ ot ⊙ (1 − ot)
        dcct = dc ⊙ it ⊙ (1 − cct²)
        dit  = dc ⊙ cct ⊙ it ⊙ (1 − it)
        dft  = dc ⊙ c_prev ⊙ ft ⊙ (1 − ft)
        dWf = dft · concatᵀ, dbf = dft summed over the examples (n_a, 1); likewise for i, c, o
        dconcat = Wfᵀ·dft + Wiᵀ·dit + Wcᵀ·dcct + Woᵀ·dot; its first n_a rows are da_prev,
                  the remaining n_x rows dxt
        dc_prev = dc ⊙ ft

    Returns a dict with keys "dxt" (n_x, m), "da_prev" (n_a, m), "dc_prev" (n_a, m),
    "dWf", "dWi", "dWc", "dWo" (n_a, n_a + n_x), "dbf", "dbi", "dbc", "dbo" (n_a, 1).
    """
    raise NotImplementedError("lstm_cell_backward: not implemented yet — replace this line with your code")


def lstm_backward(da: np.ndarray, caches: tuple) -> dict:
    """Backpropagation through time for the LSTM.

    da:     (n_a, m, T_x)  upstream gradient of every hidden state a[:, :, t] (from outside the
            recurrence); L = Σ_t Σ da[:, :, t] ⊙ a[:, :, t]
    caches: what ``lstm_forward`` returned

    Walk backwards in time carrying two gradients from step t+1 to step t: the hidden-state
    gradient (added to da[:, :, t]) and the cell-state gradient (passed as dc_next). At the last
    step both start at zero. The weights are shared by all steps: add up their gradients.

    Returns a dict with "dx" (n_x, m, T_x), "da0" (n_a, m), "dWf", "dWi", "dWc", "dWo"
    (n_a, n_a + n_x) and "dbf", "dbi", "dbc", "dbo" (n_a, 1).
    """
    raise NotImplementedError("lstm_backward: not implemented yet — replace this line with your code")


def lstm_cell(
    x: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    W_ih: torch.Tensor,
    W_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step in PyTorch's convention (what ``nn.LSTMCell`` computes).

    x (B, d), h (B, H), c (B, H); W_ih (4H, d), W_hh (4H, H), b_ih (4H,), b_hh (4H,).
    The pre-activations of all four gates at once:
        gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh          (B, 4H)
    split into four blocks of H columns in the order i, f, g, o:
        i = σ(gates_i), f = σ(gates_f), g = tanh(gates_g), o = σ(gates_o)
        c_new = f ⊙ c + i ⊙ g
        h_new = o ⊙ tanh(c_new)
    Returns ``(h_new, c_new)``, both (B, H), on the device and with the dtype of the inputs.
    Use torch operations only, so that autograd can differentiate through it.
    """
    raise NotImplementedError("lstm_cell: not implemented yet — replace this line with your code")


def lstm_layer(
    x: torch.Tensor,
    h0: torch.Tensor,
    c0: torch.Tensor,
    W_ih: torch.Tensor,
    W_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """A one-layer LSTM over a batch of sequences, batch-first (like ``nn.LSTM(batch_first=True)``).

    x (B, T, d); h0, c0 (B, H) the initial states; weights as for ``lstm_cell``.
    Step t reads x[:, t] and the states left by step t−1.
    Returns ``(out, (h_n, c_n))``: out (B, T, H) holds the hidden state after every step,
    h_n and c_n (B, H) the states after the last step.
    """
    raise NotImplementedError("lstm_layer: not implemented yet — replace this line with your code")


def to_torch_lstm(parameters: dict) -> dict:
    """Convert the classic NumPy LSTM parameters into an ``nn.LSTM`` state dict.

    parameters: the dict of ``lstm_cell_forward`` (n_a hidden units, n_x inputs)

    Returns a dict of float64 torch tensors
        "weight_ih_l0" (4 n_a, n_x), "weight_hh_l0" (4 n_a, n_a),
        "bias_ih_l0" (4 n_a,), "bias_hh_l0" (4 n_a,)
    such that ``nn.LSTM(n_x, n_a).load_state_dict(result)`` computes the same hidden states as
    ``lstm_forward``. Mind three differences: PyTorch stacks the gates in the order i, f, g, o
    (the classic names are i, f, c, o); the classic weights act on [a_prev; xt], hidden columns
    first, while PyTorch keeps the input and hidden parts in separate matrices; and PyTorch has
    two bias vectors whose sum is the classic bias.
    """
    raise NotImplementedError("to_torch_lstm: not implemented yet — replace this line with your code")


def set_forget_bias(lstm: torch.nn.Module, value: float) -> None:
    """Set the forget-gate bias of an ``nn.LSTM`` or ``nn.LSTMCell`` in place.

    lstm:  an ``nn.LSTM`` (any number of layers, one or both directions) or an ``nn.LSTMCell``
    value: the forget-gate bias it should apply, e.g. 1.0 so that it remembers by default

    PyTorch adds two bias vectors, bias_ih and bias_hh (4H,), in gate order i, f, g, o, so the
    forget gate uses (bias_ih + bias_hh)[H:2H]. Afterwards this sum equals ``value`` in every
    layer; the entries of the other gates are left untouched. Change the parameters in place under
    ``torch.no_grad()``. Returns None.
    """
    raise NotImplementedError("set_forget_bias: not implemented yet — replace this line with your code")

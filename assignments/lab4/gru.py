# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab4` to check.
"""Lab 4 — the GRU and masking.

Two forms of the gated recurrent unit:

* the classic form (Cho et al. 2014, as taught in many courses), step by step in NumPy with the
  column layout: a batch of ``m`` examples is stored as columns, ``xt`` is ``(n_x, m)`` and the
  hidden state ``a_prev`` is ``(n_a, m)``;
* the PyTorch form (``nn.GRUCell`` / ``nn.GRU``), batch-first: ``x`` is ``(B, d)`` or ``(B, T, d)``
  and the hidden state ``h`` is ``(B, H)``, with the gates stacked in the order **r, z, n**.

The two forms differ in where the reset gate acts and in the direction of the update gate:
``z = 1 − u``. See README.md.
"""

import numpy as np
import torch


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + exp(−x)), element-wise; keeps the dtype of ``x``."""
    return 1 / (1 + np.exp(-x))


def gru_cell_forward(
    xt: np.ndarray, a_prev: np.ndarray, parameters: dict[str, np.ndarray]
) -> tuple[np.ndarray, tuple]:
    """One step of the classic GRU (NumPy, column layout).

    Arguments:
        xt: input at this time step, shape (n_x, m).
        a_prev: hidden state of the previous step, shape (n_a, m).
        parameters: dict with
            Wu (n_a, n_a + n_x), bu (n_a, 1): update gate u,
            Wr (n_a, n_a + n_x), br (n_a, 1): reset gate r,
            Wc (n_a, n_a + n_x), bc (n_a, 1): candidate state cc.
          Every weight acts on a stacked column vector whose top n_a rows come from the hidden
          state and whose bottom n_x rows come from the input.

    Equations (⊙ is the element-wise product, [p; q] stacks p on top of q):
        u      = σ(Wu·[a_prev; xt] + bu)
        r      = σ(Wr·[a_prev; xt] + br)
        cc     = tanh(Wc·[r ⊙ a_prev; xt] + bc)      (the reset gate acts BEFORE the product)
        a_next = u ⊙ cc + (1 − u) ⊙ a_prev           (u = 1: take the candidate; u = 0: keep a_prev)

    Returns:
        a_next: new hidden state, shape (n_a, m), same dtype as the inputs.
        cache: whatever gru_cell_backward needs (your choice), e.g. a tuple of the values above.
    """
    raise NotImplementedError("gru_cell_forward: not implemented yet — replace this line with your code")


def gru_cell_backward(da_next: np.ndarray, cache: tuple) -> dict[str, np.ndarray]:
    """Backward pass of one classic GRU step (NumPy, column layout).

    Computes the gradients of the scalar L = Σ da_next ⊙ a_next, where a_next is the output of
    the gru_cell_forward call that produced ``cache``.

    Arguments:
        da_next: upstream gradient of a_next, shape (n_a, m).
        cache: the cache returned by your gru_cell_forward.

    Returns:
        dict with the gradients, each shaped like the quantity it differentiates:
            dxt (n_x, m), da_prev (n_a, m),
            dWu (n_a, n_a + n_x), dbu (n_a, 1),
            dWr (n_a, n_a + n_x), dbr (n_a, 1),
            dWc (n_a, n_a + n_x), dbc (n_a, 1).
        Bias gradients are summed over the m examples of the batch.
    """
    raise NotImplementedError("gru_cell_backward: not implemented yet — replace this line with your code")


def gru_cell(
    x: torch.Tensor,
    h: torch.Tensor,
    W_ih: torch.Tensor,
    W_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """One step of the PyTorch GRU (torch, batch-first), like ``nn.GRUCell``.

    Arguments:
        x: input, shape (B, d).
        h: previous hidden state, shape (B, H).
        W_ih: input weights, shape (3H, d), the row blocks [W_ir; W_iz; W_in] (order r, z, n).
        W_hh: hidden weights, shape (3H, H), the row blocks [W_hr; W_hz; W_hn].
        b_ih, b_hh: the two bias vectors, shape (3H,) each, in the same order r, z, n.

    Equations (⊙ is the element-wise product):
        r     = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr)          reset gate
        z     = σ(x W_izᵀ + b_iz + h W_hzᵀ + b_hz)          update gate
        n     = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn))  candidate (reset AFTER the product)
        h_new = (1 − z) ⊙ n + z ⊙ h                          (z = 1: keep h; z = 0: take n)

    Returns:
        h_new, shape (B, H), same dtype and device as the inputs. Use torch operations only, so
        that autograd can differentiate through it and it runs on the GPU too.
    """
    raise NotImplementedError("gru_cell: not implemented yet — replace this line with your code")


def gru_layer(
    x: torch.Tensor,
    h0: torch.Tensor,
    W_ih: torch.Tensor,
    W_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
    lengths: torch.Tensor | np.ndarray | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A one-layer GRU over a whole (padded) batch of sequences (torch, batch-first).

    Arguments:
        x: inputs, shape (B, T, d); sequence b is x[b, :lengths[b]], the rest is padding.
        h0: initial hidden state, shape (B, H).
        W_ih, W_hh, b_ih, b_hh: the weights of gru_cell (gate order r, z, n).
        lengths: None (every sequence has all T steps) or an integer tensor/array of shape (B,)
            with 1 <= lengths[b] <= T. It may live on the CPU while x is on the GPU.

    At a padded step (t >= lengths[b]) the state of sequence b does not change and its output is
    zero, so h_n[b] is the state after the last real step, exactly as ``nn.GRU`` computes on a
    ``pack_padded_sequence`` input.

    Returns:
        out: shape (B, T, H), out[:, t] is the state after step t (zeros at padded steps).
        h_n: shape (B, H), the final state of each sequence.
    """
    raise NotImplementedError("gru_layer: not implemented yet — replace this line with your code")


def classic_to_torch_gru(parameters: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """Convert classic GRU parameters into an ``nn.GRUCell`` state dict, where that is possible.

    Arguments:
        parameters: the classic dict (Wu, bu, Wr, br, Wc, bc) of gru_cell_forward, with weights
            (n_a, n_a + n_x) acting on [a_prev; xt] (hidden columns first) and biases (n_a, 1).

    Returns:
        dict of torch tensors (same float dtype as the NumPy arrays) with the keys
            "weight_ih" (3·n_a, n_x), "weight_hh" (3·n_a, n_a), "bias_ih" (3·n_a,), "bias_hh" (3·n_a,)
        in PyTorch's gate order r, z, n, such that ``nn.GRUCell(n_x, n_a)`` loaded with it computes
        the same new state as gru_cell_forward (transposed: rows are examples there).

    Two facts decide the conversion:
        * PyTorch's update gate keeps the old state: z = 1 − u, and 1 − σ(s) = σ(−s), so z uses the
          negated update weights and bias.
        * The classic reset gate multiplies the state BEFORE the product with Wc's hidden block,
          PyTorch's AFTER it. The two agree only when the reset gate has no effect, i.e. when Wc's
          hidden block Wc[:, :n_a] is all zero.

    Raises:
        ValueError (with a message saying why) when Wc's hidden block is not all zero.
    """
    raise NotImplementedError("classic_to_torch_gru: not implemented yet — replace this line with your code")

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
    # BEGIN SOLUTION
    Wu, bu = parameters["Wu"], parameters["bu"]
    Wr, br = parameters["Wr"], parameters["br"]
    Wc, bc = parameters["Wc"], parameters["bc"]

    concat = np.concatenate([a_prev, xt], axis=0)  # (n_a + n_x, m)
    u = sigmoid(np.dot(Wu, concat) + bu)  # update gate, (n_a, m)
    r = sigmoid(np.dot(Wr, concat) + br)  # reset gate, (n_a, m)
    concat_reset = np.concatenate([r * a_prev, xt], axis=0)  # reset applied to the state
    cc = np.tanh(np.dot(Wc, concat_reset) + bc)  # candidate, (n_a, m)
    a_next = u * cc + (1 - u) * a_prev

    cache = (a_next, a_prev, xt, u, r, cc, parameters)
    return a_next, cache
    # END SOLUTION


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
    # BEGIN SOLUTION
    a_next, a_prev, xt, u, r, cc, parameters = cache
    Wu, Wr, Wc = parameters["Wu"], parameters["Wr"], parameters["Wc"]
    n_a = a_prev.shape[0]

    # a_next = u ⊙ cc + (1 − u) ⊙ a_prev
    dcc = da_next * u
    du = da_next * (cc - a_prev)

    # back through the non-linearities to the pre-activations
    dzc = dcc * (1 - cc**2)  # tanh'(z) = 1 − tanh(z)²
    dzu = du * u * (1 - u)  # σ'(z) = σ(z)(1 − σ(z))

    # candidate: zc = Wc·[r ⊙ a_prev; xt] + bc
    concat_reset = np.concatenate([r * a_prev, xt], axis=0)
    dWc = np.dot(dzc, concat_reset.T)
    dbc = np.sum(dzc, axis=1, keepdims=True)
    dconcat_reset = np.dot(Wc.T, dzc)  # (n_a + n_x, m)
    dreset_state = dconcat_reset[:n_a]  # gradient of r ⊙ a_prev

    # reset gate: r = σ(Wr·[a_prev; xt] + br)
    dr = dreset_state * a_prev
    dzr = dr * r * (1 - r)

    concat = np.concatenate([a_prev, xt], axis=0)
    dWu = np.dot(dzu, concat.T)
    dbu = np.sum(dzu, axis=1, keepdims=True)
    dWr = np.dot(dzr, concat.T)
    dbr = np.sum(dzr, axis=1, keepdims=True)
    dconcat = np.dot(Wu.T, dzu) + np.dot(Wr.T, dzr)  # (n_a + n_x, m)

    dxt = dconcat[n_a:] + dconcat_reset[n_a:]
    da_prev = (
        dconcat[:n_a]  # through the pre-activations of u and r
        + dreset_state * r  # through r ⊙ a_prev in the candidate
        + da_next * (1 - u)  # the direct path (1 − u) ⊙ a_prev
    )

    return {
        "dxt": dxt,
        "da_prev": da_prev,
        "dWu": dWu,
        "dbu": dbu,
        "dWr": dWr,
        "dbr": dbr,
        "dWc": dWc,
        "dbc": dbc,
    }
    # END SOLUTION


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
    # BEGIN SOLUTION
    xr, xz, xn = (x @ W_ih.T + b_ih).chunk(3, dim=1)  # input parts, (B, H) each
    hr, hz, hn = (h @ W_hh.T + b_hh).chunk(3, dim=1)  # hidden parts, (B, H) each
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    h_new = (1 - z) * n + z * h
    return h_new
    # END SOLUTION


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
    # BEGIN SOLUTION
    T = x.shape[1]
    if lengths is not None:
        lengths = torch.as_tensor(lengths, device=x.device)  # (B,) on the device of x
    h = h0
    outputs = []
    for t in range(T):
        h_new = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        if lengths is None:
            h = h_new
            outputs.append(h_new)
        else:
            real = (t < lengths).unsqueeze(1)  # (B, 1): True where step t is a real step
            h = torch.where(real, h_new, h)
            outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))
    out = torch.stack(outputs, dim=1)  # (B, T, H)
    return out, h
    # END SOLUTION


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
    # BEGIN SOLUTION
    Wu, bu = parameters["Wu"], parameters["bu"]
    Wr, br = parameters["Wr"], parameters["br"]
    Wc, bc = parameters["Wc"], parameters["bc"]
    n_a = Wu.shape[0]

    # split every weight into its hidden block (acts on a_prev) and its input block (acts on xt)
    Wu_a, Wu_x = Wu[:, :n_a], Wu[:, n_a:]
    Wr_a, Wr_x = Wr[:, :n_a], Wr[:, n_a:]
    Wc_a, Wc_x = Wc[:, :n_a], Wc[:, n_a:]

    if np.any(Wc_a != 0):
        raise ValueError(
            "classic_to_torch_gru: no exact conversion exists. The classic GRU applies the reset "
            "gate before multiplying by Wc's hidden block (Wc·[r⊙a_prev; xt]), PyTorch applies it "
            "after (r⊙(W_hn·h + b_hn)); the two agree only when Wc[:, :n_a] is all zero."
        )

    # gate order r, z, n; z = 1 − u uses the negated update weights and bias
    weight_ih = np.concatenate([Wr_x, -Wu_x, Wc_x], axis=0)
    weight_hh = np.concatenate([Wr_a, -Wu_a, Wc_a], axis=0)
    bias_ih = np.concatenate([br, -bu, bc], axis=0).reshape(-1)
    bias_hh = np.zeros(3 * n_a, dtype=bu.dtype)  # one bias vector is enough: only the sum matters

    return {
        "weight_ih": torch.from_numpy(weight_ih),
        "weight_hh": torch.from_numpy(weight_hh),
        "bias_ih": torch.from_numpy(bias_ih),
        "bias_hh": torch.from_numpy(bias_hh),
    }
    # END SOLUTION

"""The NumPy references of labs 1–4 (the classic column layout) against PyTorch.

The hidden suites compare a submission with the reference, so a reference that is wrong in the
same way as a submission would pass it. These tests pin each NumPy reference to an independent
computation: ``torch.nn.RNN``/``torch.nn.LSTM`` for the forward passes (the weights rearranged
from the classic layout; the classic GRU, which ``torch.nn.GRU`` does not compute, against its
equations) and autograd for the backward passes. Everything is float64; the two
sides compute the same sums in different orders, so they agree to ~1e-15 relative, and
``atol=1e-10, rtol=1e-8`` leaves a wide margin while any real mistake is off by far more.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnngrade.harness.source.module_builder import build_module
from rnngrade.labs import get_lab

TOL = {"atol": 1e-10, "rtol": 1e-8}
GATES = ("f", "i", "c", "o")  # the classic order; torch's is i, f, g (= c), o


def reference(lab: str):
    path = get_lab(lab).solution_path()
    return build_module(path.read_text(encoding="utf-8"), path.name).module


def sequence_case(seed: int, n_x: int = 3, n_a: int = 5, m: int = 4, T: int = 6) -> tuple:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_x, m, T)), rng.standard_normal((n_a, m)), rng


def close(ours: np.ndarray, theirs: torch.Tensor, what: str) -> None:
    np.testing.assert_allclose(ours, theirs.detach().numpy(), err_msg=what, **TOL)


def as_torch_sequence(x: np.ndarray) -> torch.Tensor:
    """(n_x, m, T) in the classic layout → (T, m, n_x), torch's sequence-first layout."""
    return torch.tensor(x.transpose(2, 1, 0).copy())


def from_torch_sequence(out: torch.Tensor) -> torch.Tensor:
    return out.permute(2, 1, 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_lab1_rnn_forward_is_torch_s_rnn_with_a_softmax_head(seed):
    x, a0, rng = sequence_case(seed)
    n_x, n_a, n_y = x.shape[0], a0.shape[0], 2
    p = {"Wax": rng.standard_normal((n_a, n_x)), "Waa": rng.standard_normal((n_a, n_a)),
         "Wya": rng.standard_normal((n_y, n_a)), "ba": rng.standard_normal((n_a, 1)),
         "by": rng.standard_normal((n_y, 1))}
    a, y_pred, _ = reference("lab1").rnn_forward(x, a0, p)

    rnn = torch.nn.RNN(n_x, n_a, nonlinearity="tanh").double()
    rnn.load_state_dict({"weight_ih_l0": torch.tensor(p["Wax"]),
                         "weight_hh_l0": torch.tensor(p["Waa"]),
                         "bias_ih_l0": torch.tensor(p["ba"][:, 0]),
                         "bias_hh_l0": torch.zeros(n_a, dtype=torch.float64)})
    with torch.no_grad():
        out, _ = rnn(as_torch_sequence(x), torch.tensor(a0.T[None].copy()))
    states = from_torch_sequence(out)  # (n_a, m, T)
    logits = torch.einsum("ya,amt->ymt", torch.tensor(p["Wya"]), states) + \
        torch.tensor(p["by"])[:, :, None]
    close(a, states, "hidden states")
    close(y_pred, torch.softmax(logits, dim=0), "predictions (softmax over the rows)")


@pytest.mark.parametrize("seed", [0, 1])
def test_lab2_rnn_backward_is_autograd_of_the_recurrence(seed):
    x, a0, rng = sequence_case(seed)
    n_x, n_a = x.shape[0], a0.shape[0]
    p = {"Wax": rng.standard_normal((n_a, n_x)), "Waa": rng.standard_normal((n_a, n_a)) / 2,
         "Wya": rng.standard_normal((2, n_a)), "ba": rng.standard_normal((n_a, 1)),
         "by": rng.standard_normal((2, 1))}
    da = rng.standard_normal((n_a, x.shape[1], x.shape[2]))
    lab2 = reference("lab2")
    grads = lab2.rnn_backward(da, lab2.rnn_forward(x, a0, p)[2])

    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in
              (("x", x), ("a0", a0), ("Wax", p["Wax"]), ("Waa", p["Waa"]), ("ba", p["ba"]))}
    a_t, loss = leaves["a0"], 0.0
    for t in range(x.shape[2]):
        a_t = torch.tanh(leaves["Wax"] @ leaves["x"][:, :, t] + leaves["Waa"] @ a_t
                         + leaves["ba"])
        loss = loss + (torch.tensor(da[:, :, t]) * a_t).sum()  # L = Σ_t Σ da ⊙ a
    loss.backward()
    for key, leaf in (("dx", "x"), ("da0", "a0"), ("dWax", "Wax"), ("dWaa", "Waa"),
                      ("dba", "ba")):
        close(grads[key], leaves[leaf].grad, key)


def lstm_parameters(rng: np.random.Generator, n_x: int, n_a: int, n_y: int = 2) -> dict:
    p = {}
    for gate in GATES:
        p["W" + gate] = rng.standard_normal((n_a, n_a + n_x)) / np.sqrt(n_a + n_x)
        p["b" + gate] = 0.3 * rng.standard_normal((n_a, 1))
    p["Wy"], p["by"] = rng.standard_normal((n_y, n_a)), rng.standard_normal((n_y, 1))
    return p


@pytest.mark.parametrize("seed", [0, 1])
def test_lab3_lstm_forward_is_torch_s_lstm(seed):
    x, a0, rng = sequence_case(seed)
    n_x, n_a = x.shape[0], a0.shape[0]
    p = lstm_parameters(rng, n_x, n_a)
    a, y, c, _ = reference("lab3").lstm_forward(x, a0, p)

    # classic W* act on [a_prev; x]; torch stacks the gates i, f, g, o and splits W_hh | W_ih
    stacked = np.concatenate([p["W" + g] for g in ("i", "f", "c", "o")])
    bias = np.concatenate([p["b" + g] for g in ("i", "f", "c", "o")])[:, 0]
    lstm = torch.nn.LSTM(n_x, n_a).double()
    lstm.load_state_dict({"weight_ih_l0": torch.tensor(stacked[:, n_a:]),
                          "weight_hh_l0": torch.tensor(stacked[:, :n_a]),
                          "bias_ih_l0": torch.tensor(bias),
                          "bias_hh_l0": torch.zeros(4 * n_a, dtype=torch.float64)})
    h0 = torch.tensor(a0.T[None].copy())
    with torch.no_grad():
        out, (_, c_n) = lstm(as_torch_sequence(x), (h0, torch.zeros_like(h0)))
    states = from_torch_sequence(out)
    close(a, states, "hidden states")
    close(c[:, :, -1], c_n[0].T, "last cell state")
    logits = torch.einsum("ya,amt->ymt", torch.tensor(p["Wy"]), states) + \
        torch.tensor(p["by"])[:, :, None]
    close(y, torch.softmax(logits, dim=0), "predictions (softmax over the rows)")


@pytest.mark.parametrize("seed", [0, 1])
def test_lab3_lstm_backward_is_autograd_of_the_recurrence(seed):
    x, a0, rng = sequence_case(seed, T=5)
    n_x, n_a = x.shape[0], a0.shape[0]
    p = lstm_parameters(rng, n_x, n_a)
    da = rng.standard_normal((n_a, x.shape[1], x.shape[2]))
    lab3 = reference("lab3")
    grads = lab3.lstm_backward(da, lab3.lstm_forward(x, a0, p)[3])

    leaves = {"x": torch.tensor(x, requires_grad=True), "a0": torch.tensor(a0, requires_grad=True)}
    leaves.update({k: torch.tensor(p[k], requires_grad=True) for k in p if k[0] in "Wb"
                   and k[1:] in GATES})
    a_t, c_t, loss = leaves["a0"], torch.zeros(a0.shape, dtype=torch.float64), 0.0
    for t in range(x.shape[2]):
        concat = torch.cat([a_t, leaves["x"][:, :, t]])

        def gate(g: str, concat: torch.Tensor = concat) -> torch.Tensor:
            return leaves["W" + g] @ concat + leaves["b" + g]

        c_t = torch.sigmoid(gate("f")) * c_t + torch.sigmoid(gate("i")) * torch.tanh(gate("c"))
        a_t = torch.sigmoid(gate("o")) * torch.tanh(c_t)
        loss = loss + (torch.tensor(da[:, :, t]) * a_t).sum()
    loss.backward()
    close(grads["dx"], leaves["x"].grad, "dx")
    close(grads["da0"], leaves["a0"].grad, "da0")
    for g in GATES:
        close(grads["dW" + g], leaves["W" + g].grad, "dW" + g)
        close(grads["db" + g], leaves["b" + g].grad, "db" + g)


@pytest.mark.parametrize("seed", [0, 1])
def test_lab4_classic_gru_cell_is_its_equations_and_its_backward_is_autograd(seed):
    """The classic GRU puts the reset gate *before* the product (Wc·[r ⊙ a_prev; xt]), which
    ``torch.nn.GRU`` does not, so the forward pass is pinned to its equations written in torch,
    and the backward pass to autograd of L = Σ da_next ⊙ a_next through them."""
    rng = np.random.default_rng(seed)
    n_x, n_a, m = 3, 4, 5
    xt, a_prev, da_next = (rng.standard_normal(s) for s in ((n_x, m), (n_a, m), (n_a, m)))
    p = {}
    for gate in ("u", "r", "c"):
        p["W" + gate] = rng.standard_normal((n_a, n_a + n_x)) / np.sqrt(n_a + n_x)
        p["b" + gate] = 0.3 * rng.standard_normal((n_a, 1))
    lab4 = reference("lab4")
    a_next, cache = lab4.gru_cell_forward(xt, a_prev, p)
    grads = lab4.gru_cell_backward(da_next, cache)

    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in
              (("xt", xt), ("a_prev", a_prev), *p.items())}
    h, x = leaves["a_prev"], leaves["xt"]
    u = torch.sigmoid(leaves["Wu"] @ torch.cat([h, x]) + leaves["bu"])
    r = torch.sigmoid(leaves["Wr"] @ torch.cat([h, x]) + leaves["br"])
    candidate = torch.tanh(leaves["Wc"] @ torch.cat([r * h, x]) + leaves["bc"])
    expected = u * candidate + (1 - u) * h
    (torch.tensor(da_next) * expected).sum().backward()
    close(a_next, expected, "a_next")
    for key, leaf in (("dxt", "xt"), ("da_prev", "a_prev"), *((f"d{k}", k) for k in p)):
        close(grads[key], leaves[leaf].grad, key)

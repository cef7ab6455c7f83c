"""Inputs of lab10's public test vectors: ``CASES[name] = (function_or_chain, args)``.

Small float64 cases, so that the vectors stay small and the comparison tight. Functions that take
a ``torch.Generator`` or a layer kind are reached through chains (a generator and a string are
not stored in the vectors): the chain builds the generator from a seed.
"""

import numpy as np
import torch
import torch.nn as nn


def _layer_weights(kind: str, seed: int, d: int, hidden: int, scale: float) -> dict:
    torch.manual_seed(seed)
    layer = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[kind](d, hidden, batch_first=True)
    return {k: scale * v.detach().double() for k, v in layer.state_dict().items()}


def _cell_weights(seed: int, d: int, hidden: int, forget_bias: float) -> dict:
    torch.manual_seed(seed)
    cell = nn.LSTMCell(d, hidden)
    with torch.no_grad():
        cell.bias_ih[hidden:2 * hidden] = forget_bias
        cell.bias_hh[hidden:2 * hidden] = 0.0
    return {k: v.detach().double() for k, v in cell.state_dict().items()}


def gradient_ratio_rnn(m, weights, inputs, readout):
    return m.gradient_ratio("rnn", weights, inputs, readout)


def gradient_ratio_lstm(m, weights, inputs, readout):
    return m.gradient_ratio("lstm", weights, inputs, readout)


def gradient_ratio_gru(m, weights, inputs, readout):
    return m.gradient_ratio("gru", weights, inputs, readout)


def profile_of_seed(m, H, rho, sigma_x, T, seed):
    return m.orthogonal_rnn_profile(H, rho, sigma_x, T, torch.Generator().manual_seed(seed))


def recall_of_seed(m, batch, lag, seed):
    return m.recall_batch(batch, lag, torch.Generator().manual_seed(seed))


def train_recall_lstm_losses(m, lag, forget_bias, updates, seed):
    return m.train_recall("lstm", lag, forget_bias, updates, seed)[2]


def train_recall_lin_losses(m, lag, updates, seed):
    return m.train_recall("lin", lag, 0.0, updates, seed)[2]


_gen = torch.Generator().manual_seed(1010)


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen, dtype=torch.float64)


CASES: dict[str, tuple] = {
    "ratio_rnn": (gradient_ratio_rnn,
                  (_layer_weights("rnn", 1, 3, 5, 2.0), _randn(2, 8, 3), _randn(5))),
    "ratio_lstm": (gradient_ratio_lstm,
                   (_layer_weights("lstm", 2, 3, 4, 1.5), _randn(3, 6, 3), _randn(4))),
    "ratio_gru": (gradient_ratio_gru,
                  (_layer_weights("gru", 3, 2, 4, 2.0), _randn(2, 5, 2), _randn(4))),
    "cell_state": ("cell_state_gradient", (_cell_weights(4, 3, 6, 2.0), _randn(2, 10, 3))),
    "profile": (profile_of_seed, (6, 1.0, 1.0, 12, 0)),
    "half_life": ("half_life", (np.array([0.5, 0.9, 0.99]),)),
    "forget_bias_half_life": ("forget_bias_half_life", (np.array([1.0, 3.0, 5.0]),)),
    "time_constant": ("time_constant", (np.array([0.0, 1.0, 5.0]),)),
    "chrono_forget_bias": ("chrono_forget_bias", (np.array([11.0, 101.0]),)),
    "memory_after": ("memory_after", (60, np.array([1.5, 2.5, 4.5]))),
    "gru_half_life": ("gru_half_life", (np.array([0.1, 0.5]),)),
    "lru_half_life": ("lru_half_life", (np.array([0.9, 0.999]),)),
    "mode_period": ("mode_period", (np.array([np.pi / 10, 0.5]),)),
    "recall": (recall_of_seed, (2, 5, 0)),
    "train_lstm": (train_recall_lstm_losses, (8, 5.0, 4, 0)),
    "train_lin": (train_recall_lin_losses, (8, 4, 0)),
}

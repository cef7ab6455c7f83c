"""Lab 12's classic Dinosaur Island ``utils``, which the course platform provided: a submission's
``from utils import *`` gets this module (lab 12 only; ``rnngrade.lab_helpers`` ships it to the
worker as it ships ``helpers.py``). The classic names, arguments and conventions (column vectors;
``X[0] = None`` is the zero input; the loss summed over time steps; ``update_parameters`` works in
place), written for this grader and in agreement with solutions/lab12/dinos.py. ``rnn_forward``
infers the vocabulary size from ``Wax`` when it is not given (the classic default, 27, is that
size). Nothing here is a function lab 12 grades (``clip``, ``sample``, ``optimize``)."""

import numpy as np


def softmax(x):
    e_x = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e_x / e_x.sum(axis=0, keepdims=True)


def smooth(loss, cur_loss):
    return loss * 0.999 + cur_loss * 0.001


def get_sample(sample_ix, ix_to_char):
    text = "".join(ix_to_char[int(i)] for i in sample_ix)
    return text[:1].upper() + text[1:]


def print_sample(sample_ix, ix_to_char):
    print(get_sample(sample_ix, ix_to_char), end="")


def get_initial_loss(vocab_size, seq_length):
    return float(np.log(vocab_size) * seq_length)


def initialize_parameters(n_a, n_x, n_y):
    draw = np.random.RandomState(1).randn  # the classic seed, without touching np.random's state
    return {"Wax": draw(n_a, n_x) * 0.01, "Waa": draw(n_a, n_a) * 0.01,
            "Wya": draw(n_y, n_a) * 0.01, "b": np.zeros((n_a, 1)), "by": np.zeros((n_y, 1))}


def rnn_step_forward(parameters, a_prev, x):
    a_next = np.tanh(parameters["Wax"] @ x + parameters["Waa"] @ a_prev + parameters["b"])
    return a_next, softmax(parameters["Wya"] @ a_next + parameters["by"])


def rnn_step_backward(dy, gradients, parameters, x, a, a_prev):
    gradients["dWya"] += dy @ a.T
    gradients["dby"] += dy
    dz = (1 - a * a) * (parameters["Wya"].T @ dy + gradients["da_next"])
    gradients["db"] += dz
    gradients["dWax"] += dz @ x.T
    gradients["dWaa"] += dz @ a_prev.T
    gradients["da_next"] = parameters["Waa"].T @ dz
    return gradients


def update_parameters(parameters, gradients, lr):
    for name in ("Wax", "Waa", "Wya", "b", "by"):
        parameters[name] += -lr * gradients["d" + name]
    return parameters


def rnn_forward(X, Y, a0, parameters, vocab_size=None):
    size = parameters["Wax"].shape[1] if vocab_size is None else vocab_size
    x, a, y_hat = {}, {-1: np.copy(a0)}, {}
    loss = 0.0
    for t in range(len(X)):
        x[t] = np.zeros((size, 1), dtype=np.asarray(a0).dtype)
        if X[t] is not None:
            x[t][X[t]] = 1
        a[t], y_hat[t] = rnn_step_forward(parameters, a[t - 1], x[t])
        loss -= np.log(y_hat[t][Y[t], 0])
    return loss, (y_hat, a, x)


def rnn_backward(X, Y, parameters, cache):
    y_hat, a, x = cache
    gradients = {"d" + k: np.zeros_like(parameters[k]) for k in ("Wax", "Waa", "Wya", "b", "by")}
    gradients["da_next"] = np.zeros_like(a[0])
    for t in reversed(range(len(X))):
        dy = np.copy(y_hat[t])
        dy[Y[t]] -= 1
        gradients = rnn_step_backward(dy, gradients, parameters, x[t], a[t], a[t - 1])
    return gradients, a

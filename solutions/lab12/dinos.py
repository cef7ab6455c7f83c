"""Lab 12 — Dinosaur Island: a character-level language model, classic layout.

A name is a list of character indices. The vocabulary is ``V`` characters; the classic one is the
newline ``"\\n"`` (index 0, the end of a name) and ``a``–``z`` (indices 1–26), so ``V = 27``.
Vectors are columns: a one-hot input ``x`` has shape ``(V, 1)``, a hidden state ``a`` shape
``(n_a, 1)``.

``parameters`` is a dict with
    Wax (n_a, V)    input  → hidden
    Waa (n_a, n_a)  hidden → hidden
    Wya (V, n_a)    hidden → output
    b   (n_a, 1)    hidden bias
    by  (V, 1)      output bias

One step of the network:
    a⟨t⟩ = tanh(Wax · x⟨t⟩ + Waa · a⟨t−1⟩ + b)
    ŷ⟨t⟩ = softmax(Wya · a⟨t⟩ + by)

The helpers above the three graded functions are those of the classic assignment's ``utils``
module and ship filled in. ``rnn_forward`` reads ``X[t] = None`` as the zero input (the first
step of every name) and returns the loss **summed** over the time steps.
"""

import numpy as np

CLASSIC_KEYS = ("dWaa", "dWax", "dWya", "db", "dby")


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over axis 0 (each column sums to 1), stable for large logits."""
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


def smooth(loss: float, cur_loss: float) -> float:
    """An exponential moving average of the loss, for printing during training."""
    return loss * 0.999 + cur_loss * 0.001


def get_initial_loss(vocab_size: int, seq_length: int) -> float:
    """The summed loss of a model that guesses uniformly, over ``seq_length`` characters."""
    return float(np.log(vocab_size) * seq_length)


def get_sample(sample_ix: list, ix_to_char: dict) -> str:
    """The characters of ``sample_ix`` as a string with a capital first letter."""
    text = "".join(ix_to_char[int(i)] for i in sample_ix)
    return text[:1].upper() + text[1:]


def print_sample(sample_ix: list, ix_to_char: dict) -> None:
    """Print ``get_sample(sample_ix, ix_to_char)`` without a trailing newline."""
    print(get_sample(sample_ix, ix_to_char), end="")


def initialize_parameters(n_a: int, n_x: int, n_y: int, seed: int = 1) -> dict:
    """Small random weights (standard deviation 0.01) and zero biases."""
    rng = np.random.default_rng(seed)
    return {"Wax": 0.01 * rng.standard_normal((n_a, n_x)),
            "Waa": 0.01 * rng.standard_normal((n_a, n_a)),
            "Wya": 0.01 * rng.standard_normal((n_y, n_a)),
            "b": np.zeros((n_a, 1)),
            "by": np.zeros((n_y, 1))}


def rnn_step_forward(parameters: dict, a_prev: np.ndarray, x: np.ndarray) -> tuple:
    """One step: ``(a_next (n_a, 1), p_t (V, 1))``, the new state and the next-character
    probabilities."""
    a_next = np.tanh(parameters["Wax"] @ x + parameters["Waa"] @ a_prev + parameters["b"])
    return a_next, softmax(parameters["Wya"] @ a_next + parameters["by"])


def rnn_step_backward(dy: np.ndarray, gradients: dict, parameters: dict, x: np.ndarray,
                      a: np.ndarray, a_prev: np.ndarray) -> dict:
    """Add one step's contribution to ``gradients`` (in place) and return it. ``dy = ŷ − y``
    (V, 1); ``gradients["da_next"]`` carries the gradient of the next step's state back."""
    gradients["dWya"] += dy @ a.T
    gradients["dby"] += dy
    da = parameters["Wya"].T @ dy + gradients["da_next"]
    dz = (1 - a * a) * da
    gradients["db"] += dz
    gradients["dWax"] += dz @ x.T
    gradients["dWaa"] += dz @ a_prev.T
    gradients["da_next"] = parameters["Waa"].T @ dz
    return gradients


def rnn_forward(X: list, Y: list, a0: np.ndarray, parameters: dict,
                vocab_size: int | None = None) -> tuple:
    """The forward pass over one name: ``(loss, cache)``.

    X: input indices, ``X[0] = None`` (the zero input). Y: target indices, as long as X.
    loss = Σ_t −log ŷ⟨t⟩[Y[t]], summed over the time steps. ``cache = (y_hat, a, x)``, three dicts
    keyed by the time step (``a[-1]`` is ``a0``). ``vocab_size`` defaults to ``Wax.shape[1]``.
    """
    V = parameters["Wax"].shape[1] if vocab_size is None else vocab_size
    x, a, y_hat = {}, {-1: np.copy(a0)}, {}
    loss = 0.0
    for t in range(len(X)):
        x[t] = np.zeros((V, 1), dtype=a0.dtype)
        if X[t] is not None:
            x[t][X[t]] = 1
        a[t], y_hat[t] = rnn_step_forward(parameters, a[t - 1], x[t])
        loss -= np.log(y_hat[t][Y[t], 0])
    return loss, (y_hat, a, x)


def rnn_backward(X: list, Y: list, parameters: dict, cache: tuple) -> tuple:
    """Backpropagation through time over one name: ``(gradients, a)``.

    ``gradients`` holds ``dWax, dWaa, dWya, db, dby`` (each shaped like its parameter) and
    ``da_next``; ``a`` is the dict of hidden states from the cache.
    """
    y_hat, a, x = cache
    gradients = {"d" + k: np.zeros_like(parameters[k]) for k in ("Wax", "Waa", "Wya", "b", "by")}
    gradients["da_next"] = np.zeros_like(a[0])
    for t in reversed(range(len(X))):
        dy = np.copy(y_hat[t])
        dy[Y[t]] -= 1
        gradients = rnn_step_backward(dy, gradients, parameters, x[t], a[t], a[t - 1])
    return gradients, a


def update_parameters(parameters: dict, gradients: dict, lr: float) -> dict:
    """One gradient-descent step on ``parameters``, **in place**; returns the same dict."""
    for k in ("Wax", "Waa", "Wya", "b", "by"):
        parameters[k] += -lr * gradients["d" + k]
    return parameters


def clip(gradients: dict, maxValue: float) -> dict:
    """Clip every gradient element-wise to the interval [−maxValue, maxValue].

    gradients: dict of arrays, classically "dWaa", "dWax", "dWya", "db", "dby"
    maxValue:  a positive number

    Each entry below −maxValue becomes −maxValue, each entry above maxValue becomes maxValue, the
    others stay as they are. Returns a dict holding the clipped arrays under the same keys (the
    grader reads the five classic keys). Clipping the arrays in place, as the classic assignment
    does with ``np.clip(..., out=...)``, is allowed.
    """
    # BEGIN SOLUTION
    return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}
    # END SOLUTION


def sample(parameters: dict, char_to_ix: dict, seed: int) -> list:
    """Draw one name from the model: a list of character indices.

    parameters: as in the module docstring. char_to_ix: character → index; ``char_to_ix["\\n"]``
    ends a name. seed: for ``np.random.seed(counter + seed)`` before each draw, as the classic
    notebook does for its printed example; the grader does not check it.

    Start from x⟨1⟩ = 0 and a⟨0⟩ = 0. At each step compute a⟨t⟩ and ŷ⟨t⟩ as in the module
    docstring, draw the next index with ``np.random.choice(vocab_size, p=ŷ.ravel())`` (``p`` must
    be 1-D), append it, and feed its one-hot vector as the next input, with a⟨t⟩ as the next state.
    Stop after drawing the newline, or after 50 draws; in the second case append the newline's
    index, so every name ends with a newline.
    """
    # BEGIN SOLUTION
    Wax, Waa, Wya, b, by = (parameters[k] for k in ("Wax", "Waa", "Wya", "b", "by"))
    vocab_size = by.shape[0]
    newline = char_to_ix["\n"]
    x = np.zeros((vocab_size, 1))
    a_prev = np.zeros((Waa.shape[1], 1))
    indices: list = []
    idx = -1
    counter = 0
    while idx != newline and counter != 50:
        a = np.tanh(Wax @ x + Waa @ a_prev + b)
        y = softmax(Wya @ a + by)
        np.random.seed(counter + seed)
        idx = int(np.random.choice(vocab_size, p=y.ravel()))
        indices.append(idx)
        x = np.zeros((vocab_size, 1))
        x[idx] = 1
        a_prev = a
        counter += 1
    if counter == 50:
        indices.append(newline)
    return indices
    # END SOLUTION


def optimize(X: list, Y: list, a_prev: np.ndarray, parameters: dict,
             learning_rate: float = 0.01) -> tuple:
    """One step of stochastic gradient descent on one name.

    X, Y: as for ``rnn_forward`` (``X[0] = None``); a_prev (n_a, 1): the state to start from.
    Run ``rnn_forward`` and ``rnn_backward``, clip the gradients with your ``clip`` at 5, and
    update ``parameters`` **in place** with ``update_parameters``.

    Returns ``(loss, gradients, a_last)``: the summed loss of ``rnn_forward``, the clipped
    gradients (the grader reads the five classic keys) and the last hidden state
    ``a[len(X) − 1]`` (n_a, 1).
    """
    # BEGIN SOLUTION
    loss, cache = rnn_forward(X, Y, a_prev, parameters)
    gradients, a = rnn_backward(X, Y, parameters, cache)
    gradients = clip(gradients, 5)
    update_parameters(parameters, gradients, learning_rate)
    return loss, gradients, a[len(X) - 1]
    # END SOLUTION


def model(names: list, ix_to_char: dict, char_to_ix: dict, num_iterations: int = 35000,
          n_a: int = 50, dino_names: int = 7, vocab_size: int = 27, seed: int = 0) -> dict:
    """Train on ``names`` (strings of lower-case letters), one name per step, and print the
    smoothed loss and ``dino_names`` sampled names every 2000 steps. Returns the trained
    parameters. Example, from the folder of ``dinos.txt``:
    ``model(open("dinos.txt").read().split(), ix_to_char, char_to_ix, 20001)``."""
    parameters = initialize_parameters(n_a, vocab_size, vocab_size)
    loss = get_initial_loss(vocab_size, dino_names)
    examples = [name.strip() for name in names if name.strip()]
    np.random.default_rng(seed).shuffle(examples)
    a_prev = np.zeros((n_a, 1))
    for j in range(num_iterations):
        X = [None] + [char_to_ix[c] for c in examples[j % len(examples)]]
        Y = X[1:] + [char_to_ix["\n"]]
        curr_loss, _, a_prev = optimize(X, Y, a_prev, parameters)
        loss = smooth(loss, curr_loss)
        if j % 2000 == 0:
            print(f"Iteration: {j}, Loss: {loss:.6f}\n")
            for k in range(dino_names):
                print(get_sample(sample(parameters, char_to_ix, k), ix_to_char), end="")
            print()
    return parameters

# Your work for this lab goes in this file. Replace every `raise NotImplementedError(...)`
# with your code; keep the function names and signatures. Run `pytest assignments/lab9` to check.
"""Lab 9 — a character model trained with truncated backpropagation through time.

The data is a synthetic maintenance log (``make_log``, shipped filled in): every line follows four
rules, three of them local and one (the closing tag repeats the opening tag) spanning the line.
The model is lab 2's character RNN: states are columns ``(H, B)``, one per stream of text, and the
parameters are the dict

    W_xh (H, V)   input (a column lookup) → hidden
    W_hh (H, H)   hidden → hidden
    b_h  (H,)     hidden bias
    W_hy (V, H)   hidden → output
    b_y  (V,)     output bias

``char_rnn_loss_and_grads`` is lab 2's and ships filled in; bring your own if you like, with the
same contract. Losses are in nats per character (natural logarithms). Every array that is not an
index array is float64. No function modifies its arguments; randomness comes only from the
``rng`` argument.
"""

import re

import numpy as np

TAGS = ["P1", "P2", "P3", "P4", "F1", "F2", "C1", "C2"]
# quantity -> (unit, lowest value, highest value, value from which the status is "high")
QUANTITIES = {
    "temp": ("C", 40.0, 90.0, 75.0),
    "vib": ("mm/s", 0.5, 9.9, 7.1),
    "pres": ("bar", 1.0, 6.0, 5.0),
}
# the optional note before the status: four notes, and the empty note three times in seven
NOTES = ["after restart", "during wash", "operator check", "night shift", "", "", ""]

# One well-formed line: tag, quantity, value with one decimal, unit, optional note, status and
# closing tag. Groups: (tag, quantity, value, unit, status, closing tag).
LINE = re.compile(
    r"^([PFC][1-4]) (temp|vib|pres) (\d+\.\d) (C|mm/s|bar) "
    r"(?:(?:after restart|during wash|operator check|night shift) )?"
    r"(ok|high) /([PFC][1-4])$"
)


def make_log(n_lines: int, seed: int) -> str:
    """The maintenance log: ``n_lines`` lines, each ended by a newline.

    Per line, from ``np.random.default_rng(seed)``, in this order: the tag (one of 8), the
    quantity (one of 3), the value (uniform on the quantity's range, rounded to one decimal) and
    the note (one of 7). The unit, the status and the closing tag follow from those draws, e.g.
    ``F2 pres 4.0 bar night shift ok /F2``.
    """
    rng = np.random.default_rng(seed)
    names = list(QUANTITIES)
    lines = []
    for _ in range(n_lines):
        tag = TAGS[rng.integers(len(TAGS))]
        quantity = names[rng.integers(len(names))]
        unit, low, high, threshold = QUANTITIES[quantity]
        value = round(float(rng.uniform(low, high)), 1)
        note = NOTES[rng.integers(len(NOTES))]
        status = "high" if value >= threshold else "ok"
        fields = [tag, quantity, f"{value:.1f}", unit, note, status, "/" + tag]
        lines.append(" ".join(f for f in fields if f))
    return "\n".join(lines) + "\n"


def char_rnn_loss_and_grads(p: dict, X: np.ndarray, Y: np.ndarray, h0: np.ndarray) -> tuple:
    """Loss and gradients of the character RNN on one batch (lab 2's contract).

    X, Y: int arrays (B, T) of character ids, Y is X shifted by one character; h0 (H, B).
        z_t = W_xh[:, X[:, t]] + W_hh · h_{t−1} + b_h[:, None];  h_t = tanh(z_t)
        logits_t = W_hy · h_t + b_y[:, None]                      (V, B)
    loss = the mean over all B·T positions of −ln softmax(logits_t)[Y[b, t], b]. No gradient
    flows into h0. Returns ``(loss, grads, h_last)``: a float, a dict like ``p``, and h_{T−1}.
    """
    W_xh, W_hh, b_h, W_hy, b_y = p["W_xh"], p["W_hh"], p["b_h"], p["W_hy"], p["b_y"]
    B, T = X.shape
    streams = np.arange(B)
    scale = 1.0 / (B * T)
    hs = [h0]
    probs = []
    loss = 0.0
    for t in range(T):
        h = np.tanh(W_xh[:, X[:, t]] + W_hh @ hs[-1] + b_h[:, None])
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
        dz = (1 - hs[t + 1] ** 2) * (W_hy.T @ dlogits + dh_next)
        np.add.at(grads["W_xh"], (slice(None), X[:, t]), dz)
        grads["W_hh"] += dz @ hs[t].T
        grads["b_h"] += np.sum(dz, axis=1)
        dh_next = W_hh.T @ dz
    return loss, grads, hs[-1]


def build_vocab(text: str) -> tuple:
    """The vocabulary of ``text``: ``(chars, stoi)``.

    chars: the distinct characters of ``text`` sorted by code point (a list of str);
    stoi:  a dict mapping each character to its index in ``chars``.
    """
    raise NotImplementedError("build_vocab: not implemented yet — replace this line with your code")


def encode(text: str, stoi: dict) -> np.ndarray:
    """The character ids of ``text``: an int64 array of shape (len(text),)."""
    raise NotImplementedError("encode: not implemented yet — replace this line with your code")


def split_train_val(data: np.ndarray, val_fraction: float = 0.1) -> tuple:
    """``(train, val)``: validation is the **last** ``int(len(data) * val_fraction)`` items,
    training everything before them (a split in time, never a random one)."""
    raise NotImplementedError("split_train_val: not implemented yet — replace this line with your code")


def entropy_floor(n_tags: int, n_quantities: int, value_counts, note_probs,
                  chars_per_line: float) -> tuple:
    """The generator's entropy, the loss no model can beat on its text.

    Per line: ln n_tags + ln n_quantities + mean(ln value_counts) − Σ p ln p over ``note_probs``
    (the probabilities of the distinct notes, the empty one included). Returns
    ``(nats_per_line, nats_per_char, nats_per_char_if_tag_guessed)``: the second is the first
    divided by ``chars_per_line``; the third adds ln n_tags per line (a model that guesses the
    closing tag) before dividing. Python floats.
    """
    raise NotImplementedError("entropy_floor: not implemented yet — replace this line with your code")


def ngram_validation_loss(train_text: str, val_text: str, order: int, alpha: float = 0.1,
                          vocab_size: int | None = None) -> float:
    """Mean cross-entropy (nats per character) of an interpolated add-α n-gram on ``val_text``.

    Counted on ``train_text`` only. V is ``vocab_size``, or when None the number of distinct
    characters in the two texts together; N is ``len(train_text)``.
        order 1:  p_1(c) = (n(c) + α) / (N + α V)
        order k:  p_k(c | ctx) = (n(ctx c) + α p_{k−1}(c | ctx')) / (n(ctx ·) + α)
    where ctx holds the k − 1 characters before c, ctx' is ctx without its oldest character and
    n(ctx ·) counts ctx followed by any character in ``train_text``. Validation contexts never
    reach into the training text: at validation position i only ``val_text[:i]`` is context, and
    a position with fewer than k − 1 characters before it stops at the highest order it can use.
    """
    raise NotImplementedError("ngram_validation_loss: not implemented yet — replace this line with your code")


def make_streams(data: np.ndarray, batch: int) -> tuple:
    """Lay ``data`` out as ``batch`` parallel streams: ``(streams_x, streams_y)``, both (B, L)
    with ``L = (len(data) − 1) // B``.

    Stream i is a contiguous piece of the text: ``streams_x = data[:B·L].reshape(B, L)``, and
    ``streams_y`` is the same layout of ``data[1:B·L + 1]`` (the next character of each)."""
    raise NotImplementedError("make_streams: not implemented yet — replace this line with your code")


def init_params(hidden: int, vocab: int, rng: np.random.Generator) -> dict:
    """Fresh parameters, drawn from ``rng`` in this order: W_xh ~ N(0, 0.01²), W_hh ~ N(0, 1/H),
    W_hy ~ N(0, 0.01²); the biases are zero. Keys and shapes as in the module docstring."""
    raise NotImplementedError("init_params: not implemented yet — replace this line with your code")


def adam_step(params: dict, grads: dict, state: dict, step: int, lr: float = 3e-3,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> tuple:
    """One Adam update: ``(new_params, new_state)``; ``params`` and ``state`` are not modified.

    ``state = {"m": {...}, "v": {...}}`` holds the moments, keyed like ``params`` (zeros before
    the first step); ``step`` counts from 1. Per parameter:
        m ← β1 m + (1 − β1) g;   v ← β2 v + (1 − β2) g²
        p ← p − lr · (m / (1 − β1^step)) / (√(v / (1 − β2^step)) + eps)
    """
    raise NotImplementedError("adam_step: not implemented yet — replace this line with your code")


def train_tbptt(params: dict, streams_x: np.ndarray, streams_y: np.ndarray, chunk_len: int,
                n_updates: int, lr: float = 3e-3, clip: float = 5.0) -> tuple:
    """Train with truncated BPTT and Adam: ``(params, history)``; the ``params`` passed in are
    not modified.

    - Update u = 0, 1, … reads chunk c = u mod n_chunks, columns [c·T, (c+1)·T) of the streams,
      with T = ``chunk_len`` and n_chunks = L // T.
    - The state left by a chunk is the start state of the next one, as a value: no gradient
      flows into it. It starts at zeros (H, B) and is reset to zeros whenever c wraps to 0.
    - The gradient's global norm (over every parameter) is clipped: all gradients are scaled by
      min(1, clip / (norm + 1e-12)) before the Adam step (``adam_step``, step counter from 1).

    ``history``: ``"loss"`` (float64, n_updates) the chunk's loss before the update,
    ``"grad_norm"`` (float64, n_updates) the norm before clipping, ``"chunk"`` (int64,
    n_updates) the chunk index c of each update.
    """
    raise NotImplementedError("train_tbptt: not implemented yet — replace this line with your code")


def evaluate_loss(params: dict, data: np.ndarray) -> float:
    """The mean loss (nats per character) of predicting ``data[1:]`` from ``data[:-1]``, read as
    one stream from h = 0. A Python float."""
    raise NotImplementedError("evaluate_loss: not implemented yet — replace this line with your code")


def sample_text(params: dict, chars: list, n_chars: int, temperature: float,
                rng: np.random.Generator, start: str = "\n") -> str:
    """Generate ``n_chars`` characters (``start`` not included).

    The state starts at h = 0 (H, 1) and the first input is ``start``. Each step computes the
    logits, divides them by ``temperature``, takes the softmax p, makes exactly one draw
    u = rng.random() and emits the first index i whose cumulative probability p_0 + … + p_i
    exceeds u (the last index if rounding leaves none); that character is the next input."""
    raise NotImplementedError("sample_text: not implemented yet — replace this line with your code")


def audit(generated: str) -> dict:
    """Check generated text against the log's rules, line by line.

    The first and the last line (possibly cut) are dropped. A line is well-formed when ``LINE``
    matches it. Returns the dict
        "lines":               the number of lines kept (an int)
        "well-formed":         well-formed lines / lines kept
        "unit agrees":         among well-formed lines, the share whose unit is the quantity's
        "status agrees":       … whose status is "high" exactly when value ≥ the threshold
        "closing tag matches": … whose closing tag equals the opening tag
    Shares are Python floats, 0.0 when their denominator is 0.
    """
    raise NotImplementedError("audit: not implemented yet — replace this line with your code")


def hidden_gradient_norms(params: dict, X: np.ndarray, Y: np.ndarray, h0: np.ndarray
                          ) -> np.ndarray:
    """‖∂L/∂h_t‖ for t = 0 … T−1 within one chunk: a float64 array (T,).

    L is the chunk's mean loss (as in ``char_rnn_loss_and_grads``), h_t the (H, B) state after
    step t, and the norm is the Frobenius norm over (H, B). ∂L/∂h_t includes both the loss at
    step t and everything later steps send back through W_hh."""
    raise NotImplementedError("hidden_gradient_norms: not implemented yet — replace this line with your code")


def lm_windows(encoded: np.ndarray, seq_len: int) -> tuple:
    """Every overlapping training window: ``(X, Y)``, both int64 (n, seq_len) with
    n = len(encoded) − seq_len; ``X[i] = encoded[i:i+seq_len]`` and ``Y[i]`` is the window one
    character later, ``encoded[i+1:i+1+seq_len]``."""
    raise NotImplementedError("lm_windows: not implemented yet — replace this line with your code")


def token_weighted_perplexity(batch_losses, batch_token_counts) -> float:
    """The perplexity over all tokens: exp(Σ ℓ_i n_i / Σ n_i), where ℓ_i is batch i's mean loss
    per token and n_i its number of tokens. A Python float."""
    raise NotImplementedError("token_weighted_perplexity: not implemented yet — replace this line with your code")

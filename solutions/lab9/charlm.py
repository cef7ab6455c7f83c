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
    # BEGIN SOLUTION
    chars = sorted(set(text))
    return chars, {c: i for i, c in enumerate(chars)}
    # END SOLUTION


def encode(text: str, stoi: dict) -> np.ndarray:
    """The character ids of ``text``: an int64 array of shape (len(text),)."""
    # BEGIN SOLUTION
    return np.array([stoi[c] for c in text], dtype=np.int64)
    # END SOLUTION


def split_train_val(data: np.ndarray, val_fraction: float = 0.1) -> tuple:
    """``(train, val)``: validation is the **last** ``int(len(data) * val_fraction)`` items,
    training everything before them (a split in time, never a random one)."""
    # BEGIN SOLUTION
    n_val = int(len(data) * val_fraction)
    return data[:len(data) - n_val].copy(), data[len(data) - n_val:].copy()
    # END SOLUTION


def entropy_floor(n_tags: int, n_quantities: int, value_counts, note_probs,
                  chars_per_line: float) -> tuple:
    """The generator's entropy, the loss no model can beat on its text.

    Per line: ln n_tags + ln n_quantities + mean(ln value_counts) − Σ p ln p over ``note_probs``
    (the probabilities of the distinct notes, the empty one included). Returns
    ``(nats_per_line, nats_per_char, nats_per_char_if_tag_guessed)``: the second is the first
    divided by ``chars_per_line``; the third adds ln n_tags per line (a model that guesses the
    closing tag) before dividing. Python floats.
    """
    # BEGIN SOLUTION
    p = np.asarray(note_probs, dtype=np.float64)
    per_line = (np.log(n_tags) + np.log(n_quantities)
                + np.mean(np.log(np.asarray(value_counts, dtype=np.float64)))
                - np.sum(p * np.log(p)))
    return (float(per_line), float(per_line / chars_per_line),
            float((per_line + np.log(n_tags)) / chars_per_line))
    # END SOLUTION


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
    # BEGIN SOLUTION
    V = vocab_size if vocab_size is not None else len(set(train_text) | set(val_text))
    counts: list[dict] = [{} for _ in range(order)]  # counts[k]: (k-char context + char)
    followed: list[dict] = [{} for _ in range(order)]  # followed[k]: k-char context + anything
    for k in range(order):
        table, context_table = counts[k], followed[k]
        for i in range(k, len(train_text)):
            gram = train_text[i - k:i + 1]
            table[gram] = table.get(gram, 0) + 1
            context_table[gram[:-1]] = context_table.get(gram[:-1], 0) + 1
    total = 0.0
    for i, c in enumerate(val_text):
        p = (counts[0].get(c, 0) + alpha) / (len(train_text) + alpha * V)
        for k in range(1, min(order, i + 1)):
            ctx = val_text[i - k:i]
            p = (counts[k].get(ctx + c, 0) + alpha * p) / (followed[k].get(ctx, 0) + alpha)
        total -= np.log(p)
    return float(total / len(val_text))
    # END SOLUTION


def make_streams(data: np.ndarray, batch: int) -> tuple:
    """Lay ``data`` out as ``batch`` parallel streams: ``(streams_x, streams_y)``, both (B, L)
    with ``L = (len(data) − 1) // B``.

    Stream i is a contiguous piece of the text: ``streams_x = data[:B·L].reshape(B, L)``, and
    ``streams_y`` is the same layout of ``data[1:B·L + 1]`` (the next character of each)."""
    # BEGIN SOLUTION
    L = (len(data) - 1) // batch
    return (data[:batch * L].reshape(batch, L).copy(),
            data[1:batch * L + 1].reshape(batch, L).copy())
    # END SOLUTION


def init_params(hidden: int, vocab: int, rng: np.random.Generator) -> dict:
    """Fresh parameters, drawn from ``rng`` in this order: W_xh ~ N(0, 0.01²), W_hh ~ N(0, 1/H),
    W_hy ~ N(0, 0.01²); the biases are zero. Keys and shapes as in the module docstring."""
    # BEGIN SOLUTION
    W_xh = rng.normal(0.0, 0.01, (hidden, vocab))
    W_hh = rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, hidden))
    W_hy = rng.normal(0.0, 0.01, (vocab, hidden))
    return {"W_xh": W_xh, "W_hh": W_hh, "b_h": np.zeros(hidden), "W_hy": W_hy,
            "b_y": np.zeros(vocab)}
    # END SOLUTION


def adam_step(params: dict, grads: dict, state: dict, step: int, lr: float = 3e-3,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> tuple:
    """One Adam update: ``(new_params, new_state)``; ``params`` and ``state`` are not modified.

    ``state = {"m": {...}, "v": {...}}`` holds the moments, keyed like ``params`` (zeros before
    the first step); ``step`` counts from 1. Per parameter:
        m ← β1 m + (1 − β1) g;   v ← β2 v + (1 − β2) g²
        p ← p − lr · (m / (1 − β1^step)) / (√(v / (1 − β2^step)) + eps)
    """
    # BEGIN SOLUTION
    new_params, m_new, v_new = {}, {}, {}
    for k, p in params.items():
        g = grads[k]
        m = beta1 * state["m"][k] + (1 - beta1) * g
        v = beta2 * state["v"][k] + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** step)
        v_hat = v / (1 - beta2 ** step)
        new_params[k] = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        m_new[k], v_new[k] = m, v
    return new_params, {"m": m_new, "v": v_new}
    # END SOLUTION


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
    # BEGIN SOLUTION
    H, B = params["W_hh"].shape[0], streams_x.shape[0]
    n_chunks = streams_x.shape[1] // chunk_len
    state = {"m": {k: np.zeros_like(v) for k, v in params.items()},
             "v": {k: np.zeros_like(v) for k, v in params.items()}}
    history = {"loss": np.zeros(n_updates), "grad_norm": np.zeros(n_updates),
               "chunk": np.zeros(n_updates, dtype=np.int64)}
    h = np.zeros((H, B), dtype=params["W_hh"].dtype)
    for u in range(n_updates):
        c = u % n_chunks
        if c == 0:
            h = np.zeros_like(h)
        cols = slice(c * chunk_len, (c + 1) * chunk_len)
        loss, grads, h = char_rnn_loss_and_grads(params, streams_x[:, cols], streams_y[:, cols],
                                                 h)
        norm = float(np.sqrt(sum(np.sum(g * g) for g in grads.values())))
        scale = min(1.0, clip / (norm + 1e-12))
        grads = {k: g * scale for k, g in grads.items()}
        params, state = adam_step(params, grads, state, u + 1, lr)
        history["loss"][u], history["grad_norm"][u], history["chunk"][u] = loss, norm, c
    return params, history
    # END SOLUTION


def evaluate_loss(params: dict, data: np.ndarray) -> float:
    """The mean loss (nats per character) of predicting ``data[1:]`` from ``data[:-1]``, read as
    one stream from h = 0. A Python float."""
    # BEGIN SOLUTION
    h = np.zeros((params["W_hh"].shape[0], 1), dtype=params["W_hh"].dtype)
    total = 0.0
    for x, y in zip(data[:-1], data[1:], strict=True):
        h = np.tanh(params["W_xh"][:, [x]] + params["W_hh"] @ h + params["b_h"][:, None])
        logits = (params["W_hy"] @ h)[:, 0] + params["b_y"]
        top = np.max(logits)
        total -= logits[y] - top - np.log(np.sum(np.exp(logits - top)))
    return float(total / (len(data) - 1))
    # END SOLUTION


def sample_text(params: dict, chars: list, n_chars: int, temperature: float,
                rng: np.random.Generator, start: str = "\n") -> str:
    """Generate ``n_chars`` characters (``start`` not included).

    The state starts at h = 0 (H, 1) and the first input is ``start``. Each step computes the
    logits, divides them by ``temperature``, takes the softmax p, makes exactly one draw
    u = rng.random() and emits the first index i whose cumulative probability p_0 + … + p_i
    exceeds u (the last index if rounding leaves none); that character is the next input."""
    # BEGIN SOLUTION
    h = np.zeros((params["W_hh"].shape[0], 1), dtype=params["W_hh"].dtype)
    index = chars.index(start)
    out = []
    for _ in range(n_chars):
        h = np.tanh(params["W_xh"][:, [index]] + params["W_hh"] @ h + params["b_h"][:, None])
        logits = ((params["W_hy"] @ h)[:, 0] + params["b_y"]) / temperature
        p = np.exp(logits - np.max(logits))
        p /= np.sum(p)
        u = rng.random()
        index = min(int(np.searchsorted(np.cumsum(p), u, side="right")), len(chars) - 1)
        out.append(chars[index])
    return "".join(out)
    # END SOLUTION


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
    # BEGIN SOLUTION
    lines = generated.split("\n")[1:-1]
    parsed = [m.groups() for m in map(LINE.match, lines) if m]

    def share(count: int, n: int) -> float:
        return count / n if n else 0.0

    n = len(parsed)
    return {
        "lines": len(lines),
        "well-formed": share(n, len(lines)),
        "unit agrees": share(sum(QUANTITIES[q][0] == u for _, q, _, u, _, _ in parsed), n),
        "status agrees": share(sum((float(v) >= QUANTITIES[q][3]) == (s == "high")
                                   for _, q, v, _, s, _ in parsed), n),
        "closing tag matches": share(sum(a == b for a, _, _, _, _, b in parsed), n),
    }
    # END SOLUTION


def hidden_gradient_norms(params: dict, X: np.ndarray, Y: np.ndarray, h0: np.ndarray
                          ) -> np.ndarray:
    """‖∂L/∂h_t‖ for t = 0 … T−1 within one chunk: a float64 array (T,).

    L is the chunk's mean loss (as in ``char_rnn_loss_and_grads``), h_t the (H, B) state after
    step t, and the norm is the Frobenius norm over (H, B). ∂L/∂h_t includes both the loss at
    step t and everything later steps send back through W_hh."""
    # BEGIN SOLUTION
    B, T = X.shape
    streams = np.arange(B)
    hs, probs = [h0], []
    for t in range(T):
        h = np.tanh(params["W_xh"][:, X[:, t]] + params["W_hh"] @ hs[-1]
                    + params["b_h"][:, None])
        logits = params["W_hy"] @ h + params["b_y"][:, None]
        e = np.exp(logits - np.max(logits, axis=0, keepdims=True))
        hs.append(h)
        probs.append(e / np.sum(e, axis=0, keepdims=True))
    norms = np.zeros(T)
    dh_next = np.zeros_like(h0)
    for t in reversed(range(T)):
        dlogits = probs[t].copy()
        dlogits[Y[:, t], streams] -= 1
        dlogits /= B * T
        dh = params["W_hy"].T @ dlogits + dh_next
        norms[t] = np.linalg.norm(dh)
        dh_next = params["W_hh"].T @ ((1 - hs[t + 1] ** 2) * dh)
    return norms
    # END SOLUTION


def lm_windows(encoded: np.ndarray, seq_len: int) -> tuple:
    """Every overlapping training window: ``(X, Y)``, both int64 (n, seq_len) with
    n = len(encoded) − seq_len; ``X[i] = encoded[i:i+seq_len]`` and ``Y[i]`` is the window one
    character later, ``encoded[i+1:i+1+seq_len]``."""
    # BEGIN SOLUTION
    n = len(encoded) - seq_len
    index = np.arange(n)[:, None] + np.arange(seq_len)[None, :]
    data = np.asarray(encoded, dtype=np.int64)
    return data[index], data[index + 1]
    # END SOLUTION


def token_weighted_perplexity(batch_losses, batch_token_counts) -> float:
    """The perplexity over all tokens: exp(Σ ℓ_i n_i / Σ n_i), where ℓ_i is batch i's mean loss
    per token and n_i its number of tokens. A Python float."""
    # BEGIN SOLUTION
    losses = np.asarray(batch_losses, dtype=np.float64)
    counts = np.asarray(batch_token_counts, dtype=np.float64)
    return float(np.exp(np.sum(losses * counts) / np.sum(counts)))
    # END SOLUTION

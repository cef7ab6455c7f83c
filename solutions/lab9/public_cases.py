"""Inputs of the lab 9 public test vectors (outputs are computed by the reference).

``init_params`` and ``sample_text`` take a generator, which the vectors cannot store: their cases
are *chains* (docs/AUTHORING.md) that build ``np.random.default_rng(seed)`` from a stored seed.
``train_tbptt`` runs on a small model so the public tests stay fast; the full-size run is the
public outcome test (``pytest --outcome``).
"""

import numpy as np

LOG_HEAD = ("C1 vib 3.0 mm/s operator check ok /C1\nP1 temp 80.7 C after restart high /P1\n"
            "F2 pres 4.0 bar ok /F2\nF2 vib 9.3 mm/s night shift high /F2\n")


def _small_params(seed: int, hidden: int, vocab: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"W_xh": rng.standard_normal((hidden, vocab)),
            "W_hh": rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
            "b_h": 0.1 * rng.standard_normal(hidden),
            "W_hy": rng.standard_normal((vocab, hidden)),
            "b_y": 0.1 * rng.standard_normal(vocab)}


def _adam_case(seed: int, step: int) -> tuple:
    rng = np.random.default_rng(seed)
    shapes = {"W": (3, 2), "b": (3,)}
    params = {k: rng.standard_normal(s) for k, s in shapes.items()}
    grads = {k: rng.standard_normal(s) for k, s in shapes.items()}
    state = {"m": {k: 0.1 * rng.standard_normal(s) for k, s in shapes.items()},
             "v": {k: rng.random(s) for k, s in shapes.items()}}
    return params, grads, state, step


def init_params_seeded(m, hidden, vocab, seed):
    """Your init_params with np.random.default_rng(seed)."""
    return m.init_params(hidden, vocab, np.random.default_rng(seed))


def sample_text_seeded(m, params, chars, n_chars, temperature, seed):
    """Your sample_text with np.random.default_rng(seed)."""
    return m.sample_text(params, chars, n_chars, temperature, np.random.default_rng(seed))


def train_history(m, params, streams_x, streams_y, chunk_len, n_updates, clip):
    """The history of your train_tbptt."""
    return m.train_tbptt(params, streams_x, streams_y, chunk_len, n_updates, 3e-2, clip)[1]


_rng = np.random.default_rng(9)
_SX, _SY = _rng.integers(0, 5, (2, 12)), _rng.integers(0, 5, (2, 12))
_CHARS = ["\n", " ", "1", "C", "P", "k", "o"]

CASES = {
    "build_vocab_log_head": ("build_vocab", (LOG_HEAD,)),
    "encode_log_head": ("encode", ("P1 temp", {" ": 0, "1": 1, "P": 2, "e": 3, "m": 4,
                                                "p": 5, "t": 6})),
    "split_train_val_23": ("split_train_val", (np.arange(23, dtype=np.int64), 0.1)),
    "entropy_floor_log": ("entropy_floor", (8, 3, [501, 95, 51], [1 / 7] * 4 + [3 / 7],
                                            46196 / 1500)),
    "ngram_order3": ("ngram_validation_loss", ("abcabcabd abcab cab", "cabqabcab", 3)),
    "make_streams_23_4": ("make_streams", (np.arange(23, dtype=np.int64), 4)),
    "init_params_5_3": (init_params_seeded, (5, 3, 7)),
    "adam_step_1": ("adam_step", _adam_case(1, 1)),
    "adam_step_10": ("adam_step", _adam_case(2, 10)),
    "train_tbptt_small": (train_history, (_small_params(3, 6, 5), _SX, _SY, 4, 7, 5.0)),
    "train_tbptt_clipped": (train_history, (_small_params(4, 6, 5), _SX, _SY, 4, 5, 1e-3)),
    "evaluate_loss_small": ("evaluate_loss", (_small_params(5, 4, 5),
                                              np.array([0, 3, 1, 4, 4, 2, 0]))),
    "sample_text_small": (sample_text_seeded, (_small_params(6, 8, 7), _CHARS, 40, 0.7, 1)),
    "audit_hand_made": ("audit", ("t 4.0 bar ok /F2\nP1 vib 7.1 mm/s high /P1\n"
                                  "C1 temp 80.7 bar high /C1\nP3 pres 5.5 bar high /P4\n"
                                  "F2 pres 4.0 bar night shift ok /F2\nP2 te",)),
    "hidden_gradient_norms_small": ("hidden_gradient_norms",
                                    (_small_params(7, 6, 5), _SX[:, :6], _SY[:, :6],
                                     np.zeros((6, 2)))),
    "lm_windows_10_4": ("lm_windows", (np.arange(10, dtype=np.int64), 4)),
    "perplexity_weighted": ("token_weighted_perplexity", ([2.0, 0.5, 1.2], [10, 300, 45])),
}

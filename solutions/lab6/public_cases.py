"""Inputs of lab6's public test vectors: ``CASES[name] = (function_name, args)``.

Only the functions that take plain data appear here. greedy_decode, beam_search and
sample_sequence take a model (``step_fn``) or a random generator, so their public tests build
their inputs directly.
"""

import numpy as np

_rng = np.random.default_rng(6006)

CASES: dict[str, tuple] = {
    # the lab6 README's example: logits (2, 1, 0) at temperatures 0.5 and 2
    "softmax_spec_cold": ("softmax_with_temperature", (np.array([2.0, 1.0, 0.0]), 0.5)),
    "softmax_spec_hot": ("softmax_with_temperature", (np.array([2.0, 1.0, 0.0]), 2.0)),
    # a batch of rows in float32: the softmax runs over the last axis and keeps the dtype
    "softmax_batch_float32": (
        "softmax_with_temperature",
        (_rng.standard_normal((3, 6)).astype(np.float32), 0.7),
    ),
    # logits of size ~1000 must not overflow
    "softmax_large_logits": (
        "softmax_with_temperature",
        (1000.0 * _rng.standard_normal((2, 5)), 1.3),
    ),
    "gnmt_scalar": ("gnmt_length_penalty", (7, 0.6)),
    "gnmt_alpha_zero": ("gnmt_length_penalty", (12, 0.0)),
    "gnmt_lengths_array": ("gnmt_length_penalty", (np.arange(1, 11, dtype=np.float64), 1.0)),
}

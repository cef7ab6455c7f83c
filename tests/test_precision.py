"""promoted_oracle: an independent implementation run one precision up, its results cast back."""

import numpy as np
import torch

from rnngrade.grading.precision import promoted_oracle


def test_float32_inputs_reach_the_oracle_in_float64_and_results_come_back_in_float32():
    seen = {}

    def oracle(x, lengths, scale):
        seen.update(x=x.dtype, lengths=lengths.dtype, scale=scale)
        return {"out": torch.tanh(x) * scale, "lengths": lengths, "pair": (x.sum(), "note")}

    x = torch.linspace(-1, 1, 6, dtype=torch.float32).reshape(2, 3)
    lengths = torch.tensor([3, 2])
    got = promoted_oracle(oracle)(x, lengths, 2.0)
    assert seen == {"x": torch.float64, "lengths": torch.int64, "scale": 2.0}
    assert got["out"].dtype == torch.float32 and got["pair"][0].dtype == torch.float32
    assert got["lengths"].dtype == torch.int64 and got["pair"][1] == "note"
    # the float64 result, rounded once: not the float32 computation's own error
    exact = torch.tanh(x.double()) * 2.0
    assert torch.equal(got["out"], exact.float())


def test_float64_inputs_pass_through_untouched():
    x = torch.linspace(-1, 1, 4, dtype=torch.float64)
    got = promoted_oracle(lambda a: a * 3)(x)
    assert got.dtype == torch.float64 and torch.equal(got, x * 3)


def test_a_gradient_of_the_oracle_is_cast_back_too():
    def oracle(x):
        leaf = x.clone().requires_grad_(True)
        (leaf ** 3).sum().backward()
        return leaf.grad

    x = torch.tensor([0.1, 0.2], dtype=torch.float32)
    got = promoted_oracle(oracle)(x)
    assert got.dtype == torch.float32
    np.testing.assert_array_equal(got.numpy(), (3 * x.double() ** 2).float().numpy())

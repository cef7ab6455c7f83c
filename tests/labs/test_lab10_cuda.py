"""lab10 on a GPU: the reference's gradient_ratio with cuDNN's LSTM and GRU (float32, TF32 off)
against the CPU, in log10 to 0.1 decades where the ratio exceeds 1e-30 (the README's bound).
Skipped, saying why, where there is no CUDA device."""

import numpy as np
import pytest
import torch
import torch.nn as nn

from rnngrade.diagnosis.mutants import load_source_as_module, strip_markers
from rnngrade.harness.checks.devices import cuda_unavailable_reason
from rnngrade.labs import get_lab

LAB = get_lab("lab10")


@pytest.mark.cuda
@pytest.mark.parametrize("kind, forget_bias", [("lstm", 0.0), ("lstm", 3.0), ("gru", None)],
                         ids=["lstm-b0", "lstm-b3", "gru"])
def test_gradient_ratio_on_cuda_matches_the_cpu(kind, forget_bias):
    reason = cuda_unavailable_reason()
    if reason:
        pytest.skip(reason)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = load_source_as_module(strip_markers(LAB.solution_path().read_text(encoding="utf-8")),
                              "_lab10_reference_cuda")
    torch.manual_seed(1)
    inputs, readout = torch.randn(32, 200, 8), torch.randn(64)
    torch.manual_seed(1)
    layer = (nn.LSTM if kind == "lstm" else nn.GRU)(8, 64, batch_first=True)
    if forget_bias is not None:
        with torch.no_grad():
            layer.bias_ih_l0[64:128] = forget_bias
            layer.bias_hh_l0[64:128] = 0.0
    weights = layer.state_dict()
    on_cpu = m.gradient_ratio(kind, weights, inputs, readout)
    on_gpu = m.gradient_ratio(kind, {k: v.cuda() for k, v in weights.items()}, inputs.cuda(),
                              readout.cuda())
    assert on_gpu.dtype == np.float64 and on_gpu.shape == (200,)
    kept = on_cpu > 1e-30
    assert kept.sum() > 50
    assert np.max(np.abs(np.log10(on_gpu[kept]) - np.log10(on_cpu[kept]))) < 0.1

"""Grading lab11 end to end (in-process): without the training runs their five tests are listed
as not run, the unpacked encoder loses only encode's points and is named there; on a GPU, the
reference's encoder and decoder step agree with the CPU's (float32, TF32 off). The reference,
stub and mutants are graded by test_lab_grading.py; the outcome tests on seeds 0–4 are
`rnngrade validate --lab lab11`."""

import numpy as np
import pytest
import torch

from rnngrade.diagnosis.mutants import load_source_as_module, strip_markers
from rnngrade.labs import get_lab

from .grading import grade_lab_source, graded, mutants

LAB = get_lab("lab11")


@pytest.mark.slow
def test_without_the_training_runs_their_five_tests_are_listed_as_not_run():
    """The reference graded as test_lab_grading.py grades it (lab11/quick_cases.yaml)."""
    result = graded(LAB.name, "reference", False)
    skipped = [t for t in result.tests if t.outcome == "skipped" and "not run" in t.message]
    assert len(skipped) == 5


@pytest.mark.slow
def test_unpacked_encoder_loses_the_invariance_points_and_is_named(tmp_path):
    table = {m.name: m for m in mutants(LAB.name)}
    source = table["encoder_not_packed"].apply(LAB.solution_path().read_text(encoding="utf-8"))
    result = grade_lab_source(tmp_path, LAB, source)
    failed = {t.name: t for t in result.tests if t.score < t.max_score}
    assert "test_encode_padding_invariance" in failed
    assert any(d.name == "encoder_not_packed" for d in
               failed["test_encode_padding_invariance"].diagnosis)
    assert all(t.startswith("test_encode") for t in failed)


@pytest.mark.cuda
def test_reference_on_cuda_matches_the_cpu():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = load_source_as_module(strip_markers(LAB.solution_path().read_text(encoding="utf-8")),
                              "_lab11_reference_cuda")
    params = m.init_params(True, 3)
    src, dec_in, _, lens = m.make_reversal_batch(6, np.random.default_rng(2), 1, 12)
    on_cpu = m.teacher_forced_logits({k: v.double() for k, v in params.items()}, src, dec_in,
                                     lens)
    on_gpu = m.teacher_forced_logits({k: v.cuda() for k, v in params.items()}, src.cuda(),
                                     dec_in.cuda(), lens)  # lens stays on the CPU
    # float32 on CUDA with TF32 off against float64: ~1e-6 on O(1) logits after 13 steps
    assert torch.allclose(on_gpu.cpu().double(), on_cpu, atol=1e-4, rtol=1e-4)
    H, mask, s0 = m.encode({k: v.cuda() for k, v in params.items()}, src.cuda(), lens.cuda())
    assert H.device.type == mask.device.type == s0.device.type == "cuda"

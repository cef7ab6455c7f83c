"""Grading on CUDA in the sandbox starts only if a jailed worker can use the GPU libraries."""

import pytest

from rnngrade.errors import GraderError
from rnngrade.sandbox import Limits
from rnngrade.sandbox.cuda_check import check_cuda_workers


def test_a_worker_that_cannot_use_cuda_stops_the_grading_with_the_library_error(
        sandbox_available):
    """Here no GPU (or a CPU build of torch) stands for a jail that withholds the libraries:
    the probe's own error reaches the instructor, and no student is graded."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine's CUDA works: the failure cannot be provoked here")
    for _ in range(2):  # a failure is not remembered as a success
        with pytest.raises(GraderError, match="cannot use the GPU libraries") as caught:
            check_cuda_workers(Limits())
        assert "in use_the_gpu_libraries" in str(caught.value)  # the worker's own error
        assert "--device cpu" in str(caught.value)


@pytest.mark.cuda
def test_on_a_gpu_machine_a_jailed_worker_uses_cublas_cudnn_and_cufft(sandbox_available):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    check_cuda_workers(Limits())  # raises GraderError with the library's message otherwise

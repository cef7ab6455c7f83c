"""Before grading on CUDA in the sandbox: can a jailed worker use the GPU libraries at all?

A CUDA worker runs under the jail's limits, without the host's file system, as another user. If
that keeps the CUDA runtime, cuBLAS, cuDNN or cuFFT from working on this machine, every
student's correct code would fail the CUDA cases with the library's error: the machine's fault,
scored against the students. So, once per process, a worker with the lab's limits runs trusted
code through each library; when that fails, grading on CUDA is refused (a GraderError, exit 4)
with the library's own message, and nothing is scored.
"""

from __future__ import annotations

from rnngrade.errors import GraderError
from rnngrade.limits import Limits

# Trusted code, run as the worker's module: each library on tiny inputs, forward and backward.
PROBE = '''
import torch


def use_the_gpu_libraries():
    x = torch.linspace(-1.0, 1.0, 24, device="cuda").reshape(2, 3, 4).requires_grad_(True)
    (x @ x.transpose(1, 2)).sum().backward()  # CUDA and cuBLAS
    out, h = torch.nn.GRU(4, 5, batch_first=True).cuda()(x)  # cuDNN
    (out.sum() + h.sum()).backward()
    spectrum = torch.fft.rfft(x.detach(), n=16, dim=1)  # cuFFT
    torch.fft.irfft(spectrum, n=16, dim=1).sum().item()
    torch.cuda.synchronize()
'''

_checked: set[tuple] = set()


def check_cuda_workers(limits: Limits | None = None) -> None:
    """Raise GraderError unless a sandboxed CUDA worker under ``limits`` can use CUDA, cuBLAS,
    cuDNN and cuFFT (checked once per process and set of limits)."""
    from rnngrade.harness.runner.base import StudentError
    from rnngrade.sandbox.runner import SandboxRunner, SandboxUnavailable

    limits = limits or Limits()
    key = tuple(sorted(limits.as_wire().items()))
    if key in _checked:
        return
    try:
        runner = SandboxRunner(PROBE, "cuda_check.py", device="cuda", limits=limits)
    except SandboxUnavailable:
        return  # the grading itself says why the sandbox cannot start
    try:
        runner.call("use_the_gpu_libraries", timeout=max(60.0, limits.call_seconds))
    except StudentError as exc:
        raise GraderError("a sandboxed CUDA worker cannot use the GPU libraries on this "
                          f"machine, so CUDA cases would fail for every student: {exc.message}"
                          "\nGrade with --device cpu, or find what the jail withholds (its "
                          "limits, the driver's folders) with `make check-cuda`.") from None
    finally:
        runner.close()
    _checked.add(key)

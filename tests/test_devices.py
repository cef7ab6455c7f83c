"""Device resolution: ``cpu`` and a torch build without GPU support answer without importing
torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from rnngrade.errors import UsageError
from rnngrade.grading import devices
from rnngrade.grading.devices import resolve_device, torch_without_gpu_support


def test_the_version_file_tells_what_the_imported_torch_says():
    assert torch_without_gpu_support() == (torch.version.cuda is None
                                           and torch.version.hip is None)


def test_a_build_with_gpu_support_or_an_unreadable_one_is_asked_instead(tmp_path, monkeypatch):
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch")
    (package / "version.py").write_text("cuda: Optional[str] = '12.4'\nhip = None\n")
    assert not torch_without_gpu_support()
    (package / "version.py").write_text("cuda = None\nhip: Optional[str] = '6.2'\n")
    assert not torch_without_gpu_support()
    (package / "version.py").write_text("cuda = None\n")  # hip not said: cannot tell
    assert not torch_without_gpu_support()
    (package / "version.py").write_text("cuda = None\nhip = None\n")
    assert torch_without_gpu_support()


def test_auto_is_cpu_on_a_build_without_gpu_support_and_asks_torch_otherwise(monkeypatch):
    monkeypatch.setattr(devices, "torch_without_gpu_support", lambda: True)
    monkeypatch.setattr(devices, "cuda_unavailable_reason", lambda: None)  # never asked
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(devices, "torch_without_gpu_support", lambda: False)
    assert resolve_device("auto") == "cuda"
    with pytest.raises(UsageError):
        resolve_device("tpu")


@pytest.mark.skipif(not torch_without_gpu_support(), reason="a torch build with GPU support")
def test_resolving_a_device_imports_no_torch_on_a_cpu_build():
    code = ("import sys; from rnngrade.grading.devices import resolve_device; "
            "assert resolve_device('auto') == resolve_device('cpu') == 'cpu'; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

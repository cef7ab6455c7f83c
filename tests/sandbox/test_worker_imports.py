"""A lab's ``worker_imports``: a zygote started by ``start_soon(imports)`` has imported them, so
every worker it forks finds them imported (torch.optim's first use costs seconds otherwise)."""

from __future__ import annotations

import pytest

from rnngrade.labs import LabConfigError, load_lab
from rnngrade.sandbox.zygote import client as zygote

PROBE = "import sys\n\ndef imported(name):\n    return name in sys.modules\n"
MODULE = "xml.dom.minidom"  # nothing of the worker side imports it


def test_a_fresh_zygotes_workers_find_the_labs_imports(sandbox, monkeypatch):
    monkeypatch.setattr(zygote, "_IMPORTS", set())
    before = sandbox(PROBE)
    assert before.call("imported", (MODULE,)).value is False
    monkeypatch.setattr(zygote, "_CLIENT", None)  # a zygote of this test's own
    monkeypatch.setattr(zygote, "_STARTING", None)
    zygote.start_soon([MODULE, "no_such_module_anywhere"])  # one that fails is left alone
    try:
        runner = sandbox(PROBE)
        assert runner.call("imported", (MODULE,)).value is True
        assert runner.call("imported", ("no_such_module_anywhere",)).value is False
        runner.close()
    finally:
        if zygote._CLIENT is not None:
            zygote._CLIENT.close()


def test_worker_imports_are_module_names(tmp_path):
    folder = tmp_path / "lab90"
    folder.mkdir()
    base = ("title: Toy\nmodule: toy\nfunctions: [f]\nuses_torch: false\n")
    (folder / "lab.yaml").write_text(base + "worker_imports: [torch._dynamo, json]\n")
    assert load_lab(folder / "lab.yaml").worker_imports == ("torch._dynamo", "json")
    (folder / "lab.yaml").write_text(base)
    assert load_lab(folder / "lab.yaml").worker_imports == ()
    for bad in ("torch._dynamo", "[os; rm]", "[1]", "[a..b]"):
        (folder / "lab.yaml").write_text(base + f"worker_imports: {bad}\n")
        with pytest.raises(LabConfigError, match="worker_imports"):
            load_lab(folder / "lab.yaml")

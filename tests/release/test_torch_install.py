"""Every place that installs torch installs the CPU build, from PyTorch's CPU wheel index.

PyPI's Linux torch wheel requires the CUDA libraries (several GB); the CPU build is on
``TORCH_INDEX`` only. This machine's pip may serve a local CPU wheel whatever the command says,
so the resolution checks run pip with no configuration and ask the real index (skipped, with
the reason, where it cannot be reached)."""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from rnngrade.gradescope.scripts import setup_script, torch_install
from rnngrade.release.build import TORCH_INDEX, TORCH_VERSION, workflow

from ..conftest import ROOT

# a `pip install` whose arguments (up to the end of the command) name torch itself, not
# torch.nn or pytorch-lightning
INSTALLS_TORCH = re.compile(r"pip install\b[^`;|&]*?[\s\"']torch(?:==[^\s\"'`]*)?(?=$|[\s\"'`])")
CPU_BUILD = f"--index-url {TORCH_INDEX}"


def makefile_torch_command() -> list[str]:
    """The Makefile's torch install, as `make` would run it (variables expanded)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    printed = subprocess.run(["make", "-n", "-B", "VENV=/fresh/venv", "setup"], cwd=ROOT,
                             text=True, capture_output=True, check=True).stdout
    (line,) = [line for line in printed.splitlines() if INSTALLS_TORCH.search(line)]
    return shlex.split(line)


def places() -> dict[str, str]:
    """Every text that tells a machine or a person how to install torch."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for pattern in ("README.md", "docs/*.md", "templates/workflows/*.yml",
                             "templates/release/*.j2", ".ci/*", "Makefile")
             for p in sorted(ROOT.glob(pattern)) if p.is_file()}
    texts["make -n setup"] = shlex.join(makefile_torch_command())
    texts["setup.sh"] = setup_script("lab1", TORCH_VERSION)
    for name in ("student.yml", "grading.yml"):
        texts[f"workflow {name} as released"] = workflow(name, TORCH_VERSION)
    return texts


def test_every_torch_install_names_the_cpu_index():
    found: dict[str, list[str]] = {}
    for name, text in places().items():
        for line in text.splitlines():
            if INSTALLS_TORCH.search(line):
                found.setdefault(name, []).append(line)
                assert CPU_BUILD in line.replace("$(TORCH_INDEX)", TORCH_INDEX), (name, line)
    assert {"Makefile", "make -n setup", "setup.sh", "README.md", "docs/GRADESCOPE.md",
            "templates/workflows/student.yml", "templates/workflows/grading.yml",
            "templates/release/README.md.j2"} <= set(found), sorted(found)


def test_the_makefile_and_the_gradescope_bundle_install_torch_alike():
    """One command: the pin and index of rnngrade.release.build, torch alone (its requirements
    come with the next install, from the default index)."""
    command = makefile_torch_command()
    assert command[:4] == ["/fresh/venv/bin/python", "-m", "pip", "install"]
    assert [a for a in command[4:] if a != "--quiet"] == torch_install(TORCH_VERSION)
    assert f"pip install --quiet {shlex.join(torch_install(TORCH_VERSION))}\n" in \
        setup_script("lab1", TORCH_VERSION)


def unreachable(url: str) -> str:
    """Why ``url`` cannot be fetched from here ("" when it can)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=30):
            return ""
    except OSError as exc:
        return f"{url} cannot be reached from here ({exc})"


def resolve(args: list[str], tmp_path: Path) -> dict:
    """What ``pip install ARGS`` would install on a fresh machine: this machine's pip
    configuration (local wheels, extra indexes, constraints) left out; the report of pip's
    dry run, without dependencies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # pip then reads no configuration file at all
    if "PIP_CERT" in os.environ:  # whom to trust, not where packages come from
        env["PIP_CERT"] = os.environ["PIP_CERT"]
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
         "--disable-pip-version-check", "--quiet", "--report", str(report), *args],
        env=env, text=True, capture_output=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def needs_cuda(item: dict) -> list[str]:
    return [r for r in item["metadata"].get("requires_dist", [])
            if r.startswith(("nvidia-", "triton"))]


def test_the_makefiles_torch_install_resolves_to_the_cpu_build_on_a_fresh_machine(tmp_path):
    command = makefile_torch_command()
    if why := unreachable(f"{TORCH_INDEX}/torch/"):
        pytest.skip(why)
    args = [a for a in command[4:] if a != "--quiet"]
    (item,) = resolve(args, tmp_path)["install"]
    assert item["metadata"]["name"] == "torch"
    assert item["metadata"]["version"].split("+")[0] == TORCH_VERSION
    assert item["download_info"]["url"].startswith("https://download.pytorch.org/")
    assert not needs_cuda(item), needs_cuda(item)


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                    reason="PyPI's torch is the CUDA build on Linux x86-64")
def test_pypis_torch_is_the_cuda_build_the_cpu_index_avoids(tmp_path):
    """Why the index matters: the same pin from PyPI requires the CUDA libraries."""
    if why := unreachable("https://pypi.org/simple/torch/"):
        pytest.skip(why)
    (item,) = resolve([f"torch=={TORCH_VERSION}"], tmp_path)["install"]
    assert item["metadata"]["version"] == TORCH_VERSION and needs_cuda(item)

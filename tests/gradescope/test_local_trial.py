"""docs/GRADESCOPE.md's trial of a bundle on one's own machine, step by step, in a temporary
folder: nothing may be written outside it, and setup.sh installs nothing outside the image.

pip and venv are stand-ins here (setup.sh's installs need the network): a fake ``python3``
records what it is asked, creates a venv only inside the trial folder, and the venv's "editable
install" makes a ``rnngrade`` that runs the bundle's own copy of the grader. ``ln`` and
``apt-get`` are recorded, never run. Outside the trial folder, HOME, TMPDIR, the working
directory and /usr/local/bin are watched."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rnngrade.gradescope.scripts import torch_install
from rnngrade.grading.rubric import load_rubric
from rnngrade.labs import get_lab
from rnngrade.release.build import TORCH_VERSION

from .conftest import SUBMISSIONS, valid_results

BIN = Path(sys.executable).parent

FAKE_PYTHON3 = """#!/usr/bin/env bash
echo "python3 $*" >> "$FAKE_LOG"
if [ "${1-}" = -m ] && [ "${2-}" = venv ]; then
    case "$3" in
        "$TRIAL"/*) mkdir -p "$3/bin" && cp "$FAKE_BIN/venv-python" "$3/bin/python"; exit ;;
        *) echo "fake python3: not creating $3 (outside the trial folder)" >&2; exit 1 ;;
    esac
fi
exec "$REAL_PYTHON" "$@"
"""

VENV_PYTHON = """#!/usr/bin/env bash
echo "venv-python $* | TMPDIR=${TMPDIR-} PIP_CACHE_DIR=${PIP_CACHE_DIR-}" >> "$FAKE_LOG"
[ "${1-} ${2-} ${3-}" = "-m pip install" ] || exit 1
shift 3
while [ $# -gt 0 ]; do
    if [ "$1" = -e ]; then
        printf '#!/usr/bin/env bash\\nexport PYTHONPATH=%q/graders RNNGRADE_ROOT=%q\\n' "$2" "$2" \\
            > "$(dirname "$0")/rnngrade"
        printf 'exec %q -m rnngrade.cli "$@"\\n' "$REAL_PYTHON" >> "$(dirname "$0")/rnngrade"
        chmod +x "$(dirname "$0")/rnngrade"
    fi
    shift
done
"""

RECORDED = """#!/usr/bin/env bash
echo "{name} $*" >> "$FAKE_LOG"
"""


class Trial:
    """A temporary folder for the trial (``root``), and the places outside it that are watched."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "trial"
        self.ag = self.root / "ag"
        self.home, self.tmp, self.cwd, fakes = (tmp_path / n for n in ("home", "tmp", "cwd",
                                                                        "fakes"))
        for folder in (self.root, self.home, self.tmp, self.cwd, fakes):
            folder.mkdir()
        self.log = tmp_path / "commands.log"
        self.log.touch()
        scripts = {"python3": FAKE_PYTHON3, "venv-python": VENV_PYTHON,
                   **{name: RECORDED.format(name=name) for name in ("ln", "apt-get", "sudo")}}
        for name, text in scripts.items():
            (fakes / name).write_text(text)
            (fakes / name).chmod(0o755)
        self.env = {"PATH": f"{fakes}{os.pathsep}{BIN}{os.pathsep}/usr/bin:/bin",
                    "HOME": str(self.home), "TMPDIR": str(self.tmp), "LANG": "C.UTF-8",
                    "FAKE_LOG": str(self.log), "FAKE_BIN": str(fakes), "TRIAL": str(self.root),
                    "REAL_PYTHON": sys.executable}
        if "PYTHONPATH" in os.environ:  # the grader under test, where it is not the installed one
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.usr_local_bin = self.listing(Path("/usr/local/bin"))

    @staticmethod
    def listing(folder: Path) -> set[str]:
        return {p.name for p in folder.iterdir()} if folder.is_dir() else set()

    def sh(self, command: str, **env: str) -> subprocess.CompletedProcess[str]:
        """One step of the trial, as a shell line run from a folder outside the trial."""
        return subprocess.run(["bash", "-c", command], cwd=self.cwd, text=True,
                              capture_output=True, env={**self.env, **env}, timeout=900)

    def commands(self) -> list[str]:
        return self.log.read_text().splitlines()

    def assert_nothing_written_outside(self) -> None:
        for folder in (self.home, self.tmp, self.cwd):
            assert not any(folder.iterdir()), f"{folder}: {sorted(self.listing(folder))}"
        assert self.listing(Path("/usr/local/bin")) == self.usr_local_bin
        for line in self.commands():
            assert not line.startswith(("ln ", "apt-get ", "sudo ")), line


def unpack(trial: Trial) -> None:
    """docs/GRADESCOPE.md: build the bundle, lay out the trial's /autograder, unzip."""
    built = trial.sh(f"rnngrade gradescope --lab lab1 --out {trial.root}/bundle")
    assert built.returncode == 0, built.stderr
    rubric = load_rubric(get_lab("lab1").suite_dir() / "rubric.yaml")
    visible = sum(entry.visibility == "visible" for entry in rubric.entries.values())
    assert visible == len(rubric.entries)  # public tests are shown at once
    assert f"{visible} visible" in built.stdout  # the rubric's visibilities, counted
    (trial.ag / "source").mkdir(parents=True)
    (trial.ag / "submission").mkdir()
    with zipfile.ZipFile(trial.root / "bundle" / "autograder.zip") as bundle:
        bundle.extractall(trial.ag / "source")


def test_setup_sh_refuses_outside_the_image_and_a_trial_writes_only_in_its_folder(tmp_path):
    trial = Trial(tmp_path)
    unpack(trial)
    setup = shlex.quote(str(trial.ag / "source" / "setup.sh"))

    # not /autograder/source/setup.sh and no AUTOGRADER_ROOT: nothing is installed
    refused = trial.sh(f"bash {setup}")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "not installing" in refused.stderr and "AUTOGRADER_ROOT=DIR" in refused.stderr
    elsewhere = trial.root / "elsewhere"
    elsewhere.mkdir()
    assert trial.sh(f"bash {setup}", AUTOGRADER_ROOT=str(elsewhere)).returncode == 2
    assert trial.commands() == [] and not any(elsewhere.iterdir())

    # the trial: AUTOGRADER_ROOT names the folder that holds source/
    done = trial.sh(f"bash {setup}", AUTOGRADER_ROOT=str(trial.ag))
    assert done.returncode == 0, done.stdout + done.stderr
    venv = trial.ag / "rnngrade-venv"
    pip = [line.split(" | ")[0] for line in trial.commands() if line.startswith("venv-python")]
    assert pip == ["venv-python -m pip install --quiet --upgrade pip",
                   f"venv-python -m pip install --quiet {shlex.join(torch_install(TORCH_VERSION))}",
                   f"venv-python -m pip install --quiet -e {trial.ag / 'source' / 'course'}"]
    assert f"python3 -m venv {venv}" in trial.commands()
    assert all(f"TMPDIR={trial.ag}/.tmp PIP_CACHE_DIR={trial.ag}/.cache/pip" in line
               for line in trial.commands() if line.startswith("venv-python"))
    assert "rnngrade" in done.stdout  # `rnngrade --version` of the venv's own grader
    trial.assert_nothing_written_outside()


@pytest.mark.slow
def test_the_whole_trial_grades_with_the_bundles_grader_and_writes_only_in_its_folder(tmp_path):
    trial = Trial(tmp_path)
    unpack(trial)
    source = trial.ag / "source"
    done = trial.sh(f"bash {shlex.quote(str(source / 'setup.sh'))}", AUTOGRADER_ROOT=str(trial.ag))
    assert done.returncode == 0, done.stdout + done.stderr
    submitted = SUBMISSIONS / "buggy_feeds_a0" / "rnn.py"
    assert trial.sh(f"cp {shlex.quote(str(submitted))} {trial.ag / 'submission'}/").returncode == 0
    graded = trial.sh(f"bash {shlex.quote(str(source / 'run_autograder'))}",
                      AUTOGRADER_ROOT=str(trial.ag))
    assert graded.returncode == 0, graded.stdout + graded.stderr
    data = valid_results(trial.ag / "results" / "results.json")
    assert 0 < data["score"] < 24 and "isolation: sandbox" in graded.stdout
    assert {t["visibility"] for t in data["tests"]} == {"visible"}
    # the grader that ran is the bundle's copy (setup.sh's editable install), not this checkout's
    assert any((source / "course" / "graders" / "rnngrade").glob("__pycache__/cli.*.pyc"))
    trial.assert_nothing_written_outside()


def test_the_doc_runs_these_steps():
    """The trial this file runs is the one docs/GRADESCOPE.md prints."""
    doc = (Path(__file__).parents[2] / "docs" / "GRADESCOPE.md").read_text(encoding="utf-8")
    steps = doc.split("## Trying a bundle on your own machine", 1)[1]
    for step in ('TRIAL="$(mktemp -d)"', 'rnngrade gradescope --lab lab1 --out "$TRIAL/bundle"',
                 'unzip -q "$TRIAL/bundle/autograder.zip" -d "$TRIAL/ag/source"',
                 'AUTOGRADER_ROOT="$TRIAL/ag" bash "$TRIAL/ag/source/setup.sh"',
                 'AUTOGRADER_ROOT="$TRIAL/ag" bash "$TRIAL/ag/source/run_autograder"'):
        assert step in steps, step
    assert "/tmp/" not in steps  # every path of the trial is inside "$TRIAL"

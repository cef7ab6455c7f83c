"""Output attacks through `rnngrade ci`, run locally as a GitHub Actions job would run it: the
pull-request comment and the job summary stay inert, and nothing a submission names becomes a
workflow command in the job's log."""

from __future__ import annotations

import re
import runpy
import shutil
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.errors import ExitCode

from ..conftest import SUBMISSIONS
from ..output.conftest import check_markdown, check_reports, table_rows

HOSTILE = SUBMISSIONS / "hostile" / "output"
ODD = runpy.run_path(str(HOSTILE / "odd_entries.py"))
LAB1_TITLE = "lab1 — RNN forward, step by step"


@pytest.fixture
def actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A GitHub Actions job's environment, without a token (the comment is written, not posted);
    the job summary's path."""
    for key in ("GITHUB_TOKEN", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


def run_ci(checkout: Path, out: Path) -> int:
    return main(["ci", "--submission", str(checkout), "--out", str(out), "--inprocess",
                 "--device", "cpu", "--lab", "lab1"])


def test_a_forged_fence_heading_and_image_stay_inert_in_the_comment(release_copy, actions,
                                                                   tmp_path, capsys):
    shutil.copy2(HOSTILE / "fence_forgery" / "rnn.py",
                 release_copy / "assignments" / "lab1" / "rnn.py")
    assert run_ci(release_copy, tmp_path / "out") == ExitCode.OK
    capsys.readouterr()
    # softmax and the honest rnn_forward (graded with a correct cell in place of the attacked
    # one); the attacked cell fails its cache test too
    check_reports(tmp_path / "out" / "lab1", 12.0)
    for body in ((tmp_path / "out" / "pr_comment.md").read_text(), actions.read_text()):
        tokens = check_markdown(body, ["🤖 rnngrade feedback", f"{LAB1_TITLE}: 12 / 24",
                                       "What to fix"])
        assert "every hidden test passes" in body  # shown, as text in a code block
        assert table_rows(tokens) == [f"{LAB1_TITLE} | **12 / 24** | 6 tests to fix"]


def test_a_file_name_cannot_emit_a_workflow_command(release_copy, actions, tmp_path, capsys,
                                                    monkeypatch):
    folder = release_copy / "assignments" / "lab1"
    (folder / "rnn.py").unlink()
    (folder / "lab1.ipynb").unlink()
    (folder / ODD["WORKFLOW_FILE"]).write_text(ODD["HONEST_SOFTMAX"])
    (folder / "b.py").write_text(ODD["HONEST_SOFTMAX"])
    assert run_ci(release_copy, tmp_path / "out") in (ExitCode.OK, ExitCode.UNLOADABLE)
    lines = capsys.readouterr().out.splitlines()
    assert "not graded" in "\n".join(lines) and "::error" in "\n".join(lines)  # it was tried
    start = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert start and lines[-1] == f"::{start.group(1)}::"
    assert not [line for line in lines[1:-1] if line.lstrip().startswith("::")]
    check_markdown((tmp_path / "out" / "pr_comment.md").read_text())

    # outside GitHub Actions: no pause needed, and still no line that starts a command
    monkeypatch.delenv("GITHUB_ACTIONS")
    run_ci(release_copy, tmp_path / "out2")
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")]

"""`rnngrade ci` against a local imitation of the GitHub REST API."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from rnngrade.authoring.notebooks import split_top_level
from rnngrade.ci.github import MARKER, GitHubClient, GitHubError
from rnngrade.ci.run import (
    CiOptions,
    choose_labs,
    choose_submission,
    labs_in_paths,
    labs_in_text,
    pr_number,
)
from rnngrade.ci.run import run_ci as ci_run
from rnngrade.cli import main
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.errors import ExitCode, UsageError
from rnngrade.labs import get_lab

from ..conftest import ROOT, SUBMISSIONS

LAB1 = get_lab("lab1")


@pytest.fixture
def checkout(release_copy: Path) -> Path:
    """A student checkout whose lab1 has a known mistake (every step fed a0)."""
    shutil.copy2(SUBMISSIONS / "lab1" / "buggy_feeds_a0" / "rnn.py",
                 release_copy / "assignments" / "lab1" / "rnn.py")
    return release_copy


@pytest.fixture
def ci_env(github, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a GitHub Actions job for pull request #7 of ``github.repo``."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "number": github.pr, "pull_request": {
        "number": github.pr, "title": "my work", "head": {"ref": "work", "sha": "f00dfeed" * 5},
        "user": {"login": "alice"}}}))
    env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": github.repo,
           "GITHUB_API_URL": github.url, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_TOKEN": "ghs_secret", "RNNGRADE_CI_BACKOFF": "0.01"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def run_ci(checkout: Path, out: Path, *extra: str) -> int:
    return main(["ci", "--submission", str(checkout), "--out", str(out), "--inprocess",
                 "--device", "cpu", *extra])


def test_first_run_creates_the_comment_and_the_second_updates_it(github, ci_env, checkout,
                                                                  tmp_path):
    github.files = ["README.md", "assignments/lab1/rnn.py", "notes.txt"]
    assert run_ci(checkout, tmp_path / "out1") == ExitCode.OK
    assert len(github.comments) == 1 and len(github.seen("POST")) == 1
    first = github.comments[0]
    assert first["body"].startswith(MARKER) and "lab1 — RNN forward" in first["body"]
    assert "to fix" in first["body"] and "/ 24**" in first["body"]
    assert all(auth == "Bearer ghs_secret" for _, _, auth, _ in github.requests)
    assert len(github.seen("GET", "/pulls/7/files")) == 2  # three files, pages of two

    # the student fixes the mistake and pushes: the same comment now shows full marks
    (checkout / "assignments" / "lab1" / "rnn.py").write_text(
        strip_markers(LAB1.solution_path().read_text()))
    github.comments.insert(0, {"id": 5, "body": "nice work!", "user": {"login": "teacher"}})
    assert run_ci(checkout, tmp_path / "out2") == ExitCode.OK
    assert len(github.seen("POST")) == 1 and len(github.seen("PATCH")) == 1
    assert github.seen("PATCH")[0][1].endswith(f"/issues/comments/{first['id']}")
    assert [c["id"] for c in github.comments] == [5, first["id"]]
    assert "**24 / 24**" in github.comments[1]["body"]
    assert "every hidden test passes" in github.comments[1]["body"]
    summary = Path(ci_env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.count("# 🤖 rnngrade feedback for f00dfee") == 2 and MARKER not in summary
    for out in ("out1", "out2"):
        assert {p.name for p in (tmp_path / out / "lab1").iterdir()} >= {
            "results.json", "feedback.md", "feedback.html", "junit.xml"}
        assert (tmp_path / out / "pr_comment.md").read_text().startswith(MARKER)


def test_the_console_script_reads_the_github_environment(github, ci_env, checkout, tmp_path):
    github.files = ["assignments/lab1/rnn.py"]
    env = {**os.environ, **ci_env}
    # The console script installed beside this interpreter: the one `make` put in .venv/bin,
    # whatever else PATH holds.
    script = Path(sys.executable).with_name("rnngrade")
    assert script.exists(), f"{script} is missing: rnngrade is not installed in this environment"
    done = subprocess.run([str(script), "ci", "--submission",
                           str(checkout), "--out", str(tmp_path / "out"), "--inprocess",
                           "--device", "cpu"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "lab1: " in done.stdout and "created the feedback comment" in done.stdout
    assert len(github.comments) == 1


def test_server_errors_are_retried(github, ci_env, checkout, tmp_path):
    github.files = ["assignments/lab1/rnn.py"]
    github.failures = {"GET /repos/course/alice-labs/pulls/7/files": [500, 502],
                       "POST /repos/course/alice-labs/issues/7/comments": [503]}
    assert run_ci(checkout, tmp_path / "out") == ExitCode.OK
    assert len(github.seen("GET", "/files")) == 3 and len(github.seen("POST")) == 2
    assert len(github.comments) == 1


def test_a_server_that_keeps_failing_ends_after_a_bounded_number_of_tries(github):
    github.always = {"GET /repos/course/alice-labs/issues/7/comments": 500}
    delays: list[float] = []
    client = GitHubClient(github.url, github.repo, "t", retries=3, backoff=0.5,
                          sleep=delays.append)
    with pytest.raises(GitHubError, match="failed 4 times; last: HTTP 500"):
        client.comments(7)
    assert delays == [0.5, 1.0, 2.0]  # exponential backoff, and no real waiting in tests
    assert len(github.seen("GET")) == 4


@pytest.mark.parametrize("status, words", [
    (401, ["401", "rejected the token", "Bad credentials", "GITHUB_TOKEN"]),
    (403, ["403", "pull-requests: write", "Resource not accessible"]),
])
def test_refused_tokens_fail_clearly_without_retrying(github, ci_env, checkout, tmp_path,
                                                      capsys, status, words):
    github.always = {"GET /repos/course/alice-labs/pulls/7/files": status}
    assert run_ci(checkout, tmp_path / "out") == ExitCode.GITHUB
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert "ghs_secret" not in err
    assert len(github.requests) == 1 and not github.comments


def test_a_refused_comment_still_leaves_the_summary_and_reports(github, ci_env, checkout,
                                                               tmp_path):
    github.files = ["assignments/lab1/rnn.py"]
    github.always = {"POST /repos/course/alice-labs/issues/7/comments": 403}
    options = CiOptions.from_env(os.environ, submission=checkout, out=tmp_path / "out",
                                 inprocess=True, device="cpu")
    errors: list[str] = []
    assert ci_run(options, say=lambda _: None, warn=errors.append) == ExitCode.GITHUB
    assert len(errors) == 1 and "pull-requests: write" in errors[0]
    assert "lab1 — RNN forward" in Path(ci_env["GITHUB_STEP_SUMMARY"]).read_text()
    assert (tmp_path / "out" / "lab1" / "results.json").exists()


def test_a_marker_in_a_comment_by_the_student_is_not_taken_over(github, ci_env, checkout,
                                                               tmp_path):
    github.files = ["assignments/lab1/rnn.py"]
    github.comments = [{"id": 1, "body": f"{MARKER} 24/24 trust me",
                        "user": {"login": "alice"}}]
    assert run_ci(checkout, tmp_path / "out") == ExitCode.OK
    assert github.comments[0]["body"] == f"{MARKER} 24/24 trust me"
    assert len(github.comments) == 2 and not github.seen("PATCH")


def test_a_pull_request_that_names_no_lab_says_where_it_looked_and_fails(
        github, ci_env, checkout, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_REF_NAME", "7/merge")
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    github.files = ["README.md", "fixtures/public/lab1.npz"]
    assert run_ci(checkout, tmp_path / "out") == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "no lab to grade; looked at the 2 file(s) pull request #7 changes (none under " \
           "assignments/labN/); the pull request's title ('my work') and branch ('work'); " \
           "the branch pushed ('7/merge') and the branch checked out (none)" in err
    assert "--lab labN" in err and not github.comments
    assert "names no lab" in (tmp_path / "out" / "pr_comment.md").read_text()
    assert "names no lab" in (tmp_path / "summary.md").read_text()


@pytest.mark.parametrize(("title", "branch"), [("my work", "lab1"), ("Lab 1 submission", "x")])
def test_when_the_files_name_no_lab_the_branch_or_title_does(github, ci_env, checkout, tmp_path,
                                                             title, branch):
    Path(ci_env["GITHUB_EVENT_PATH"]).write_text(json.dumps({"pull_request": {
        "number": github.pr, "title": title, "head": {"ref": branch, "sha": "ab" * 20},
        "user": {"login": "alice"}}}))
    github.files = ["rnn.py", "README.md"]  # the student's file outside assignments/lab1/
    assert run_ci(checkout, tmp_path / "out") == ExitCode.OK
    assert len(github.comments) == 1 and "lab1 — RNN forward" in github.comments[0]["body"]
    assert "named in the pull request's title or branch" in github.comments[0]["body"]


def test_labs_come_from_the_title_the_branch_pushed_or_checked_out(tmp_path):
    from rnngrade.ci.run import checkout_branch

    def labs(event: dict, **given) -> list[str]:
        options = CiOptions(submission=tmp_path, **given)
        return choose_labs(options, event, None, None).labs

    def pull(title: str, ref: str) -> dict:
        return {"pull_request": {"title": title, "head": {"ref": ref}}}

    assert labs(pull("Lab 2 submission", "work")) == ["lab2"]
    assert labs(pull("done", "submit/lab3")) == ["lab3"]
    assert labs(pull("done", "lab1-fix")) == ["lab1"]
    assert labs({}, head_ref="lab4") == ["lab4"]
    assert labs({"ref": "refs/heads/lab5"}) == ["lab5"]
    assert labs({}, ref_name="lab-6") == ["lab6"]
    assert labs({"pull_request": {"title": ["lab1"], "head": "lab1"}}) == []  # not text
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/lab2-retry\n")
    assert labs({}) == ["lab2"] and checkout_branch(tmp_path) == "lab2-retry"
    (tmp_path / ".git" / "HEAD").unlink()
    (tmp_path / "elsewhere").write_text("ref: refs/heads/lab3\n")
    (tmp_path / ".git" / "HEAD").symlink_to(tmp_path / "elsewhere")
    assert labs({}) == [] and checkout_branch(tmp_path) == ""  # never read through a link
    (tmp_path / ".git" / "HEAD").unlink()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/../../lab3\n")
    assert labs({}) == [] and checkout_branch(tmp_path) == ""  # not a ref git could write
    (tmp_path / ".git" / "HEAD").unlink()
    os.mkfifo(tmp_path / ".git" / "HEAD")
    assert checkout_branch(tmp_path) == ""  # a pipe is not waited on
    choice = choose_labs(CiOptions(submission=tmp_path), pull("done", "work"), None, None)
    assert choice.looked[0].startswith("the files the pull request changes: not asked (no token")


def test_labs_given_on_the_command_line_skip_the_files_api(github, ci_env, checkout, tmp_path):
    assert run_ci(checkout, tmp_path / "out", "--lab", "lab1", "--no-comment") == ExitCode.OK
    assert not github.seen("GET", "/files") and not github.comments
    assert "for the labs asked for" in (tmp_path / "out" / "pr_comment.md").read_text()


def test_without_a_token_the_lab_comes_from_the_branch_name(tmp_path, checkout, capsys,
                                                            monkeypatch):
    for key in ("GITHUB_TOKEN", "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(key, raising=False)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 3, "title": "done",
                                                  "head": {"ref": "Lab1-final", "sha": "ab"}}}))
    code = main(["ci", "--submission", str(checkout), "--out", str(tmp_path / "out"),
                 "--event", str(event), "--inprocess", "--device", "cpu"])
    assert code == ExitCode.OK
    out = capsys.readouterr().out
    assert "lab1: " in out and "no comment posted" in out
    assert "named in the pull request's title or branch" in \
        (tmp_path / "out" / "pr_comment.md").read_text()


def test_the_notebook_is_graded_when_only_the_notebook_was_edited(release_copy):
    folder = release_copy / "assignments" / "lab1"
    assert choose_submission(LAB1, release_copy) == (folder / "rnn.py", [])
    notebook = nbformat.read(folder / "lab1.ipynb", as_version=4)
    reference = dict(split_top_level(strip_markers(LAB1.solution_path().read_text()))[1])
    for cell in notebook.cells:
        block = cell.get("metadata", {}).get("rnngrade", {}).get("block")
        if block:
            cell.source = reference[block]
    nbformat.write(notebook, folder / "lab1.ipynb")
    path, notes = choose_submission(LAB1, release_copy)
    assert path == folder / "lab1.ipynb" and "rnn.py is unchanged" in notes[0]
    (folder / "rnn.py").write_text("def softmax(x):\n    return x\n")
    path, notes = choose_submission(LAB1, release_copy)
    assert path == folder / "rnn.py" and "lab1.ipynb were not graded" in notes[0]


def test_events_paths_and_titles_name_the_pull_request_and_its_labs():
    assert pr_number({"number": 4, "pull_request": {"number": 4}}) == 4
    assert pr_number({"issue": {"number": 9, "pull_request": {}}}) == 9
    assert pr_number({"issue": {"number": 9}}) is None and pr_number({}) is None
    assert labs_in_paths(["assignments/lab13/x.py", "assignments/lab2/bptt.py",
                          "assignments/lab1/lab1.ipynb", "lab3/lstm.py", "assignments/x"]) == \
        ["lab1", "lab2"]
    assert labs_in_text(["LAB 3 and lab_4", "lab-5 / collab2 / lab77"]) == ["lab3", "lab4", "lab5"]


def test_the_token_never_leaves_for_another_host(github):
    github.files = ["a", "b", "c"]
    github.url, real = "http://127.0.0.1:1", github.url  # Link headers now name another host
    client = GitHubClient(real, github.repo, "t", retries=0)
    assert client.pull_request_files(7) == ["a", "b"]  # stopped before the foreign next page


def _commit_at(checkout: Path, when: str) -> None:
    """Make the checkout a git clone whose HEAD was committed at ``when`` (ISO 8601)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(checkout), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@x", "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "my work"]):
        subprocess.run(["git", *command], cwd=checkout, env=env, check=True)


LATE_POLICY = ("late_policy: {penalty_per_day: 10}\n"
               "labs:\n  lab1: {due: 2026-09-21T23:59:00+00:00}\n")


def _late_run(tmp_path: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch, *extra: str,
              extension: str = "", pull: dict | None = None) -> tuple[int, Path]:
    """``rnngrade ci`` on lab1 with a 10 %-a-day late policy, for a pull request by bob whose
    event carries ``pull``; the exit code and the output folder."""
    for key in ("GITHUB_TOKEN", "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(key, raising=False)
    course = tmp_path / "course.yaml"
    course.write_text(LATE_POLICY + extension + "\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 3, "title": "lab1", "head": {"ref": "lab1", "sha": "ab"},
        "user": {"login": "bob"}, **(pull or {})}}))
    out = tmp_path / "out"
    code = main(["ci", "--submission", str(checkout), "--out", str(out), "--event", str(event),
                 "--inprocess", "--device", "cpu", "--course", str(course), *extra])
    return code, out


def notes(out: Path) -> str:
    """The notes of lab1's results.json: what the feedback says about time and lateness."""
    return "\n".join(json.loads((out / "lab1" / "results.json").read_text())["notes"])


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(("extension", "late_days"), [("", 2), ("extensions: {bob: {lab1: 3}}", 0)])
def test_a_back_dated_commit_is_timed_by_when_github_got_the_pull_request(tmp_path, checkout,
                                                                          monkeypatch, extension,
                                                                          late_days):
    _commit_at(checkout, "2026-09-20T23:00:00+00:00")  # a day before the due time: a claim
    code, out = _late_run(tmp_path, checkout, monkeypatch, extension=extension,
                          pull={"updated_at": "2026-09-23T10:00:00Z"})  # 1 day 10 h late
    assert code == ExitCode.OK
    result = json.loads((out / "lab1" / "results.json").read_text())
    feedback = notes(out)
    assert "Submitted 2026-09-23 10:00 UTC (from the time GitHub recorded)" in feedback
    assert "the student's claim" not in feedback
    graded = sum(t["score"] for t in result["tests"])  # the tests keep their own points
    if late_days:
        assert "2 days late" in feedback
        assert result["score"] == pytest.approx(graded - 0.2 * 24)
    else:
        assert "on time" in feedback and result["score"] == pytest.approx(graded)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_without_a_time_from_github_a_late_policy_refuses_the_commits_date(tmp_path, checkout,
                                                                         monkeypatch, capsys):
    _commit_at(checkout, "2026-09-20T23:00:00+00:00")
    code, out = _late_run(tmp_path, checkout, monkeypatch)  # the event has no updated_at
    assert code == ExitCode.USAGE and not out.exists()  # nothing graded, nothing written
    err = capsys.readouterr().err
    assert "lab1 is due 2026-09-21 23:59 UTC with a late penalty" in err
    assert "only the commit's date, which the student's machine sets" in err
    for fix in ("--grading-workflow", "--submitted-at TIME", "--trust-commit-time"):
        assert fix in err

    # the instructor's own time wins over the event's; a time that is none is their mistake
    code, out = _late_run(tmp_path, checkout, monkeypatch, "--submitted-at", "yesterday")
    assert code == ExitCode.USAGE and "--submitted-at 'yesterday'" in capsys.readouterr().err
    code, out = _late_run(tmp_path, checkout, monkeypatch, "--submitted-at", "1790035200",
                          pull={"updated_at": "2026-09-30T00:00:00Z"})
    assert code == ExitCode.OK
    feedback = notes(out)
    assert "Submitted 2026-09-22 00:00 UTC (from the time GitHub recorded)" in feedback
    assert "1 day late" in feedback

    # allowed by the instructor: the commit's date, marked as the student's claim
    shutil.rmtree(out)
    code, out = _late_run(tmp_path, checkout, monkeypatch, "--trust-commit-time")
    assert code == ExitCode.OK
    feedback = notes(out)
    assert "Submitted 2026-09-20 23:00 UTC (from the git commit time)" in feedback
    assert "the student's claim, not a time GitHub recorded" in feedback


def test_the_event_gives_githubs_time_never_the_commits():
    from rnngrade.ci.when import event_time, parse_submitted_at

    utc = dt.timezone.utc
    assert event_time({"pull_request": {"updated_at": "2026-09-23T10:00:00Z"}}) == \
        dt.datetime(2026, 9, 23, 10, tzinfo=utc)
    push = {"pusher": {"name": "bob"}, "repository": {"pushed_at": 1790035200},
            "head_commit": {"timestamp": "2026-09-01T00:00:00+00:00"}}
    assert event_time(push) == dt.datetime(2026, 9, 22, tzinfo=utc)
    del push["repository"]
    assert event_time(push) is None  # the commit's own timestamp is never read
    for odd in ({"pull_request": {"updated_at": True}}, {"pull_request": {"updated_at": "soon"}},
                {"pull_request": {"updated_at": "9999-12-31T23:59:59-23:59"}},
                {"pull_request": "x"}, {"issue": {"number": 3}}):
        assert event_time(odd) is None
    assert parse_submitted_at("") is None and parse_submitted_at(None) is None
    assert parse_submitted_at("2026-09-22T02:00:00+02:00") == dt.datetime(2026, 9, 22, tzinfo=utc)
    assert parse_submitted_at("2026-09-22T00:00:00") == dt.datetime(2026, 9, 22, tzinfo=utc)
    for bad in ("soon", "99999999999999999999", "1969-07-20T20:17:00Z"):
        with pytest.raises(UsageError, match="--submitted-at"):
            parse_submitted_at(bad)


def test_the_grading_workflow_passes_githubs_time():
    import shlex

    import yaml

    data = yaml.safe_load((ROOT / "templates" / "workflows" / "grading.yml").read_text())
    (grade,) = [step for step in data["jobs"]["grade"]["steps"]
                if "rnngrade ci" in step.get("run", "")]
    assert grade["env"]["SUBMITTED_AT"] == ("${{ github.event.pull_request.updated_at || "
                                            "github.event.repository.pushed_at }}")
    command = shlex.split(grade["run"])
    assert command[command.index("--submitted-at") + 1] == "$SUBMITTED_AT"
    assert "--trust-commit-time" not in command


def test_a_broken_course_file_is_a_usage_error(tmp_path, checkout, capsys):
    course = tmp_path / "course.yaml"
    course.write_text("labs: [1, 2]\n")
    code = main(["ci", "--submission", str(checkout), "--out", str(tmp_path / "out"),
                 "--lab", "lab1", "--no-comment", "--inprocess", "--course", str(course)])
    assert code == ExitCode.USAGE
    assert "course.yaml" in capsys.readouterr().err

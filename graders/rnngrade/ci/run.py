"""``rnngrade ci``: grade the labs a pull request touches and post the feedback on it.

Reads the GitHub Actions environment (``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``,
``GITHUB_API_URL``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_TOKEN``); every value can be given as an
option instead. Which labs: ``--lab``, else the labs of the files the pull request changes
(GitHub API), else a ``labN`` in the pull request's title or branch name (``GITHUB_HEAD_REF``),
else in the name of the branch pushed (``GITHUB_REF_NAME``) or checked out. Finding none is exit
2 (``ExitCode.USAGE``: the run needs ``--lab``), with every place looked at. Each lab is graded from
the checkout (the lab's ``.py`` file when the student changed it, else the lab's notebook), the
reports go to ``--out/labN/``, the comment body to ``--out/pr_comment.md`` and the job summary; with
a token the comment is posted, or updated when an earlier run posted one. With a course file the
late policy applies, timed by GitHub's record of the push or pull request (``ci.when``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnngrade.ci.comment import render_pr_comment
from rnngrade.ci.github import MARKER, GitHubClient, GitHubError, commands_stopped
from rnngrade.ci.when import CLAIM, ci_timing, parse_submitted_at, timed
from rnngrade.course.config import Course, find_course
from rnngrade.course.times import TimeSource, Timing
from rnngrade.errors import ExitCode, GraderError, RnngradeError, error_line, exit_code_for
from rnngrade.labs import LABS, Lab, get_lab
from rnngrade.results.escape import log_line
from rnngrade.results.model import GradeResult, Status
from rnngrade.submission.gitmeta import checked_out_branch

_LAB_PATH = re.compile(r"^assignments/(lab\d+)/")
_LAB_WORD = re.compile(r"(?<![a-z0-9])lab[\s_-]?(\d+)(?!\d)", re.IGNORECASE)


@dataclass
class CiOptions:
    """Everything ``rnngrade ci`` needs; ``from_env`` fills it from options and the environment."""

    submission: Path = Path(".")
    labs: list[str] = field(default_factory=list)
    out: Path = Path("rnngrade-feedback")
    device: str = "auto"
    inprocess: bool = False
    token: str = ""
    event_path: Path | None = None
    repo: str = ""
    pr: int | None = None
    api_url: str = "https://api.github.com"
    summary_path: Path | None = None
    comment: bool = True
    budget: float | None = None  # seconds for one lab's submission (None: the lab's)
    course: Path | None = None  # the course file (None: course.yaml at the course root, if any)
    student: str = ""  # whose extensions apply (default: the pull request's author)
    head_ref: str = ""  # the pull request's branch when the event has none ($GITHUB_HEAD_REF)
    ref_name: str = ""  # the branch pushed ($GITHUB_REF_NAME)
    submitted_at: dt.datetime | None = None  # GitHub's time for the work (None: the event's)
    trust_commit_time: bool = False  # a commit's date may time a lab whose lateness costs points
    retries: int = 4
    backoff: float = 1.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **given: Any) -> CiOptions:
        """Options win over the environment; ``None`` means "not given"."""
        given = {k: v for k, v in given.items() if v is not None}
        event = environ.get("GITHUB_EVENT_PATH")
        summary = environ.get("GITHUB_STEP_SUMMARY")
        defaults: dict[str, Any] = {
            "token": environ.get("GITHUB_TOKEN", ""),
            "event_path": Path(event) if event else None,
            "repo": environ.get("GITHUB_REPOSITORY", ""),
            "api_url": environ.get("GITHUB_API_URL") or "https://api.github.com",
            "summary_path": Path(summary) if summary else None,
            "head_ref": environ.get("GITHUB_HEAD_REF", ""),
            "ref_name": environ.get("GITHUB_REF_NAME", ""),
            "retries": int(environ.get("RNNGRADE_CI_RETRIES", 4)),
            "backoff": float(environ.get("RNNGRADE_CI_BACKOFF", 1.0)),
        }
        return cls(**{**defaults, **given})


def read_event(path: Path | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def pr_number(event: dict[str, Any]) -> int | None:
    """The pull request of a ``pull_request``/``pull_request_target`` (or PR comment) event."""
    pull, issue = event.get("pull_request"), event.get("issue")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return pull["number"]
    if isinstance(issue, dict) and "pull_request" in issue and isinstance(issue.get("number"),
                                                                          int):
        return issue["number"]
    return None


def labs_in_paths(paths: list[str]) -> list[str]:
    """Labs of the course whose ``assignments/labN/`` folder holds one of ``paths``."""
    found = {m.group(1) for p in paths if (m := _LAB_PATH.match(p))}
    return sorted((lab for lab in found if lab in LABS), key=_lab_order)


def labs_in_text(texts: list[str]) -> list[str]:
    """Labs named in free text: ``lab2``, ``Lab 3``, ``lab_4``, ``lab-5``."""
    found = {f"lab{int(m.group(1))}" for text in texts for m in _LAB_WORD.finditer(text or "")}
    return sorted((lab for lab in found if lab in LABS), key=_lab_order)


def _lab_order(name: str) -> int:
    return int(name[3:])


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _notebook_code(data: bytes, name: str) -> str | None:
    from rnngrade.harness.source.notebook import NotebookError, notebook_source

    try:
        return _normalised(notebook_source(data.decode("utf-8-sig", "replace"), name)[0])
    except NotebookError:
        return None


def choose_submission(lab: Lab, checkout: Path) -> tuple[Path, list[str]]:
    """What to grade in a student checkout: ``<module>.py`` when it differs from the stub, else
    ``labN.ipynb`` when its code differs from the released notebook, else the (untouched) module.
    Returns the path and notes for the student."""
    from rnngrade.authoring.generate import notebook_for, stub_for

    folder = checkout / "assignments" / lab.name
    module, notebook = folder / lab.filename, folder / f"{lab.name}.ipynb"
    module_edited = module.is_file() and _normalised(module.read_text("utf-8", "replace")) \
        != _normalised(stub_for(lab).content.decode())
    notebook_edited = notebook.is_file() and _notebook_code(notebook.read_bytes(), notebook.name) \
        != _notebook_code(notebook_for(lab).content, notebook.name)
    if module_edited:
        notes = [f"graded {lab.filename}; the changes in {notebook.name} were not graded (work "
                 "in one of the two)"] if notebook_edited else []
        return module, notes
    if notebook_edited:
        return notebook, [f"graded {notebook.name}: {lab.filename} is unchanged"]
    if module.is_file():
        return module, []
    return (notebook if notebook.is_file() else folder), []


@dataclass
class LabChoice:
    """The labs to grade, how they were chosen (for the comment) and every place looked."""

    labs: list[str]
    source: str = ""
    looked: list[str] = field(default_factory=list)


def checkout_branch(checkout: Path) -> str:
    """The branch checked out in ``checkout`` ("" when detached or not a clone), read from
    ``.git/HEAD`` as hostile input (``submission.gitmeta``); git is not run."""
    return checked_out_branch(checkout)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _shown(names: list[tuple[str, str]]) -> str:
    return " and ".join(f"{what} ({log_line(value, 80)!r})" if value else f"{what} (none)"
                        for what, value in names)


def choose_labs(options: CiOptions, event: dict[str, Any], client: GitHubClient | None,
                number: int | None) -> LabChoice:
    """``--lab``; else the labs of the files the pull request changes; else a ``labN`` in its
    title or branch; else in the name of the branch pushed or checked out."""
    if options.labs:
        return LabChoice([get_lab(name).name for name in options.labs],
                         "for the labs asked for (--lab)")
    looked = []
    if client is not None and number is not None:
        files = client.pull_request_files(number)
        labs = labs_in_paths(files)
        if labs:
            return LabChoice(labs, "for the labs whose files this pull request changes")
        looked.append(f"the {len(files)} file(s) pull request #{number} changes (none under "
                      "assignments/labN/)")
    else:
        looked.append("the files the pull request changes: not asked ("
                      + ("no token (--token or GITHUB_TOKEN) or repository" if client is None
                         else "no pull request number in the event (--pr)") + ")")
    pull = _mapping(event.get("pull_request"))
    head = _mapping(pull.get("head"))
    places = [
        ([("the pull request's title", _text(pull.get("title"))),
          ("branch", _text(head.get("ref")) or options.head_ref)],
         "for the lab named in the pull request's title or branch"),
        ([("the branch pushed", _text(event.get("ref")).removeprefix("refs/heads/")
           or options.ref_name),
          ("the branch checked out", checkout_branch(options.submission))],
         "for the lab named in the branch's name"),
    ]
    for names, source in places:
        labs = labs_in_text([value for _, value in names])
        if labs:
            return LabChoice(labs, source, looked)
        looked.append(_shown(names))
    return LabChoice([], "", looked)


def collect_lab(lab: Lab, checkout: Path, into: Path) -> list[str]:
    """Copy the checkout's ``assignments/<lab>/`` into the private folder ``into`` (same layout)
    without following a link out of the checkout (``submission.tree``); notes say what was left
    out. Raises TreeError when the folder is a link or over the limits."""
    from rnngrade.submission.tree import read_tree_below

    tree = read_tree_below(checkout, ("assignments", lab.name))
    if tree is None:
        return []
    folder = into / "assignments" / lab.name
    folder.mkdir(parents=True)
    for rel, data in tree.files.items():
        target = folder.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return tree.notes


def grade_lab(lab: Lab, options: CiOptions, course: Course | None = None,
              student: str = "", timing: Timing | None = None) -> GradeResult:
    """Grade one lab of the checkout and write its reports; with a course file the late policy
    applies, timed by ``timing`` (``ci.when.ci_timing``; None: worked out here)."""
    import tempfile

    from rnngrade.grading.devices import resolve_device
    from rnngrade.grading.engine import grade
    from rnngrade.grading.lab_assets import load_lab_assets
    from rnngrade.grading.scoring import not_graded
    from rnngrade.results.render import write_reports
    from rnngrade.submission.tree import TreeError

    with tempfile.TemporaryDirectory(prefix="rnngrade-ci-") as tmp:
        try:
            collected = collect_lab(lab, options.submission, Path(tmp))
        except TreeError as exc:
            assets = load_lab_assets(lab.name)
            result = not_graded(lab, assets.rubric, lab.name, resolve_device(options.device),
                                str(exc), grader_version=assets.version)
        else:
            path, notes = choose_submission(lab, Path(tmp))
            result = grade(path, lab.name, device=options.device, inprocess=options.inprocess,
                           budget=options.budget)
            result.notes = collected + notes + result.notes
    if course is not None and result.status != Status.GRADER_ERROR:
        if timing is None:
            timing = ci_timing(options.submitted_at, read_event(options.event_path),
                               options.submission)
        result = _with_deadline(result, lab, course, student, timing)
    write_reports(result, options.out / lab.name)
    return result


def _with_deadline(result: GradeResult, lab: Lab, course: Course, student: str,
                   timing: Timing) -> GradeResult:
    """The result with the course's late policy applied and explained (see course.adjust); a
    time from the commit is marked as the student's claim."""
    from rnngrade.course.adjust import adjust, lateness

    when = timing.time
    shown, _ = adjust(result, [], lateness(course, student, lab.name, when), course.plan(lab.name))
    if when is not None and when.source is TimeSource.GIT:
        shown.notes.append(CLAIM)
    elif when is None and timing.note:
        shown.notes.append(f"No submission time: {timing.note}.")
    return shown


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def run_ci(options: CiOptions, say: Callable[[str], None] = print,
           warn: Callable[[str], None] = _stderr) -> int:
    """Grade, write reports, job summary and comment body, post the comment; the exit code."""
    event = read_event(options.event_path)
    number = options.pr if options.pr is not None else pr_number(event)
    sha = ((event.get("pull_request") or {}).get("head") or {}).get("sha", "")
    author = ((event.get("pull_request") or {}).get("user") or {}).get("login")
    try:
        course = find_course(options.course)
    except RnngradeError as exc:
        warn(f"rnngrade ci: {error_line(exc)}")
        return exit_code_for(exc)
    student = options.student or str(author or "")
    client = None
    if options.token and options.repo:
        client = GitHubClient(options.api_url, options.repo, options.token,
                              retries=options.retries, backoff=options.backoff)
    try:
        choice = choose_labs(options, event, client, number)
    except GitHubError as exc:
        warn(f"rnngrade ci: cannot list the files of pull request #{number}: {exc}")
        return ExitCode.GITHUB
    timing, refused = timed(course, choice.labs, options.submitted_at, event, options.submission,
                            options.trust_commit_time)
    if refused:
        warn(f"rnngrade ci: {refused}")
        return ExitCode.USAGE
    results: list[GradeResult] = []
    problems: list[tuple[str, str]] = []
    code = ExitCode.OK
    labs, source = choice.labs, choice.source
    for name in labs:
        lab = get_lab(name)
        if not lab.rubric_path().exists():
            problems.append((name, "no hidden tests for this lab yet: run its public tests"))
            continue
        try:
            result = grade_lab(lab, options, course, student, timing)
        except Exception as exc:  # noqa: BLE001 - the grader or a renderer failed: never exit 1
            problems.append((name, GraderError.STUDENT_MESSAGE))
            if not isinstance(exc, GraderError):
                warn(traceback.format_exc().rstrip())
            warn(f"rnngrade ci: {name}: {error_line(GraderError(str(exc)))}")
            code = ExitCode.GRADER
            continue
        if result.status == Status.GRADER_ERROR:  # reports written; the comment says why
            problems.append((name, GraderError.STUDENT_MESSAGE))
            detail = result.grader_detail.strip()
            if "\n" in detail:
                warn(detail)
            first = (detail.splitlines() or [""])[0]
            warn(f"rnngrade ci: {name}: {error_line(GraderError(first))}")
            code = ExitCode.GRADER
            continue
        results.append(result)
        say(f"{name}: {result.score:g}/{result.max_score:g}"
            + (f" (not graded: {log_line(result.error)})" if result.error else ""))
    body = render_pr_comment(results, problems, sha=sha, source=source)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "pr_comment.md").write_text(body, encoding="utf-8")
    if options.summary_path is not None:
        with options.summary_path.open("a", encoding="utf-8") as summary:
            summary.write(body.replace(MARKER + "\n", "", 1).rstrip() + "\n\n")
    if not labs:
        warn("rnngrade ci: no lab to grade; looked at " + "; ".join(choice.looked)
             + ". Name the lab with --lab labN, or in the branch's name (labN, labN-fix) or "
               "the pull request's title")
        return ExitCode.USAGE
    if not options.comment:
        return code
    return _post(client, number, body, author, options, say, warn) or code


def _post(client: GitHubClient | None, number: int | None, body: str, author: str | None,
          options: CiOptions, say: Callable[[str], None], warn: Callable[[str], None]) -> int:
    """Post (or update) the comment; 0, or the exit code of GitHub's refusal."""
    if client is None or number is None:
        missing = "no token (--token or GITHUB_TOKEN) or repository" if client is None \
            else "no pull request number in the event (--pr)"
        say(f"rnngrade ci: no comment posted ({missing}); the body is in "
            f"{options.out / 'pr_comment.md'}")
        return 0
    try:
        action, comment = client.upsert_comment(number, body, not_by=author)
    except GitHubError as exc:  # GitHubAuthError included: its message says what to fix
        warn(f"rnngrade ci: cannot comment on pull request #{number}: {exc}")
        return ExitCode.GITHUB
    say(f"{action} the feedback comment on pull request #{number}: "
        f"{(comment or {}).get('html_url', '')}".rstrip(": "))
    return 0


def main_from_args(args: Any, environ: Mapping[str, str] | None = None) -> int:
    """``rnngrade ci`` with argparse's namespace."""
    from rnngrade.labs import UnknownLabError

    try:
        submitted_at = parse_submitted_at(getattr(args, "submitted_at", None))
    except RnngradeError as exc:
        _stderr(f"rnngrade: {error_line(exc)}")
        return exit_code_for(exc)
    options = CiOptions.from_env(
        os.environ if environ is None else environ, submission=args.submission,
        labs=args.lab, out=args.out, device=args.device, inprocess=args.inprocess,
        token=args.token, event_path=args.event, repo=args.repo, pr=args.pr,
        api_url=args.api_url, summary_path=args.summary, comment=not args.no_comment,
        budget=getattr(args, "budget", None), course=getattr(args, "course", None),
        student=getattr(args, "student", None), submitted_at=submitted_at,
        trust_commit_time=getattr(args, "trust_commit_time", None))
    try:
        for name in options.labs:
            get_lab(name)
    except UnknownLabError as exc:
        _stderr(f"rnngrade: {exc}")
        return ExitCode.USAGE
    in_actions = (os.environ if environ is None else environ).get("GITHUB_ACTIONS") == "true"
    with commands_stopped(lambda line: print(line, flush=True), in_actions):
        return run_ci(options)

"""The ``rnngrade`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rnngrade import __version__
from rnngrade.errors import ExitCode, error_line, exit_code_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from rnngrade.course.apply import CoursePass
    from rnngrade.course.config import Course
    from rnngrade.gradebook.batch import BatchReport
    from rnngrade.gradebook.roster import Roster
    from rnngrade.labs import Lab
    from rnngrade.results.sanitize import Cleaned

LAB_HELP = "the lab: its folder's name under graders/suites/"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnngrade", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rnngrade {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade one submission into a folder of reports")
    grade.add_argument("submission", type=Path, help="a folder, .py, .ipynb or .zip")
    grade.add_argument("--lab", required=True, help=LAB_HELP)
    grade.add_argument("--out", type=Path, required=True, help="folder for the reports")
    grade.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    grade.add_argument("--inprocess", action="store_true",
                       help="run the student code in this process (debugging; no protection)")
    _budget_option(grade)
    grade.add_argument("--no-outcome", action="store_true",
                       help="leave out the tests graded by outcome (training runs): listed as "
                            "not run, not counted (for a whole course: outcome: false in the "
                            "lab's rubric.yaml)")

    generate = sub.add_parser("generate", help="regenerate stubs and public test vectors (and, "
                              "for every lab, docs/AUTHORING.md's contract tables)")
    generate.add_argument("--lab", action="append", help="only these labs (repeatable)")
    generate.add_argument("--check", action="store_true",
                          help="write nothing; exit 1 when a generated file is stale")

    validate = sub.add_parser("validate", help="test the tests: reference full, stub 0, "
                                                "mutants caught and named, tolerance margins")
    validate.add_argument("--lab", action="append", help="only these labs (repeatable)")
    validate.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    validate.add_argument("--sandbox", action="store_true",
                          help="run every submission in the sandbox (slower)")
    validate.add_argument("--full", action="store_true",
                          help="tests graded by outcome: the reference on seeds 0-4 even where "
                               "that costs more than 2 CPU-minutes per lab")

    release = sub.add_parser("release", help="build the student repository: stubs, notebooks, "
                                              "public tests and vectors, no solutions")
    release.add_argument("--out", type=Path, required=True,
                         help="an empty folder, or a previous release to replace")
    release.add_argument("--lab", action="append",
                         help="only these labs (repeatable; default: every lab with public tests)")
    release.add_argument("--torch-version", default=None,
                         help="the torch version students install (default: the course's pin)")
    release.add_argument("--grading-workflow", action="store_true",
                         help="also ship .github/workflows/grading.yml (hidden grading of PRs)")
    _course_option(release)
    release.add_argument("--force", action="store_true",
                         help="release even a lab whose release date is still to come, or "
                              "whose shipped code answers a lab still open")

    ci = sub.add_parser("ci", help="grade the labs a pull request changes and comment on it "
                                   "(GitHub Actions)")
    ci.add_argument("--submission", type=Path, default=Path("."),
                    help="the checkout of the student repository (default: .)")
    ci.add_argument("--lab", action="append", help="grade these labs (default: from the PR)")
    ci.add_argument("--out", type=Path, default=Path("rnngrade-feedback"),
                    help="folder for the reports and pr_comment.md")
    ci.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    ci.add_argument("--inprocess", action="store_true",
                    help="run the student code in this process (debugging; no protection)")
    ci.add_argument("--token", help="GitHub token (default: $GITHUB_TOKEN)")
    ci.add_argument("--event", type=Path, help="event JSON (default: $GITHUB_EVENT_PATH)")
    ci.add_argument("--repo", help="owner/name (default: $GITHUB_REPOSITORY)")
    ci.add_argument("--pr", type=int, help="pull request number (default: from the event)")
    ci.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or api.github.com)")
    ci.add_argument("--summary", type=Path, help="job summary file (default: $GITHUB_STEP_SUMMARY)")
    ci.add_argument("--no-comment", action="store_true", help="write the comment, do not post it")
    _course_option(ci)
    ci.add_argument("--student", help="whose extensions in the course file apply (default: the "
                                      "pull request's author)")
    ci.add_argument("--submitted-at", metavar="TIME",
                    help="when GitHub received the work (ISO time or seconds since 1970; default: "
                         "the event's pull_request.updated_at or repository.pushed_at)")
    ci.add_argument("--trust-commit-time", action="store_true",
                    help="without a time from GitHub, time a lab with a late penalty by HEAD's "
                         "commit date (the student's machine sets it)")
    _budget_option(ci)

    batch = sub.add_parser("batch", help="grade a folder of submissions (one per student) into "
                                         "a resumable gradebook, grades.csv and summary.html")
    batch.add_argument("submissions", type=Path, nargs="+",
                       help="folder(s) with one entry per student: a folder, .py, .ipynb or "
                            ".zip named after the student")
    batch.add_argument("--lab", required=True, help=LAB_HELP)
    batch.add_argument("--out", type=Path, required=True,
                       help="folder for the gradebook, the exports and students/<id>/ reports")
    batch.add_argument("-j", "--jobs", type=int, default=None,
                       help="local grading processes (default: one per CPU)")
    batch.add_argument("--executor", default="local", choices=["local", "dask"])
    batch.add_argument("--scheduler", help="Dask scheduler address for --executor dask")
    batch.add_argument("--regrade", action="store_true",
                       help="grade every submission again, even when unchanged")
    batch.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    batch.add_argument("--inprocess", action="store_true",
                       help="run student code in the grading processes (no protection)")
    batch.add_argument("--timeout", type=float, default=None,
                       help="seconds one whole submission may take (local executor; "
                            "default 900)")
    batch.add_argument("--no-outcome", action="store_true",
                       help="leave out the tests graded by outcome (training runs): listed as "
                            "not run, not counted; a later batch without it grades them again")
    batch.add_argument("--quiet", action="store_true", help="no progress bar")
    batch.add_argument("--only", nargs="+", metavar="ID",
                       help="grade just these students again (the others are left as they are)")
    batch.add_argument("--drop-overrides", action="store_true",
                       help="the regraded students lose the staff's overrides (kept otherwise)")
    _course_option(batch)
    batch.add_argument("--times-from", default="auto", choices=["auto", "manifest", "git",
                                                                "files"],
                       help="where submission times come from, for the course file's due "
                            "dates: auto (default) the submissions folder's .submissions.json, "
                            "else a git clone's HEAD commit time; manifest or git: only that "
                            "one; files: as auto, then the files' modification times (a copy "
                            "or an unzip resets them: a class whose file times look copied is "
                            "warned about). With a late penalty, entries without a time stop "
                            "the batch before grading (exit 2)")
    _budget_option(batch)
    _roster_option(batch)
    _gradescope_parsers(sub)
    _export_parser(sub)
    _override_parser(sub)
    _similarity_parser(sub)
    return parser


def _course_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", type=Path, default=None, metavar="FILE",
                        help="the course file: release and due dates, late policy, extensions "
                             "(default: course.yaml at the course root, if there is one)")


def _score(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of points: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError("the score must be a finite number of points")
    return value


def _override_parser(sub: argparse._SubParsersAction) -> None:
    override = sub.add_parser("override", help="set a student's score for a lab or one test, "
                                               "with a comment (kept across regrades)")
    override.add_argument("student", help="the student id (as in grades.csv)")
    override.add_argument("--lab", required=True, help=LAB_HELP)
    override.add_argument("--test", default="", help="one test's name (default: the lab's total)")
    points = override.add_mutually_exclusive_group(required=True)
    points.add_argument("--score", type=_score, metavar="POINTS",
                        help="the points to give, in the course's points (what the lab counts "
                             "in the course file, as grades.csv and the summary show them)")
    points.add_argument("--rubric-points", type=_score, metavar="POINTS",
                        help="the points to give, in the lab rubric's points (as the tests in "
                             "the feedback show them)")
    override.add_argument("--comment", required=True, help="why (the student reads it)")
    override.add_argument("--out", type=Path, required=True,
                          help="the batch's output folder (with gradebook.sqlite)")
    override.add_argument("--by", default="", help="who decided (default: your user name)")
    _course_option(override)


def _similarity_parser(sub: argparse._SubParsersAction) -> None:
    from rnngrade.similarity import DEFAULT_SECONDS, DEFAULT_THRESHOLD, DEFAULT_TOP

    similarity = sub.add_parser("similarity", help="rank pairs of submissions by shared code "
                                                   "(copydetect) into an HTML report")
    similarity.add_argument("submissions", type=Path, nargs="+",
                            help="folder(s) with one entry per student, as for batch")
    similarity.add_argument("--lab", required=True, help=LAB_HELP)
    similarity.add_argument("--out", type=Path, required=True,
                            help="folder for the report (OUT/labN/similarity under a batch's "
                                 "OUT links it from that lab's summary.html)")
    similarity.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                            help="list pairs where one shares at least this fraction of its "
                                 f"code with the other (default {DEFAULT_THRESHOLD})")
    similarity.add_argument("--top", type=int, default=DEFAULT_TOP,
                            help=f"at most this many pairs side by side (default {DEFAULT_TOP})")
    similarity.add_argument("--budget", type=_seconds, default=DEFAULT_SECONDS,
                            metavar="SECONDS",
                            help="time for the whole comparison; the submissions and pairs "
                                 f"left when it runs out are listed (default {DEFAULT_SECONDS:g})")
    _course_option(similarity)

def _roster_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--roster", type=Path, default=None, metavar="CSV",
                        help="the class roster (id, name, email, SIS id, section): students "
                             "without a submission count as missing, entries not on it are "
                             "flagged (default: the roster an earlier batch kept in --out)")


def _export_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="the gradebook of a batch folder in an LMS's import "
                                           "format (Canvas, Moodle; Gradescope's roster)")
    export.add_argument("folder", type=Path, help="the --out folder of `rnngrade batch`")
    # not argparse choices: a retired format name gets a message naming its successor (lms.py)
    export.add_argument("--format", required=True,
                        metavar="{canvas,moodle,gradescope-roster}",
                        help="canvas or moodle: scores per lab; gradescope-roster: Gradescope's "
                             "roster upload (Gradescope imports no scores from CSV)")
    export.add_argument("--out", type=Path, required=True, help="the CSV file to write")
    export.add_argument("--lab", action="append",
                        help="only these labs (repeatable; default: every lab graded)")
    _roster_option(export)
    _course_option(export)


def _gradescope_parsers(sub: argparse._SubParsersAction) -> None:
    bundle = sub.add_parser("gradescope", help="build one lab's Gradescope autograder "
                                               "(autograder.zip: setup.sh, run_autograder)")
    bundle.add_argument("--lab", required=True, help=LAB_HELP)
    bundle.add_argument("--out", type=Path, required=True, help="folder for autograder.zip")
    bundle.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"],
                        help="the device run_autograder grades on (default: auto)")
    bundle.add_argument("--torch-version", default=None,
                        help="the torch version setup.sh installs (default: the course's pin)")
    bundle.add_argument("--inprocess", action="store_true",
                        help="grade in the grader's process inside Gradescope (NO protection "
                             "from student code; only for containers that refuse the sandbox)")

    run = sub.add_parser("gradescope-run", help="inside Gradescope (run_autograder calls it): "
                                                "grade $AUTOGRADER_ROOT/submission into "
                                                "$AUTOGRADER_ROOT/results/results.json")
    run.add_argument("--lab", required=True, help=LAB_HELP)
    run.add_argument("--root", type=Path, default=None,
                     help="the autograder root (default: $AUTOGRADER_ROOT or /autograder)")
    run.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    run.add_argument("--inprocess", action="store_true",
                     help="run the student code in this process (no protection)")
    _budget_option(run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("the budget must be a positive number of seconds")
    return value


def _budget_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=_seconds, default=None, metavar="SECONDS",
                        help="wall-clock seconds the student code of one whole submission may "
                             "use (default: the lab's); tests not run by then score 0")


Handler = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, Handler] = {}  # subcommand name → handler(args) -> exit code


def command(name: str) -> Callable[[Handler], Handler]:
    """Register the handler of a subcommand (its arguments are declared in build_parser)."""

    def register(function: Handler) -> Handler:
        COMMANDS[name] = function
        return function

    return register


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code (``ExitCode``), never a traceback for an error of ours."""
    args = build_parser().parse_args(argv)
    try:
        return int(COMMANDS[args.command](args))
    except KeyboardInterrupt:
        print(f"rnngrade {args.command}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - every failure maps to an exit code
        from rnngrade.errors import RnngradeError

        if not isinstance(exc, RnngradeError):  # unexpected: the instructor needs the details
            traceback.print_exc(file=sys.stderr)
        print(f"rnngrade {args.command}: {error_line(exc)}", file=sys.stderr)
        return exit_code_for(exc)


@command("grade")
def cmd_grade(args: argparse.Namespace) -> int:
    if not args.inprocess and args.submission.exists():
        # the sandbox's fork server imports what workers need while this process imports the
        # grader (it would otherwise start only when the first test runs)
        from rnngrade.labs import get_lab
        from rnngrade.sandbox.zygote.client import start_soon

        imports: tuple[str, ...] = ()
        with contextlib.suppress(Exception):  # an unknown lab is reported below
            imports = get_lab(args.lab).worker_imports
        start_soon(imports)
    from rnngrade.grading.engine import grade
    from rnngrade.results.model import Status
    from rnngrade.results.sanitize import clean

    if not args.submission.exists():
        print(f"rnngrade: {args.submission} does not exist", file=sys.stderr)
        return ExitCode.USAGE
    result = grade(args.submission, args.lab, device=args.device, inprocess=args.inprocess,
                   budget=args.budget, outcome=not args.no_outcome)
    cleaned = clean(result)  # what the submission controls, safe for this terminal too
    result = cleaned.result
    files, rendered = write_reports_or_json(cleaned, args.out)
    print(f"{result.lab}: {result.score:g}/{result.max_score:g} for {result.submission}")
    if result.status == Status.GRADER_ERROR:
        print(f"  not graded: {result.error}")
        report_grader_fault(result.grader_detail)
    elif result.error:
        print(f"  not graded: {result.error}")
    for name, path in files.items():
        print(f"  {name:<14} {path}")
    if result.status == Status.GRADER_ERROR or not rendered:
        return ExitCode.GRADER
    return ExitCode.UNLOADABLE if result.status == Status.LOAD_ERROR else ExitCode.OK


def report_grader_fault(detail: str) -> None:
    """The instructor's view of a grader fault, on stderr: the details (a traceback when the
    failure was unexpected), then the one line."""
    from rnngrade.errors import GraderError

    lines = detail.strip().splitlines() or [""]
    if len(lines) > 1:
        print(detail.rstrip(), file=sys.stderr)
    print(f"rnngrade: {error_line(GraderError(lines[0]))}", file=sys.stderr)


def write_reports_or_json(result: Cleaned, out: Path) -> tuple[dict[str, Path], bool]:
    """Every report of ``result`` and True; when a renderer fails, at least ``results.json``
    (with the failure in its instructor-only detail) and False."""
    import dataclasses

    from rnngrade.errors import RenderError
    from rnngrade.files import write_atomic
    from rnngrade.results.gradescope import results_json
    from rnngrade.results.render import write_reports

    try:
        return write_reports(result, out), True
    except Exception:  # noqa: BLE001 - a renderer is trusted code: the grader's fault
        detail = traceback.format_exc()
        print(detail.rstrip(), file=sys.stderr)
        print(f"rnngrade: {error_line(RenderError('a report could not be written'))}",
              file=sys.stderr)
        failed = dataclasses.replace(
            result.result, grader_detail=(result.result.grader_detail + "\n" + detail).strip())
        return {"results.json": write_atomic(out / "results.json", results_json(failed))}, False


@command("generate")
def cmd_generate(args: argparse.Namespace) -> int:
    from rnngrade.authoring.contract_docs import stale_contract_tables, write_contract_tables
    from rnngrade.authoring.generate import stale_files, write_generated
    from rnngrade.labs import UnknownLabError, available_labs, get_lab

    try:
        labs = [get_lab(name) for name in args.lab] if args.lab else available_labs()
    except UnknownLabError as exc:
        print(f"rnngrade: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    everything = not args.lab  # docs/AUTHORING.md's contract tables too
    if args.check:
        problems = [p for lab in labs for p in stale_files(lab)]
        problems += stale_contract_tables() if everything else []
        for problem in problems:
            print(problem)
        if problems:
            print("run `rnngrade generate` to bring them up to date")
        return ExitCode.FAILURES if problems else ExitCode.OK
    for lab in labs:
        for path in write_generated(lab):
            print(f"wrote {path}")
    for path in write_contract_tables() if everything else []:
        print(f"wrote {path}")
    return ExitCode.OK


@command("validate")
def cmd_validate(args: argparse.Namespace) -> int:
    from rnngrade.diagnosis.fairness import FairnessTally
    from rnngrade.grading.devices import resolve_device
    from rnngrade.labs import available_labs, get_lab
    from rnngrade.validate import format_report, validate_lab

    labs = [get_lab(name) for name in args.lab] if args.lab else available_labs()
    labs = [lab for lab in labs if lab.rubric_path().exists()]
    failed = []
    tally = FairnessTally()
    resolve_device(args.device)
    for lab in labs:
        report = validate_lab(lab, device=args.device, inprocess=not args.sandbox,
                              full=args.full)
        print(format_report(report), flush=True)
        print()
        tally += report.tally
        if not report.ok:
            failed.append(lab.name)
    print("\n".join(["over every known mistake of these labs:", *tally.lines(), ""]))
    if failed:
        print(f"validate: problems in {', '.join(failed)}")
        return ExitCode.FAILURES
    print(f"validate: {len(labs)} lab(s) hold: {', '.join(lab.name for lab in labs)}")
    return ExitCode.OK


@command("release")
def cmd_release(args: argparse.Namespace) -> int:
    from rnngrade.labs import get_lab
    from rnngrade.release import build_release
    from rnngrade.release.build import TORCH_VERSION

    labs = [get_lab(name) for name in args.lab] if args.lab else None
    course = _course(args)
    if course is not None and labs is None:
        labs = _labs_due_out(course)
    elif course is not None and labs is not None:
        _named_labs_due_out(course, labs, args.force)
    report = build_release(args.out, labs, torch_version=args.torch_version or TORCH_VERSION,
                           grading_workflow=args.grading_workflow, course=course,
                           force=args.force)
    for warning in report.warnings:
        print(f"warning: {warning}")
    print(f"released {', '.join(report.labs)} into {report.out}: {len(report.files)} files, "
          f"{len(report.modules)} rnngrade modules; no solution, hidden suite or mutant text")
    return ExitCode.OK


def _course(args: argparse.Namespace) -> Course | None:
    from rnngrade.course.config import find_course

    return find_course(args.course)


def _labs_due_out(course: Course) -> list[Lab]:
    """The labs whose release date has come; says which others are held back and why."""
    import datetime as dt

    from rnngrade.course.schedule import due_out
    from rnngrade.release.build import ReleaseError, default_labs

    ready, held = due_out(course, default_labs(course_root_path()),
                          dt.datetime.now(dt.timezone.utc))
    for reason in held:
        print(f"not released: {reason}")
    if not ready:
        raise ReleaseError(f"no lab's release date in {course.path} has come yet")
    return ready


def _named_labs_due_out(course: Course, labs: list[Lab], force: bool) -> None:
    """Labs named with ``--lab`` go out on their release date too: one whose date is still to
    come is refused (``ReleaseError``), or released with a warning under ``--force``."""
    import datetime as dt

    from rnngrade.course.schedule import not_yet
    from rnngrade.release.build import ReleaseError

    now = dt.datetime.now(dt.timezone.utc)
    early = [reason for lab in labs if (reason := not_yet(course, lab, now))]
    if early and not force:
        raise ReleaseError(f"not released before its release date in {course.path}: "
                           + "; ".join(early) + ". Wait for that date, or pass --force")
    for reason in early:
        print(f"warning: released before its date (--force): {reason}")


def course_root_path() -> Path:
    from rnngrade.paths import course_root

    return course_root()


@command("ci")
def cmd_ci(args: argparse.Namespace) -> int:
    from rnngrade.ci.run import main_from_args

    return main_from_args(args)


@command("batch")
def cmd_batch(args: argparse.Namespace) -> int:
    _start_workers_early(args)
    from rich.console import Console

    from rnngrade.course.batch import run_course_batch
    from rnngrade.course.times import TimesFrom
    from rnngrade.gradebook.batch import DEFAULT_TIMEOUT, BatchOptions
    from rnngrade.gradebook.console import RichProgress, print_report

    for folder in args.submissions:
        if not folder.is_dir():
            print(f"rnngrade: {folder} is not a folder of submissions", file=sys.stderr)
            return ExitCode.USAGE
    if args.jobs is not None and args.jobs < 1:
        print("rnngrade: -j needs at least 1", file=sys.stderr)
        return ExitCode.USAGE
    course = _course(args)
    roster = _load_roster(args.roster)
    _check_course_ids(course, roster, args.roster, args.out)
    options = BatchOptions(args.lab, args.out, jobs=args.jobs, executor=args.executor,
                           scheduler=args.scheduler, regrade=args.regrade, device=args.device,
                           inprocess=args.inprocess, timeout=args.timeout or DEFAULT_TIMEOUT,
                           budget=args.budget, roster=roster, only=args.only,
                           drop_overrides=args.drop_overrides, outcome=not args.no_outcome)
    console = Console() if sys.stdout.isatty() else Console(width=120)
    progress = None if args.quiet else RichProgress(Console(stderr=True), f"grading {args.lab}")
    try:
        done = run_course_batch(args.submissions, options, course,
                                TimesFrom(args.times_from), progress)
    except KeyboardInterrupt:
        print(f"rnngrade batch: interrupted; what was graded is in {args.out}, and the same "
              "command continues from there", file=sys.stderr)
        return ExitCode.INTERRUPTED
    report = done.report
    print_report(console, report, done.finals())
    print_roster_report(console, report)
    print_course(report, done.course)
    if report.grader_errors:
        from rnngrade.errors import GraderError

        failed = GraderError(f"it failed on {report.grader_errors} submission(s), recorded as "
                             "not graded (see their results.json); the next run grades them "
                             "again")
        print(f"rnngrade batch: {error_line(failed)}", file=sys.stderr)
        return ExitCode.GRADER
    return ExitCode.OK


def _start_workers_early(args: argparse.Namespace) -> None:
    """Start the local workers' fork server and zygote now, while this process imports the
    rest of the batch (nothing for another executor; nothing either when the arguments are
    refused later: ``start_early`` starts what it can and says nothing)."""
    if args.executor != "local":
        return
    from rnngrade.gradebook.executors import GradingSpec, start_early

    start_early(GradingSpec(args.lab, args.device, args.inprocess, args.budget))


def _load_roster(path: Path | None) -> Roster | None:
    from rnngrade.gradebook.roster import load_roster

    return load_roster(path) if path is not None else None


def _check_course_ids(course: Course | None, roster: Roster | None, given: Path | None,
                      out: Path) -> None:
    """With a course file and a roster (``given``, else the one a batch kept in ``out``), every
    student id of the course file must be on the roster (``course.roster_check``)."""
    from rnngrade.course.roster_check import check_course
    from rnngrade.gradebook.roster import SAVED, saved_roster

    if course is None:
        return
    if roster is None:
        roster, given = saved_roster(out), out / SAVED
    if roster is not None:
        check_course(course, roster, str(given))


def print_roster_report(console: Console, report: BatchReport) -> None:
    """After the batch table: roster students without a submission, entries not on it."""
    from rich.text import Text

    from rnngrade.results.sanitize import clean_name

    if not report.roster:
        return
    console.print(f"roster: {report.roster} student(s); {len(report.missing)} without a "
                  f"submission (counted as missing), {len(report.not_in_roster)} entr"
                  f"{'y' if len(report.not_in_roster) == 1 else 'ies'} not on the roster")
    for label, ids in (("missing", report.missing), ("not on the roster", report.not_in_roster)):
        if ids:
            shown = ", ".join(clean_name(i, 60) for i in ids[:20])
            more = f" … and {len(ids) - 20} more" if len(ids) > 20 else ""
            console.print(Text(f"  {label}: {shown}{more}"))


@command("export")
def cmd_export(args: argparse.Namespace) -> int:
    from rnngrade.course.apply import missing_policy
    from rnngrade.gradebook.lms import export
    from rnngrade.gradebook.roster import zero_for_missing
    from rnngrade.results.escape import terminal_text
    from rnngrade.results.sanitize import clean_name

    course = _course(args)
    roster = _load_roster(args.roster)
    _check_course_ids(course, roster, args.roster, args.folder)
    path, table = export(args.folder, args.format, args.out, labs=args.lab, roster=roster,
                         missing=missing_policy(course) if course else zero_for_missing)
    print(f"{args.format}: {len(table.students)} student(s) × {len(table.labs)} lab(s) "
          f"({', '.join(table.labs)}) → {terminal_text(path)}")
    if table.left_out:
        shown = ", ".join(clean_name(i, 60) for i in table.left_out[:20])
        more = f" … and {len(table.left_out) - 20} more" if len(table.left_out) > 20 else ""
        print(f"  left out, not on the roster: {shown}{more}")
    return ExitCode.OK


@command("gradescope")
def cmd_gradescope(args: argparse.Namespace) -> int:
    from rnngrade.gradescope.bundle import build_bundle
    from rnngrade.release.build import TORCH_VERSION

    bundle = build_bundle(args.lab, args.out, torch_version=args.torch_version or TORCH_VERSION,
                          device=args.device, inprocess=args.inprocess)
    print(f"{bundle.lab}: {bundle.path} ({bundle.files} files, {bundle.size / 1e6:.1f} MB)")
    print("  upload it in Gradescope: the assignment's Configure Autograder page, zip file upload")
    shown = ", ".join(f"{n} {name}" for name, n in sorted(bundle.visibility.items()))
    print(f"  tests by visibility ({bundle.lab}'s rubric.yaml): {shown}; students see the "
          "visible ones as soon as a submission is graded")
    if bundle.inprocess:
        print("  warning: built with --inprocess: student code will run unprotected, in the "
              "grader's process")
    return ExitCode.OK


@command("gradescope-run")
def cmd_gradescope_run(args: argparse.Namespace) -> int:
    from rnngrade.gradescope.runner import autograder_root, run_autograder

    root = args.root or autograder_root()
    run = run_autograder(root, args.lab, device=args.device, inprocess=args.inprocess,
                         budget=args.budget, say=lambda line: print(line, flush=True))
    return run.exit_code
def print_course(report: BatchReport, done: CoursePass) -> None:
    """What the course file and the overrides did in a batch, in a few lines."""
    from rnngrade.results.escape import terminal_text

    if report.dropped_overrides:
        print(f"dropped {report.dropped_overrides} override(s) of the regraded students "
              "(--drop-overrides)")
    regraded = {row.student for row in report.rows if not row.skipped}
    kept = sorted(s for s in done.kept_overrides if s in regraded)
    if kept:
        names = ", ".join(terminal_text(s) for s in kept)
        print(f"kept the staff's overrides of {len(kept)} student(s) ({names}); "
              "--drop-overrides drops them on a regrade")
    for item in done.stale_overrides:
        print(f"override {item.id} of {terminal_text(item.student)} names test "
              f"{terminal_text(item.test)!r}, which the result no longer has: not applied")
    if done.time_sources:
        sources = ", ".join(f"{n} from {s}" for s, n in sorted(done.time_sources.items()))
        print(f"submission times: {sources}; {len(done.late)} submission(s) late")
    for note in done.time_notes:
        print(f"submission time not used: {terminal_text(note)}")
    for warning in done.warnings:
        print(f"\nWARNING: {terminal_text(warning)}\n", file=sys.stderr)


@command("override")
def cmd_override(args: argparse.Namespace) -> int:
    from rnngrade.course.override import OverrideRequest, record_override
    from rnngrade.harness.formatting import format_points
    from rnngrade.results.escape import terminal_text

    rubric = args.rubric_points is not None
    request = OverrideRequest(args.student, args.lab, args.out,
                              args.rubric_points if rubric else args.score, args.comment,
                              test=args.test, by=args.by, course=_course(args), rubric=rubric)
    override_id, numbers, submitted = record_override(request)
    what = f"test {terminal_text(args.test)}" if args.test else args.lab
    unit = "rubric points" if rubric else "course points"
    print(f"override {override_id}: {what} of {terminal_text(args.student)} set to "
          f"{format_points(request.score)} {unit}")
    if numbers is not None and not submitted:
        print(f"  final {format_points(numbers.final_points)} / "
              f"{format_points(numbers.points_possible)} course points (no submission); "
              "grades.csv and summary.html rewritten")
    elif numbers is not None:
        print(f"  final {format_points(numbers.final_points)} / "
              f"{format_points(numbers.points_possible)} course points (as graded "
              f"{format_points(numbers.in_course(numbers.raw_score))}, late penalty "
              f"{format_points(numbers.in_course(numbers.penalty))}); feedback, grades.csv and "
              "summary.html rewritten")
    return ExitCode.OK


@command("similarity")
def cmd_similarity(args: argparse.Namespace) -> int:
    from rnngrade.authoring.generate import stub_for
    from rnngrade.labs import get_lab
    from rnngrade.results.escape import terminal_text
    from rnngrade.similarity.detect import compare, load_sources
    from rnngrade.similarity.report import write_report

    lab = get_lab(args.lab)
    if not 0 < args.threshold <= 1 or args.top < 1:
        print("rnngrade: --threshold takes a fraction in (0, 1], --top at least 1",
              file=sys.stderr)
        return ExitCode.USAGE
    sources, skipped = load_sources(args.submissions, lab)
    done = compare(lab, sources, stub_for(lab).content.decode(),
                   lab.solution_path().read_text(encoding="utf-8"), seconds=args.budget)
    done.skipped = {**skipped, **done.skipped}
    index = write_report(done, args.out, args.threshold, args.top)
    listed = sum(1 for p in done.pairs if p.score >= args.threshold)
    print(f"{lab.name}: {len(done.sources)} submissions compared, {listed} pair(s) at or above "
          f"{args.threshold:.0%}; report: {index}")
    for note in done.notes:
        print(f"  left out: {terminal_text(note)}")
    _link_from_summary(args.out, lab.name, _course(args))
    return ExitCode.OK


def _link_from_summary(report: Path, lab: str, course: Course | None) -> None:
    """Rewrite the batch's summary.html to link the report when it lies in OUT/labN/similarity
    (``course``: the course file, for the missing policy)."""
    from rnngrade.course.apply import rewrite_exports
    from rnngrade.gradebook.batch import BatchLock
    from rnngrade.gradebook.export import SIMILARITY_PAGE, lab_folder
    from rnngrade.gradebook.store import FILENAME, Gradebook

    folder = report.resolve().parent
    out = folder.parent
    if (report.resolve() != (folder / SIMILARITY_PAGE).parent or lab_folder(out, lab) != folder
            or not (out / FILENAME).is_file()):
        return
    lock = BatchLock(out)
    book = Gradebook(out / FILENAME)
    try:
        if book.current_rows(lab):
            rewrite_exports(book, lab, out, course)
            print(f"  linked from {folder / 'summary.html'}")
    finally:
        book.close()
        lock.release()


def console() -> NoReturn:
    """The ``rnngrade`` command: ``main``, then out without the interpreter's teardown.

    Freeing every module at exit (torch's above all) costs a grading command a few tenths of a
    second more than its work; nothing needs it once the output is flushed and the exit
    handlers (the sandbox's shutdown, temporary folders, child processes) have run."""
    try:
        code = main()
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    for thread in threading.enumerate():  # as the interpreter would: non-daemon threads end
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing left to say
            code = code or ExitCode.GRADER
    os._exit(int(code))


if __name__ == "__main__":
    console()

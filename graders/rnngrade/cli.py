"""The ``rnngrade`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnngrade import __version__

EXIT_OK = 0  # grading completed, whatever the score
EXIT_FAILURES = 1  # validate/generate --check found problems
EXIT_USAGE = 2  # bad arguments: unknown lab, unknown device, missing path
EXIT_UNLOADABLE = 3  # the submission could not be loaded at all (reports are still written)
EXIT_GRADER = 4  # the grader itself is broken (suite or rubric), or a device is unusable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnngrade", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rnngrade {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade one submission into a folder of reports")
    grade.add_argument("submission", type=Path, help="a folder, .py, .ipynb or .zip")
    grade.add_argument("--lab", required=True, help="lab name, e.g. lab1")
    grade.add_argument("--out", type=Path, required=True, help="folder for the reports")
    grade.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    grade.add_argument("--inprocess", action="store_true",
                       help="run the student code in this process (debugging; no protection)")

    generate = sub.add_parser("generate", help="regenerate stubs and public test vectors")
    generate.add_argument("--lab", action="append", help="only these labs (repeatable)")
    generate.add_argument("--check", action="store_true",
                          help="write nothing; exit 1 when a generated file is stale")

    validate = sub.add_parser("validate", help="test the tests: reference full, stub 0, "
                                                "mutants caught and named, tolerance margins")
    validate.add_argument("--lab", action="append", help="only these labs (repeatable)")
    validate.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    validate.add_argument("--sandbox", action="store_true",
                          help="run every submission in the sandbox (slower)")
    return parser


COMMANDS: dict = {}  # subcommand name → handler(args) -> exit code


def command(name: str):
    """Register the handler of a subcommand (its arguments are declared in build_parser)."""

    def register(function):
        COMMANDS[name] = function
        return function

    return register


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


@command("grade")
def cmd_grade(args: argparse.Namespace) -> int:
    from rnngrade.grading.engine import GradingError, grade
    from rnngrade.labs import UnknownLabError
    from rnngrade.results.render import write_reports

    if not args.submission.exists():
        print(f"rnngrade: {args.submission} does not exist", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = grade(args.submission, args.lab, device=args.device, inprocess=args.inprocess)
    except UnknownLabError as exc:
        print(f"rnngrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GradingError as exc:
        print(f"rnngrade: the grader cannot run: {exc}", file=sys.stderr)
        return EXIT_GRADER
    files = write_reports(result, args.out)
    print(f"{result.lab}: {result.score:g}/{result.max_score:g} for {result.submission}")
    if result.error:
        print(f"  not graded: {result.error}")
    for name, path in files.items():
        print(f"  {name:<14} {path}")
    return EXIT_UNLOADABLE if result.status == "load_error" else EXIT_OK


@command("generate")
def cmd_generate(args: argparse.Namespace) -> int:
    from rnngrade.authoring.generate import stale_files, write_generated
    from rnngrade.labs import UnknownLabError, available_labs, get_lab

    try:
        labs = [get_lab(name) for name in args.lab] if args.lab else available_labs()
    except UnknownLabError as exc:
        print(f"rnngrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.check:
        problems = [p for lab in labs for p in stale_files(lab)]
        for problem in problems:
            print(problem)
        if problems:
            print("run `rnngrade generate` to bring them up to date")
        return EXIT_FAILURES if problems else EXIT_OK
    for lab in labs:
        for path in write_generated(lab):
            print(f"wrote {path}")
    return EXIT_OK


@command("validate")
def cmd_validate(args: argparse.Namespace) -> int:
    from rnngrade.labs import UnknownLabError, available_labs, get_lab
    from rnngrade.validate import format_report, validate_lab

    try:
        labs = [get_lab(name) for name in args.lab] if args.lab else available_labs()
    except UnknownLabError as exc:
        print(f"rnngrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    labs = [lab for lab in labs if (lab.suite_dir() / "rubric.yaml").exists()]
    failed = []
    for lab in labs:
        report = validate_lab(lab, device=args.device, inprocess=not args.sandbox)
        print(format_report(report), flush=True)
        print()
        if not report.ok:
            failed.append(lab.name)
    if failed:
        print(f"validate: problems in {', '.join(failed)}")
        return EXIT_FAILURES
    print(f"validate: {len(labs)} lab(s) hold: {', '.join(lab.name for lab in labs)}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

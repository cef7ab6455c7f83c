"""What ``rnngrade batch`` shows on the terminal: a progress bar and a table of results (rich)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from rnngrade.gradebook.batch import BatchReport, ProgressHook, Row
from rnngrade.gradebook.store import ERROR, GRADED, GRADER_ERROR, LOAD_ERROR, TIMEOUT
from rnngrade.harness.formatting import format_points
from rnngrade.results.escape import terminal_text
from rnngrade.results.sanitize import clean_name

STATUS_STYLE: dict[str, str] = {GRADED: "green", LOAD_ERROR: "yellow", ERROR: "red", TIMEOUT: "red"}


class RateColumn(ProgressColumn):
    """Submissions per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "–/s", style="progress.data.speed")


class RichProgress(ProgressHook):
    """A rich progress bar: count, rate, elapsed time and ETA, and the last student graded."""

    def __init__(self, console: Console, label: str) -> None:
        self.console = console
        self.label = label
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
            MofNCompleteColumn(), RateColumn(), TimeElapsedColumn(), TextColumn("eta"),
            TimeRemainingColumn(), TextColumn("[dim]{task.fields[last]}"),
            console=console, transient=False)
        self.task: TaskID | None = None
        self.problems = 0

    def start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"{skipped} submission(s) unchanged since they were graded: "
                               "skipped (--regrade grades them again)")
        self.progress.start()
        self.task = self.progress.add_task(self.label, total=total, last="")

    def advance(self, student: str, status: str) -> None:
        if status != GRADED:
            self.problems += 1
        last = student if status == GRADED else f"{student} ({status})"
        # the column is a markup template: the student's name goes in escaped
        assert self.task is not None, "start() comes first"
        self.progress.update(self.task, advance=1, last=escape(clean_name(last, 40)))

    def stop(self) -> None:
        self.progress.stop()


@dataclass(frozen=True)
class Final:
    """A row's numbers as grades.csv gives them: in the course's points."""

    score: float
    possible: float
    raw: float
    penalty: float
    overrides: int

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.possible if self.possible else 0.0


def final_numbers(row: Row, finals: Mapping[str, Final]) -> Final:
    """``row``'s final score, the grader's and the late penalty, in the course's points (the
    course pass's numbers; the grader's own when it changed nothing for the student)."""
    return finals.get(row.student) or Final(row.score, row.max_score, row.score, 0.0, 0)


def print_report(console: Console, report: BatchReport, finals: Mapping[str, Final] | None = None,
                 max_rows: int = 40) -> None:
    """The final table of results (final scores, in the course's points: ``finals``, the course
    pass's numbers by student) and where the exports are."""
    table = Table(title=f"{report.lab}: {len(report.rows)} student(s), scores in course points",
                  title_justify="left", header_style="bold", show_lines=False)
    table.add_column("student", overflow="fold")
    table.add_column("status")
    table.add_column("final", justify="right")
    table.add_column("%", justify="right")
    table.add_column("as graded", justify="right")
    table.add_column("penalty", justify="right")
    table.add_column("overrides", justify="right")
    table.add_column("s", justify="right")
    table.add_column("notes", overflow="fold", max_width=60)
    shown = {row.student: final_numbers(row, finals or {}) for row in report.rows}
    rows = report.rows if len(report.rows) <= max_rows else \
        sorted(report.rows, key=lambda r: (r.status == GRADED, shown[r.student].score))[:max_rows]
    for row in sorted(rows, key=lambda r: r.student):
        final = shown[row.student]
        status = Text(row.status + (" (kept)" if row.skipped else ""),
                      style=STATUS_STYLE.get(row.status, ""))
        # Text, never a str: rich would read markup in a student's name or message
        table.add_row(Text(clean_name(row.student)), status,
                      f"{format_points(final.score)}/{format_points(final.possible)}",
                      f"{final.percent:.0f}", format_points(final.raw),
                      f"−{format_points(final.penalty)}" if final.penalty else "",
                      str(final.overrides) if final.overrides else "",
                      f"{row.seconds:.2f}", Text(clean_name(row.note, 300)))
    console.print(table)
    if len(report.rows) > max_rows:
        console.print(f"[dim]… the {max_rows} lowest of {len(report.rows)} shown; every student "
                      "is in grades.csv[/dim]")
    console.print(_counts(report))
    console.print(Text(f"gradebook    {terminal_text(report.gradebook)}"))
    for name, path in report.files.items():
        console.print(Text(f"{name:<12} {terminal_text(path)}"))
    console.print(Text(f"feedback     {terminal_text(report.out / 'students')}/<student>/"
                       "feedback.html"))


def _counts(report: BatchReport) -> str:
    """What this run did: a submission that could not be loaded is graded (it scores 0); only
    the grader's failures and time-outs are not."""
    done = [row for row in report.rows if not row.skipped]
    unloadable = sum(row.status == LOAD_ERROR for row in done)
    failed = sum(row.status in (ERROR, TIMEOUT, GRADER_ERROR) for row in done)
    rate = ""
    if report.graded:
        rate = f" ({report.rate:.1f} submissions/s"
        rate += f", {report.steady_rate:.1f}/s once started)" if report.steady_rate else ")"
    loaded = f" ({unloadable} could not be loaded: 0 points)" if unloadable else ""
    return (f"graded {len(done) - failed}{loaded}, kept {report.skipped}, not graded {failed} "
            f"in {report.seconds:.1f} s with {report.workers} {report.executor} "
            f"worker(s){rate}")

"""What ``rnngrade batch`` shows on the terminal: a progress bar and a table of results (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from rnngrade.gradebook.batch import BatchReport, ProgressHook
from rnngrade.gradebook.store import GRADED
from rnngrade.results.escape import terminal_text
from rnngrade.results.sanitize import clean_name

STATUS_STYLE = {GRADED: "green", "load_error": "yellow", "error": "red", "timeout": "red"}


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
        self.task = None
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
        self.progress.update(self.task, advance=1, last=escape(clean_name(last, 40)))

    def stop(self) -> None:
        self.progress.stop()


def print_report(console: Console, report: BatchReport, max_rows: int = 40) -> None:
    """The final table of results and where the exports are."""
    table = Table(title=f"{report.lab}: {len(report.rows)} student(s)", title_justify="left",
                  header_style="bold", show_lines=False)
    table.add_column("student", overflow="fold")
    table.add_column("status")
    table.add_column("score", justify="right")
    table.add_column("%", justify="right")
    table.add_column("s", justify="right")
    table.add_column("notes", overflow="fold", max_width=70)
    rows = report.rows if len(report.rows) <= max_rows else \
        sorted(report.rows, key=lambda r: (r.status == GRADED, r.score))[:max_rows]
    for row in sorted(rows, key=lambda r: r.student):
        percent = 100.0 * row.score / row.max_score if row.max_score else 0.0
        status = Text(row.status + (" (kept)" if row.skipped else ""),
                      style=STATUS_STYLE.get(row.status, ""))
        # Text, never a str: rich would read markup in a student's name or message
        table.add_row(Text(clean_name(row.student)), status,
                      f"{row.score:g}/{row.max_score:g}", f"{percent:.0f}",
                      f"{row.seconds:.2f}", Text(clean_name(row.note, 300)))
    console.print(table)
    if len(report.rows) > max_rows:
        console.print(f"[dim]… the {max_rows} lowest of {len(report.rows)} shown; every student "
                      "is in grades.csv[/dim]")
    rate = ""
    if report.graded:
        rate = f" ({report.rate:.1f} submissions/s"
        rate += f", {report.steady_rate:.1f}/s once started)" if report.steady_rate else ")"
    console.print(f"graded {report.graded}, kept {report.skipped}, not graded {report.errors} "
                  f"in {report.seconds:.1f} s with {report.workers} {report.executor} "
                  f"worker(s){rate}")
    console.print(Text(f"gradebook    {terminal_text(report.gradebook)}"))
    for name, path in report.files.items():
        console.print(Text(f"{name:<12} {terminal_text(path)}"))
    console.print(Text(f"feedback     {terminal_text(report.out / 'students')}/<student>/"
                       "feedback.html"))

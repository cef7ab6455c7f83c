"""The lab contract, declared once: every field of ``lab.yaml``, ``rubric.yaml`` and the course
file, the names a suite's ``mutants.py`` defines, the markers a suite may put on its tests, the
decorators of a lab's ``helpers.py``, and the case vocabulary the structural diagnosis reads.

The readers (``rnngrade.labs``, ``grading.rubric``, ``course.config``, ``diagnosis.mutants``)
take their field sets and their messages for an unknown field or a wrong value from here, and
``docs/AUTHORING.md``'s tables are rendered from it (``render_tables``; ``rnngrade generate``
writes them, ``tests/test_lab_contract.py`` fails when they differ). Plain data only: this module
imports nothing of the grader (the markers are declared in ``rnngrade.harness.markers``, on the
student side that registers them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rnngrade.harness import markers as _markers


@dataclass(frozen=True)
class Field:
    """One key of a YAML mapping: what its value must be (``expected``, as in "title must be a
    non-empty string"), whether it is required, its default as the docs show it, its meaning."""

    name: str
    expected: str
    meaning: str
    required: bool = False
    default: str = ""

    def wrong(self, where: str) -> str:
        """The message for a wrong value: ``WHERE: NAME must be EXPECTED``."""
        return f"{where}: {self.name} must be {self.expected}"


@dataclass(frozen=True)
class Section:
    """One mapping of a file (``key``: where it sits, "" for the top level) and its fields."""

    file: str
    key: str
    fields: tuple[Field, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    def __getitem__(self, name: str) -> Field:
        for declared in self.fields:
            if declared.name == name:
                return declared
        raise KeyError(name)

    def unknown(self, data: Iterable[object]) -> list[str]:
        """The keys of ``data`` this section does not declare, sorted."""
        return sorted({str(key) for key in data} - set(self.names))

    def unknown_message(self, unknown: Iterable[str]) -> str:
        """What is said of undeclared keys: "unknown field(s) a, b; the fields are ..."."""
        return (f"unknown field(s) {', '.join(unknown)}; the fields are "
                f"{', '.join(self.names)}")

    @property
    def title(self) -> str:
        return f"`{self.file}`" + (f", under `{self.key}`" if self.key else "")


@dataclass(frozen=True)
class Name:
    """A name a lab's files use: a mutant table's variable, a marker, a helper decorator."""

    name: str
    form: str  # how it is written
    meaning: str
    required: bool = False


# ---------------------------------------------------------------------------------- lab.yaml

LAB_FILE = "lab.yaml"
DEFAULT_BUDGET_SECONDS = 300.0

LAB = Section(LAB_FILE, "", (
    Field("title", "a non-empty string", "the lab's name as students see it (quote one with a "
          "colon)", required=True),
    Field("module", "a Python module name (the student's file without .py)",
          "the student's file: `assignments/labN/<module>.py`", required=True),
    Field("functions", "a non-empty list of function names",
          "the graded functions, in the order of the README", required=True),
    Field("uses_torch", "true or false",
          "false: the release's student environment has no torch", required=True),
    Field("budget_seconds", "a positive number of seconds",
          "CPU time of one submission's whole hidden suite", default="300"),
    Field("limits", "a mapping such as {call_seconds: 10}",
          "sandbox limits of every worker: any field of `rnngrade.limits.Limits` (a test may "
          "override them with the `limits` marker)", default="`Limits()`"),
    Field("worker_imports", "a list of module names such as [torch._dynamo]",
          "modules the sandbox imports once for every worker, before the student's code",
          default="[]"),
    Field("structure", "a mapping of the fields below",
          "the case and output names the structural diagnosis reads in this lab's suite",
          default="{}"),
))

STRUCTURE = Section(LAB_FILE, "structure", (
    Field("initial_state_zeroed", "a list of case names (a test's parameter ids)",
          "the cases of a test that set the initial state to zero (`a0`, `h0`): right only in "
          "those says the initial state is not used correctly", default="[]"),
    Field("previous_state_zeroed", "a list of case names (a test's parameter ids)",
          "the cases of a test whose zeroed input or weight removes the previous state's "
          "contribution (`a_prev`, `Waa`): right only in those says the recurrent term is wrong",
          default="[]"),
    Field("gates", "a mapping of gate names to {gradient, parameters}",
          "the gates of a gated cell (`forget: {gradient: dft, parameters: [dWf, dbf]}`): only "
          "one gate's parameter gradients wrong names that gate's path (`forget_gate_path`, "
          "from the name's first word)", default="{}"),
))

GATE = Section(LAB_FILE, "structure.gates.<gate>", (
    Field("gradient", "a name", "the gate's own gradient, named in the hint (`dft`)",
          required=True),
    Field("parameters", "a non-empty list of output names",
          "the gradients of the gate's parameters, as the checked result names them "
          "(`grads['dWf']` → `dWf`)", required=True),
))


@dataclass(frozen=True)
class Gate:
    """One gate of a lab's cell: its name ("update (input)"), its own gradient, and the
    gradients of its parameters."""

    name: str
    gradient: str
    parameters: tuple[str, ...]


@dataclass(frozen=True)
class Structure:
    """A lab's ``structure``: the names its structural diagnoses are read from (none: the
    diagnoses that need them say nothing)."""

    initial_state_zeroed: tuple[str, ...] = ()
    previous_state_zeroed: tuple[str, ...] = ()
    gates: tuple[Gate, ...] = ()


NO_STRUCTURE = Structure()  # a lab that declares none

# The case vocabulary every lab shares: a case named for a sequence of one time step (``T1``,
# ``T_x1``, ``B1-T1``), for the structural claim "right at T = 1 only".
SINGLE_STEP_CASE = re.compile(r"(^|[-_])T(_x)?1($|[-_])")
# An output leaf named by a key of the checked result (``grads['dWf']``): its key.
KEYED_LEAF = re.compile(r"\['([^']+)'\]$")

# ------------------------------------------------------------------------------- rubric.yaml

RUBRIC_FILE = "rubric.yaml"
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# Gradescope shows a visible test as soon as the submission is graded: the fast feedback the
# course promises. A rubric holds tests back by naming another visibility (per file or per test).
DEFAULT_VISIBILITY = "visible"

RUBRIC = Section(RUBRIC_FILE, "", (
    Field("lab", "a lab name", "the lab the rubric is for", default="the folder's name"),
    Field("tests", "a mapping of test names to entries (below)",
          "one entry per hidden test, each test of the suite has one", required=True),
    Field("visibility", f"one of {VISIBILITIES}",
          "the visibility of every entry that names none", default=DEFAULT_VISIBILITY),
    Field("outcome", "true or false",
          "false: the tests graded by outcome are not run for this course", default="true"),
))

RUBRIC_ENTRY = Section(RUBRIC_FILE, "tests.<test>", (
    Field("points", "a non-negative number", "what the test is worth", required=True),
    Field("title", "text", "the test's title in the student's report",
          default="the test's name"),
    Field("visibility", f"one of {VISIBILITIES}", "when students see the test's result",
          default="the file's `visibility`"),
))

# ------------------------------------------------------------------------------- course file

COURSE_FILE = "course.yaml"
MISSING_CHOICES = ("zero", "excused")
MAX_DAYS = 3650  # the longest extension or grace period a course file may give

# The words for a value of the course file, as the docs and every complaint about one say them.
DATE_RANGE = "between 1970 and 9998"
DATE = (f"a date, or a date and time, {DATE_RANGE} (2026-09-21 or 2026-09-21 23:59, an offset "
        "such as +02:00 optional)")
EXTENSION = (f"days (3 or '3d'), hours ('36h') or a new due date ('2026-09-25 23:59'), at most "
             f"{MAX_DAYS} days")
LAB_LIST = "a non-empty list of labs such as [labN, labM]"

COURSE = Section(COURSE_FILE, "", (
    Field("title", "text", "the course's name", default='""'),
    Field("timezone", "a time zone name such as Europe/Berlin, or UTC",
          "dates written without a UTC offset are read in it", default="UTC"),
    Field("late_policy", "a mapping of the late policy's fields", "the late policy of every lab",
          default="no penalty"),
    Field("missing", " or ".join(MISSING_CHOICES),
          "what a roster student without a submission counts as", default="zero"),
    Field("labs", "a mapping of lab names to plans", "each lab's schedule and worth",
          default="{}"),
    Field("extensions", "a mapping student → lab → extension",
          f"an extension is {EXTENSION}", default="{}"),
    Field("excused", f"a mapping student → {LAB_LIST}", "labs a student is excused from",
          default="{}"),
))

COURSE_LAB = Section(COURSE_FILE, "labs.<lab>", (
    Field("release", DATE, "when the lab is released (a bare date: the start of that day)",
          default="none"),
    Field("due", DATE, "when the lab is due (a bare date: 23:59 that day); after the release",
          default="none"),
    Field("points", "a number more than 0", "what the lab is worth in the course",
          default="its rubric's points"),
    Field("late_policy", "a mapping of the late policy's fields",
          "this lab's late policy, over the course's", default="the course's"),
    Field("missing", " or ".join(MISSING_CHOICES), "as the course's `missing`, for this lab",
          default="the course's"),
))

LATE_POLICY = Section(COURSE_FILE, "late_policy", (
    Field("penalty_per_day", "a percentage from 0 to 100",
          "percent of the lab's points lost per started day late", default="0"),
    Field("max_days", "a whole number of days (0 or more)",
          "later than this many days the submission scores 0", default="none"),
    Field("grace_minutes", f"minutes from 0 to {MAX_DAYS * 24 * 60}",
          "a submission this close after the due time counts as on time", default="0"),
))

# -------------------------------------------------------------------- mutants.py and helpers

MUTANTS_FILE = "mutants.py"
HELPERS_FILE = "helpers.py"  # optional: grader helpers run beside the student's code
PUBLIC_CASES_FILE = "public_cases.py"  # beside the reference: the public vectors' inputs
MUTANTS = Name("MUTANTS", "list[Mutant]",
               "the lab's known mistakes, each a list of edits of the reference", required=True)
INDISTINGUISHABLE = Name("INDISTINGUISHABLE", '{("a", "b"): "why"}',
                         "sets of mutants no check can tell apart, each with the reason")
MUTANT_TABLE = (MUTANTS, INDISTINGUISHABLE)

HELPER_DECORATORS = (
    Name("helper", "@helper",
         "registers `fn(module, *args, **kwargs)`, called as `proxy.helper(name, ...)`"),
    Name("function", "@function",
         "registers `fn(*args) -> callable`, a callable argument built beside the student's "
         "code (`FunctionRef`)"),
)

# Declared beside their registration on the student side (public tests use three of them).
MARKERS = tuple(Name(m.name, m.form, m.meaning) for m in _markers.MARKERS)


# ---------------------------------------------------------------------------------- the docs

SECTIONS = (LAB, STRUCTURE, GATE, RUBRIC, RUBRIC_ENTRY, COURSE, COURSE_LAB, LATE_POLICY)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def field_table(section: Section) -> str:
    """The markdown table of a section's fields."""
    rows = ["| field | value | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{f.name}` | {_cell(f.expected)} | "
             f"{'required' if f.required else _cell(f.default)} | {_cell(f.meaning)} |"
             for f in section.fields]
    return "\n".join(rows)


def name_table(names: Iterable[Name], heading: str) -> str:
    """The markdown table of declared names (``heading``: what the first column holds)."""
    rows = [f"| {heading} | written | meaning |", "|---|---|---|"]
    rows += [f"| `{n.name}`{' (required)' if n.required else ''} | `{_cell(n.form)}` | "
             f"{_cell(n.meaning)} |" for n in names]
    return "\n".join(rows)


def render_tables() -> dict[str, str]:
    """Each table of docs/AUTHORING.md by the name its markers carry."""
    tables = {f"{s.file}:{s.key or 'top'}": f"{s.title}:\n\n{field_table(s)}" for s in SECTIONS}
    tables["mutants.py"] = f"`{MUTANTS_FILE}`:\n\n{name_table(MUTANT_TABLE, 'name')}"
    tables["markers"] = ("Markers of a test (`@pytest.mark.NAME`):\n\n"
                         + name_table(MARKERS, "marker"))
    tables["helpers.py"] = ("Decorators of `helpers.py` (`from rnngrade.suite.worker import "
                            "helper, function`):\n\n" + name_table(HELPER_DECORATORS, "name"))
    return tables


_REGION = re.compile(r"(<!-- contract:(?P<name>[^ ]+) -->\n)(?P<body>.*?)(\n<!-- /contract -->)",
                     re.S)


def tables_in(text: str) -> dict[str, str]:
    """The generated tables written in a document, by name."""
    return {m.group("name"): m.group("body") for m in _REGION.finditer(text)}


def with_tables(text: str, tables: Mapping[str, str]) -> str:
    """``text`` with each marked region holding its table of ``tables``."""
    return _REGION.sub(lambda m: m.group(1) + tables.get(m.group("name"), m.group("body"))
                       + m.group(4), text)

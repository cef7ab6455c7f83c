"""One data model for grading results; every report is rendered from it.

Outcomes, statuses and failure kinds are ``str``-valued enums: they compare equal to, and
serialise as, the plain strings that ``results.json``, the gradebook and the templates use.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class _StrEnum(str, Enum):
    """An enum whose members are their string values (in JSON, templates and f-strings)."""

    def __str__(self) -> str:
        return str(self.value)


class Outcome(_StrEnum):
    """The outcome of a test or one of its cases (finer than Gradescope's passed/failed)."""

    PASSED = "passed"
    PARTIAL = "partial"  # a test only: some of its cases passed
    FAILED = "failed"
    ERROR = "error"  # the student's code raised, timed out, ... or the test could not run
    SKIPPED = "skipped"


class Status(_StrEnum):
    """What happened to a whole submission."""

    GRADED = "graded"  # every test ran (whatever the score)
    LOAD_ERROR = "load_error"  # the submission could not be loaded at all: the student's
    GRADER_ERROR = "grader_error"  # trusted code failed: not graded, never the student's fault


class EntryStatus(_StrEnum):
    """What a batch records for a student's entry: a result's ``Status``, or why the batch got
    none (``ERROR``: the grading process died; ``TIMEOUT``: the whole submission ran past the
    batch's limit)."""

    GRADED = Status.GRADED.value
    LOAD_ERROR = Status.LOAD_ERROR.value  # an empty folder, a corrupt zip, another file type
    ERROR = "error"
    TIMEOUT = "timeout"
    GRADER_ERROR = Status.GRADER_ERROR.value  # no score; the next run grades it again


class FailureKind(_StrEnum):
    """Why a case failed: the runner's kinds (``rnngrade.harness.runner.base``) plus the
    grader's own."""

    CHECK = "check"  # the student's value differs from the expected one
    EXCEPTION = "exception"
    NOT_IMPLEMENTED = "not_implemented"
    MISSING_FUNCTION = "missing_function"
    LOAD_ERROR = "load_error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    CRASH = "crash"
    EXIT = "exit"
    PROTOCOL = "protocol"
    OUTPUT_LIMIT = "output_limit"
    UNUSABLE = "grader"  # the test could not use the student's value (kept: "grader" in JSON)
    BUDGET = "budget"  # not run: the whole submission used its time budget
    TRUSTED = "trusted"  # trusted code failed (a fixture, the reference): a grader error


# The historical names, still imported by renderers and tests.
PASSED, PARTIAL, FAILED, ERROR, SKIPPED = (Outcome.PASSED, Outcome.PARTIAL, Outcome.FAILED,
                                           Outcome.ERROR, Outcome.SKIPPED)

BUDGET_MESSAGE = "not run: the submission used its time budget"


class DiagnosisSource(str, Enum):
    """Where a diagnosis comes from, most trustworthy first."""

    KNOWN_MISTAKE = "known mistake"  # the result equals a known mistake's on the same inputs
    # the first wrong value inside the function equals the reference's formula for it with one
    # small edit (a factor dropped, an operand swapped), and no other edit does
    EDIT = "edit"
    STRUCTURAL = "structural"  # which cases, outputs or time steps fail locates the mistake
    LOCALISED = "localised"  # the first of the function's own values that goes wrong
    HEURISTIC = "heuristic"  # a shape of wrongness seen in the numbers (a factor, a sign)


@dataclass(frozen=True)
class Diagnosis:
    """A named mistake with the evidence for it.

    name: the known mistake's identifier, or the pattern's ("not_carried_across_time").
    function: the student function the mistake lies in ("" when the check cannot tell).
    text: one line for the student naming the mistake.
    hint: where to look, never the answer ("" when none).
    evidence: why the grader thinks so ("right for T = 1, wrong from the second step on").
    source: a DiagnosisSource value.
    """

    name: str
    text: str
    function: str = ""
    hint: str = ""
    evidence: str = ""
    source: str = DiagnosisSource.KNOWN_MISTAKE.value

    def __str__(self) -> str:
        return self.text + (f" ({self.evidence})" if self.evidence else "")

    @property
    def is_known_mistake(self) -> bool:
        return self.source == DiagnosisSource.KNOWN_MISTAKE.value

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: Any) -> Diagnosis:
        """A Diagnosis from its dict, or from the ``"name: text"`` line older results stored."""
        if isinstance(data, Diagnosis):
            return data
        if isinstance(data, dict):
            known = {k: str(v) for k, v in data.items() if k in cls.__dataclass_fields__}
            return cls(**known)
        name, _, text = str(data).partition(": ")
        return cls(name, text or name)


@dataclass(frozen=True)
class Baseline:
    """A figure a measurement is read against: "a 5-gram model scores" 0.476."""

    label: str
    value: float


@dataclass
class Measurement:
    """What a test graded by outcome measured, and the band it had to reach.

    name: what was measured ("validation loss"); unit: "nats/char" ("" for a share).
    value: the figure (None when the run gave none: the code failed before it).
    bound: "≤", "<", "≥" or ">"; threshold: the band's edge; passed: whether value is inside.
    context: when it was measured ("after 500 updates").
    baselines: figures to read it against (a simple model, a floor no model can beat).
    device: which device produced the figure ("cpu", "cuda").
    curve, reference_curve: the student's and the reference's curve (e.g. training loss per
    update, averaged to at most 100 points), drawn side by side in feedback.html;
    curve_label names what they show.
    """

    name: str
    value: float | None
    bound: str
    threshold: float
    passed: bool
    unit: str = ""
    context: str = ""
    baselines: list[Baseline] = field(default_factory=list)
    device: str = "cpu"
    curve: list[float] = field(default_factory=list)
    reference_curve: list[float] = field(default_factory=list)
    curve_label: str = ""

    def figure(self, value: float | None) -> str:
        """A measured figure as the reports print it: "0.391", "97.7%", "1.43e+04"."""
        if value is None:
            return "no figure"
        if self.unit == "%":
            return f"{100 * value:.1f}%"
        return f"{value:.3g}" if abs(value) >= 100 or 0 < abs(value) < 1e-3 else f"{value:.3f}"

    def band(self) -> str:
        """The band's edge as written in the suite: "0.42", "5", "90%"."""
        return f"{100 * self.threshold:g}%" if self.unit == "%" else f"{self.threshold:g}"

    @property
    def text(self) -> str:
        """"validation loss 0.391 nats/char after 500 updates; needs ≤ 0.42; a 5-gram model
        scores 0.476; no model can beat 0.310"."""
        unit = f" {self.unit}" if self.unit and self.unit != "%" else ""
        head = f"{self.name} {self.figure(self.value)}{unit if self.value is not None else ''}"
        if self.context:
            head += f" {self.context}"
        parts = [head, f"needs {self.bound} {self.band()}"]
        parts += [f"{b.label} {self.figure(b.value)}" for b in self.baselines]
        return "; ".join(parts)

    @classmethod
    def from_data(cls, data: Any) -> Measurement:
        if isinstance(data, Measurement):
            return data
        known = {k: v for k, v in dict(data).items() if k in cls.__dataclass_fields__}
        known["baselines"] = [b if isinstance(b, Baseline) else Baseline(str(b["label"]),
                                                                          float(b["value"]))
                              for b in known.get("baselines", [])]
        return cls(**known)


@dataclass
class CaseResult:
    """One parametrised case of a test."""

    case: str
    outcome: Outcome
    message: str = ""
    kind: str = ""  # a FailureKind value ("" when the case passed or was skipped)
    diagnosis: list[Diagnosis] = field(default_factory=list)
    hint: str = ""
    seconds: float = 0.0


@dataclass
class TestResult:
    """One rubric entry: a test function and all its cases."""

    __test__ = False  # not a pytest test class

    name: str
    title: str
    score: float
    max_score: float
    outcome: Outcome
    visibility: str
    message: str = ""
    diagnosis: list[Diagnosis] = field(default_factory=list)
    hint: str = ""
    cases_passed: int = 0
    cases_total: int = 0
    cases_skipped: int = 0
    seconds: float = 0.0
    cases: list[CaseResult] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)  # CheckRecords, instructors only
    figures: list[dict[str, Any]] = field(default_factory=list)  # pictures (results/plots.py)
    # a test graded by outcome: what it measured against which band (shown to the student)
    measurements: list[Measurement] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASSED


@dataclass
class GradeResult:
    """A whole submission graded for one lab."""

    lab: str
    lab_title: str
    submission: str
    score: float
    max_score: float
    execution_time: float
    tests: list[TestResult]
    device: str = "cpu"
    status: Status = Status.GRADED
    error: str = ""  # why the submission was not graded (student-facing)
    notes: list[str] = field(default_factory=list)  # the grader's own notes
    # What the submission reported while it loaded (from the worker, after student code ran):
    # shown quoted, as the submission's output, never as a notice from the grader.
    student_notes: list[str] = field(default_factory=list)
    protections: dict[str, bool] = field(default_factory=dict)
    grader_version: str = ""
    graded_at: str = ""
    grader_detail: str = ""  # instructors only: the traceback of a grader error
    # instructors only: seconds of the submission's code and of the grader's own work, each
    # with its budget, and the diagnoses left out when the grader's ran out (grading/budget.py)
    timings: dict[str, float] = field(default_factory=dict)
    # where a course file scales the lab (rnngrade.course.adjust): the final score and the lab's
    # worth in the course's points, which the student's feedback leads with
    course_score: float | None = None
    course_max: float | None = None
    # instructors only: what to fix in the course files that did not stop grading (a mutant
    # that no longer applies, left out of diagnosis)
    grader_notes: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    @property
    def graded(self) -> bool:
        """Whether grading happened (a load error is graded: the submission's own fault)."""
        return self.status != Status.GRADER_ERROR

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeResult:
        tests = []
        for t in data["tests"]:
            t = dict(t)
            t["outcome"] = Outcome(t["outcome"])
            t["cases"] = [CaseResult(**{**c, "outcome": Outcome(c["outcome"]),
                                        "diagnosis": _diagnoses(c.get("diagnosis"))})
                          for c in t.get("cases", [])]
            t["diagnosis"] = _diagnoses(t.get("diagnosis"))
            t["measurements"] = [Measurement.from_data(m) for m in t.get("measurements", [])]
            tests.append(TestResult(**t))
        data = dict(data)
        data["tests"] = tests
        data["status"] = Status(data.get("status", Status.GRADED))
        return cls(**data)


def _diagnoses(data: Any) -> list[Diagnosis]:
    return [Diagnosis.from_data(d) for d in data or []]

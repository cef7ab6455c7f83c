"""One data model for grading results; every report is rendered from it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Outcomes of a test (our own, finer than Gradescope's passed/failed).
PASSED, PARTIAL, FAILED, ERROR, SKIPPED = "passed", "partial", "failed", "error", "skipped"


@dataclass
class CaseResult:
    """One parametrised case of a test."""

    case: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""
    kind: str = ""  # "check" or a StudentError kind (not_implemented, timeout, ...)
    diagnosis: list[str] = field(default_factory=list)
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
    outcome: str
    visibility: str
    message: str = ""
    diagnosis: list[str] = field(default_factory=list)
    hint: str = ""
    cases_passed: int = 0
    cases_total: int = 0
    cases_skipped: int = 0
    seconds: float = 0.0
    cases: list[CaseResult] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)  # CheckRecords, instructors only

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED


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
    status: str = "graded"  # graded | load_error
    error: str = ""  # why the submission could not be graded at all
    notes: list[str] = field(default_factory=list)  # the grader's own notes
    # What the submission reported while it loaded (from the worker, after student code ran):
    # shown quoted, as the submission's output, never as a notice from the grader.
    student_notes: list[str] = field(default_factory=list)
    protections: dict[str, bool] = field(default_factory=dict)
    grader_version: str = ""
    graded_at: str = ""

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeResult:
        tests = []
        for t in data["tests"]:
            t = dict(t)
            t["cases"] = [CaseResult(**c) for c in t.get("cases", [])]
            tests.append(TestResult(**t))
        data = dict(data)
        data["tests"] = tests
        return cls(**data)

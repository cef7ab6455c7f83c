"""One data model for grading results; every report is rendered from it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

# Outcomes of a test (our own, finer than Gradescope's passed/failed).
PASSED, PARTIAL, FAILED, ERROR, SKIPPED = "passed", "partial", "failed", "error", "skipped"


class DiagnosisSource(str, Enum):
    """Where a diagnosis comes from, most trustworthy first."""

    KNOWN_MISTAKE = "known mistake"  # the result equals a known mistake's on the same inputs
    STRUCTURAL = "structural"  # which cases, outputs or time steps fail locates the mistake
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


@dataclass
class CaseResult:
    """One parametrised case of a test."""

    case: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""
    kind: str = ""  # "check" or a StudentError kind (not_implemented, timeout, ...)
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
    outcome: str
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
    notes: list[str] = field(default_factory=list)
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
            t["cases"] = [CaseResult(**{**c, "diagnosis": _diagnoses(c.get("diagnosis"))})
                          for c in t.get("cases", [])]
            t["diagnosis"] = _diagnoses(t.get("diagnosis"))
            tests.append(TestResult(**t))
        data = dict(data)
        data["tests"] = tests
        return cls(**data)


def _diagnoses(data: Any) -> list[Diagnosis]:
    return [Diagnosis.from_data(d) for d in data or []]

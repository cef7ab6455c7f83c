"""A test's diagnosis from its cases' diagnoses: the evidence restated over the whole test."""

from __future__ import annotations

from dataclasses import replace

from rnngrade.results.model import Diagnosis


def summarise_diagnosis(diagnosis: Diagnosis, matched: int, failing: int) -> Diagnosis:
    """``diagnosis`` (seen in one case) as the diagnosis of a test where it explains ``matched``
    of the ``failing`` cases."""
    if failing <= 1:
        return diagnosis
    if diagnosis.is_known_mistake:
        evidence = (f"your results equal this mistake's on {matched} of the {failing} failing "
                    "cases")
    else:
        evidence = f"{diagnosis.evidence} (in {matched} of the {failing} failing cases)"
    return replace(diagnosis, evidence=evidence)

"""The student release: ``build_release`` writes the student repository, ``find_leaks`` audits it
for solution, hidden-suite and mutant text."""

from rnngrade.release.audit import Leak, find_leaks
from rnngrade.release.build import ReleaseError, ReleaseReport, build_release

__all__ = ["Leak", "ReleaseError", "ReleaseReport", "build_release", "find_leaks"]

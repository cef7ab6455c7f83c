"""``rnngrade batch`` for a course: the gradebook's batch, then the course pass.

The batch (``rnngrade.gradebook.batch``) grades the entries into the gradebook; the course pass
(``apply``) then applies the course file and the staff's overrides to the lab's current results
and writes the hand-back folder, all while the batch holds its output folder, before the batch
finishes with the exports (which read the pass's numbers). The submission times are found
before anything is graded: a bad manifest, or entries without a time when lateness costs
points, stop the batch there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rnngrade.course.apply import CoursePass, apply_course, missing_policy
from rnngrade.course.config import Course
from rnngrade.course.handback import FOLDER, write_handback
from rnngrade.course.times import (
    TimesFrom,
    TimeSource,
    Timing,
    find_time,
    read_manifest,
    untimed_refusal,
)
from rnngrade.gradebook.batch import (
    BatchError,
    BatchOptions,
    BatchPlan,
    BatchReport,
    ProgressHook,
    grade_batch,
    open_batch,
    plan_batch,
)
from rnngrade.gradebook.console import Final
from rnngrade.gradebook.export import lab_folder
from rnngrade.gradebook.store import Gradebook
from rnngrade.results.sanitize import clean_name


@dataclass
class CourseBatch:
    """What ``run_course_batch`` did: the batch, and the course pass over its results."""

    report: BatchReport
    course: CoursePass

    def finals(self) -> dict[str, Final]:
        """Each adjusted student's numbers as grades.csv gives them (in the course's points);
        the others keep the grader's."""
        return {student: Final(numbers.final_points, numbers.points_possible,
                               numbers.in_course(numbers.raw_score),
                               numbers.in_course(numbers.penalty), len(numbers.overrides))
                for student, numbers in self.course.adjusted.items()}


def run_course_batch(sources: list[Path], options: BatchOptions, course: Course | None,
                     times_from: TimesFrom = TimesFrom.AUTO,
                     progress: ProgressHook | None = None) -> CourseBatch:
    """Grade ``sources`` into ``options.out``, then apply ``course`` (None: the overrides
    alone) to the lab's results. Raises what ``run_batch`` raises."""
    if course is not None:
        options.missing = missing_policy(course)
    plan = plan_batch(sources, options)
    timings = _timings(course, plan, times_from)
    with open_batch(plan, progress) as run:
        grade_batch(run)
        done = finish_course(run.book, plan.lab.name, options.out, course, timings)
        run.warnings = done.warnings
    return CourseBatch(run.report, done)


def finish_course(book: Gradebook, lab: str, out: Path, course: Course | None,
                  timings: dict[str, Timing]) -> CoursePass:
    """Apply the course file and the overrides to every current result of ``lab`` (the
    students of ``timings`` at those times, the others at their recorded ones), then write the
    hand-back folder."""
    folder = lab_folder(out, lab)
    times = {student: timing.time for student, timing in timings.items()}
    done = apply_course(book, lab, lambda student: folder / "students" / student, course, times)
    done.time_notes = [f"{clean_name(student, 60)}: {timing.note}"
                       for student, timing in sorted(timings.items()) if timing.note]
    write_handback(book, lab, lambda student: folder / "students" / student, folder / FOLDER)
    return done


def _timings(course: Course | None, plan: BatchPlan, times_from: TimesFrom
             ) -> dict[str, Timing]:
    """Each entry's submission time (with a course file); refused when some have none and
    the lab's late policy could cost them points."""
    if course is None:
        return {}
    manifests = ({source: read_manifest(source) for source in plan.sources}
                 if TimeSource.MANIFEST in times_from.sources else {})
    timings = {entry.student: find_time(entry.path, entry.student,
                                        manifests.get(entry.path.parent, {}), times_from)
               for entry in plan.entries}
    refusal = untimed_refusal(course.plan(plan.lab.name), course.zone, timings, times_from)
    if refusal:
        raise BatchError(refusal)
    return timings


__all__ = ["CourseBatch", "finish_course", "run_course_batch"]

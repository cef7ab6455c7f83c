"""Tests graded by outcome: a training run whose result is measured against a band.

A hidden (or public) test says

    @pytest.mark.outcome(wall=60, cpu=120, memory="2 GiB", catches=("update_sign_flipped",))
    def test_training_reaches_band(student, reference, outcome): ...

and gets, on top of an ordinary test:

- **its own fresh worker** under its own limits (``wall``: seconds per call, ``cpu``: CPU seconds
  of the worker, ``memory``: its address space; any other ``Limits`` field by name), prepared
  before the body runs: one thread everywhere (``OMP_NUM_THREADS=1``, torch's pool, NumPy's
  BLAS) and every global generator seeded from the test's id and the outcome seed. The same
  submission therefore gets the same figures on every run and at any parallelism;
- the ``outcome`` fixture (``OutcomeRun``): ``outcome.seed`` (0 when grading; ``validate`` runs
  other seeds with ``--outcome-seed``), ``outcome.measure(...)`` to record a figure against its
  band (a ``Measurement`` in the results, shown to the student as a sentence and, with curves, a
  picture), ``outcome.reference_value(key, compute)`` for the reference's own run (computed once
  per lab version, kept on disk by ``grading.reference_cache``), ``outcome.of_trained(...)``
  for a figure the grader measures on what a run returned (the reference's measured once, and
  reused for a submission whose result is exactly the reference's), and ``outcome.verdict()``,
  which fails the test naming every band missed.

Switches: ``--no-outcome`` (``rnngrade grade --no-outcome``) or ``outcome: false`` in a lab's
``rubric.yaml`` leaves these tests out (listed as not run, with their points). In
``pytest assignments/labN`` a public outcome test runs only with ``--outcome``
(``rnngrade.harness.checks.outcome``, the student's side).
``catches`` names the known mistakes this test must catch (``rnngrade validate`` checks it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rnngrade.errors import SuiteError
from rnngrade.grading import reference_cache
from rnngrade.harness import markers
from rnngrade.harness.checks.compare import CheckFailure
from rnngrade.harness.checks.plugin import current_item, item_id, lab_of
from rnngrade.harness.checks.seeding import seed_everything, seed_from_name
from rnngrade.results.model import Baseline, Measurement
from rnngrade.results.sanitize import clean_curve

MARKER = markers.OUTCOME.name
OUTCOME_KEY = "rnngrade_outcome"  # item.user_properties: one Measurement per figure
LIMIT_NAMES = {"wall": "call_seconds", "cpu": "cpu_seconds", "memory": "memory_bytes"}
NOT_RUN = ("not run: tests graded by outcome are switched off for this course "
           "({points} points, not counted)")
_REFERENCE_VALUES = pytest.StashKey[dict]()
_BOUNDS: dict[str, Callable[[float, float], bool]] = {
    "≤": lambda v, t: v <= t, "<": lambda v, t: v < t,
    "≥": lambda v, t: v >= t, ">": lambda v, t: v > t}


@dataclass(frozen=True)
class OutcomeSpec:
    """What an ``outcome`` marker says: limit overrides and the known mistakes it catches."""

    limits: dict[str, Any]
    catches: tuple[str, ...] = ()


def outcome_spec(item: pytest.Item) -> OutcomeSpec | None:
    """The item's ``outcome`` marker, read; None for an ordinary test. SuiteError for a
    malformed one."""
    marker = next(iter(item.iter_markers(MARKER)), None)  # the closest
    if marker is None:
        return None
    if marker.args:
        raise SuiteError(f"{item.nodeid}: @pytest.mark.outcome takes keywords only, e.g. "
                         "outcome(wall=60, cpu=120)")
    kwargs = dict(marker.kwargs)
    catches = kwargs.pop("catches", ())
    if isinstance(catches, str) or not all(isinstance(c, str) for c in catches):
        raise SuiteError(f"{item.nodeid}: outcome(catches=...) takes a tuple of known "
                         "mistakes' names")
    return OutcomeSpec({LIMIT_NAMES.get(k, k): v for k, v in kwargs.items()}, tuple(catches))


def is_outcome(item: pytest.Item) -> bool:
    return next(iter(item.iter_markers(MARKER)), None) is not None


# ----------------------------------------------------------------------------- the plugin

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rnngrade")
    group.addoption("--no-outcome", action="store_true", default=False,
                    help="leave out the tests graded by outcome (training runs)")
    group.addoption("--outcome-seed", type=int, default=0,
                    help="the seed of the tests graded by outcome (grading uses 0)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REFERENCE_VALUES] = {}


def _hidden(item: pytest.Item) -> bool:
    return "suites" in Path(item.path).parts


def _switched_off(config: pytest.Config, lab: str) -> bool:
    """``--no-outcome``, or ``outcome: false`` in the lab's rubric."""
    if config.getoption("--no-outcome", default=False):
        return True
    from rnngrade.grading.keys import LAB_ASSETS

    assets = config.stash.get(LAB_ASSETS, None)
    try:
        return assets is not None and not assets(lab).rubric.outcome
    except Exception:  # noqa: BLE001 - a lab that does not load fails in its own fixtures
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every marker; skip the hidden ones when they are switched off (public ones are
    the student side's: ``rnngrade.harness.checks.outcome``)."""
    for item in items:
        if outcome_spec(item) is None or not _hidden(item):
            continue
        if _switched_off(config, lab_of(Path(item.path))):
            item.add_marker(pytest.mark.skip(reason=NOT_RUN.format(points=_points(item))))


def _points(item: pytest.Item) -> str:
    from rnngrade.grading.keys import LAB_ASSETS

    name = getattr(item, "originalname", None) or item.name
    try:
        entry = item.config.stash[LAB_ASSETS](lab_of(Path(item.path))).rubric.entries[name]
    except Exception:  # noqa: BLE001 - the rubric check reports a missing entry itself
        return "its"
    return f"{entry.points:g}"


def prepare_worker(item: pytest.Item, student: Any) -> None:
    """Before an outcome test's body: a fresh worker, one thread, every generator seeded.
    Called by ``grading.limits`` once the test's limits are in place; a submission that cannot
    load (or breaks the generators) fails the test here, as its own error."""
    seed = outcome_seed(item)
    runner = student.runner
    while runner is not None and not hasattr(runner, "restart"):
        runner = getattr(runner, "runner", None)
    if runner is not None:
        runner.restart()
    student.helper("prepare_outcome", seed)


def outcome_seed(item: pytest.Item) -> int:
    """The seed of the generators of ``item``: from its id and ``--outcome-seed``."""
    base = int(item.config.getoption("--outcome-seed", default=0) or 0)
    return seed_from_name(f"{item_id(item)}#outcome{base}")


@pytest.fixture
def outcome(request: pytest.FixtureRequest, student: Any) -> Iterable[OutcomeRun]:
    """The ``OutcomeRun`` of an outcome test (see the module docstring). In this process
    (public tests, a suite run directly) threads are pinned for the test's duration."""
    item = current_item()
    if outcome_spec(item) is None:
        raise SuiteError(f"{item.nodeid}: the outcome fixture needs @pytest.mark.outcome(...)")
    restore = _pin_here() if _in_process(student) else None
    seed_everything(outcome_seed(item))
    try:
        yield OutcomeRun(item, int(request.config.getoption("--outcome-seed", default=0) or 0),
                         _device(student) if _uses_torch(item) else "cpu")
    finally:
        if restore is not None:
            restore()


def _in_process(student: Any) -> bool:
    runner = student.runner
    while runner is not None:
        if type(runner).__name__ == "InProcessRunner":
            return True
        runner = getattr(runner, "runner", None)
    return False


def _uses_torch(item: pytest.Item) -> bool:
    """Whether the item's lab uses torch (a NumPy lab's figures always come from the CPU)."""
    from rnngrade.labs import UnknownLabError, get_lab

    try:
        return get_lab(lab_of(Path(item.path))).uses_torch
    except UnknownLabError:
        return True


def _device(student: Any) -> str:
    runner = student.runner
    while runner is not None:
        device = getattr(runner, "device", None)
        if isinstance(device, str):
            return "cuda" if device.startswith("cuda") else "cpu"
        runner = getattr(runner, "runner", None)
    return "cpu"


def _pin_here() -> Callable[[], None]:
    """One thread for torch and OpenMP in this process; returns what undoes it (BLAS threads
    are left at one: NumPy gives no portable way to read them back)."""
    from rnngrade.harness.checks.threads import pin_threads

    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    omp = os.environ.get("OMP_NUM_THREADS")
    pin_threads()

    def restore() -> None:
        if torch is not None and before is not None:
            torch.set_num_threads(before)
        if omp is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = omp

    return restore


# ------------------------------------------------------------------------ measuring a run

@dataclass
class OutcomeRun:
    """What an outcome test measures, in order; ``verdict()`` fails it for any band missed."""

    item: pytest.Item
    seed: int
    device: str
    measurements: list[Measurement] = field(default_factory=list)

    def measure(self, name: str, value: float | None, *, bound: str, threshold: float,
                unit: str = "", context: str = "",
                baselines: Sequence[tuple[str, float]] = (),
                curve: Sequence[float] = (), reference_curve: Sequence[float] = (),
                curve_label: str = "", device: str | None = None) -> Measurement:
        """Record ``value`` against the band ``bound threshold`` ("≤", "<", "≥", ">"). A value
        that is None, NaN or infinite is outside every band. Curves are averaged down to at
        most 100 points. ``device``: where the figure was computed (default: the worker's
        device; a test that runs its model on CUDA, with TF32 off, says "cuda")."""
        if bound not in _BOUNDS:
            raise SuiteError(f"{self.item.nodeid}: bound must be one of {list(_BOUNDS)}")
        figure = _finite(value)
        passed = figure is not None and _BOUNDS[bound](figure, threshold)
        m = Measurement(name=name, value=figure, bound=bound, threshold=float(threshold),
                        passed=passed, unit=unit, context=context,
                        baselines=[Baseline(label, float(v)) for label, v in baselines],
                        device=device or self.device, curve=clean_curve(curve),
                        reference_curve=clean_curve(reference_curve), curve_label=curve_label)
        self.measurements.append(m)
        self.item.user_properties.append((OUTCOME_KEY, m))
        return m

    def reference_value(self, key: Any, compute: Callable[[], Any], *,
                        shared: bool = False) -> Any:
        """``compute()`` once per lab version and ``key`` (include every input in it): the
        reference's own run, the same for every submission. Kept for the session, and on disk
        (``grading.reference_cache``) under the lab's content digest, the test's id, the
        outcome seed, ``key``, the device and the library versions when the value is plain data
        (returned as decoded from its plain form, cached or not). ``shared``: the value does not
        depend on which test asks (it draws from no global generator), so the lab's tests share
        it."""
        scope = "" if shared else item_id(self.item)
        cache = self.item.config.stash[_REFERENCE_VALUES]
        full = (lab_of(Path(self.item.path)), scope, self.seed, key)
        if full not in cache:
            disk = self._disk_key(scope, key)
            cache[full] = compute() if disk is None else reference_cache.value_of(disk, compute)
        return cache[full]

    def of_trained(self, key: Any, trained: Any, reference_trained: Any,
                   measure: Callable[[Any], Any]) -> tuple[Any, Any]:
        """``(measure(trained), measure(reference_trained))``: a figure the grader measures on
        what a training run returned, the submission's and the reference's (``reference_trained``
        as ``reference_value`` returned it). The reference's is a ``reference_value`` (computed
        once per lab version, kept on disk); a submission whose result *is* the reference's
        (``reference_cache.same``: the same types, floats bit for bit, arrays of the same dtype,
        shape, strides and bytes) gets that figure without measuring the same inputs again.
        ``measure`` must depend on its argument alone (no global generator); nothing the
        submission reports is read."""
        theirs = self.reference_value(("measured on the trained result", key),
                                      lambda: measure(reference_trained))
        if reference_cache.same(trained, reference_trained):
            return theirs, theirs
        return measure(trained), theirs

    def _disk_key(self, scope: str, key: Any) -> dict | None:
        """The on-disk key of a reference value; None without the lab's assets (no digest)."""
        from rnngrade.grading.keys import LAB_ASSETS

        assets = self.item.config.stash.get(LAB_ASSETS, None)
        if assets is None:
            return None
        lab = lab_of(Path(self.item.path))
        try:
            digest = assets(lab).digest
        except Exception:  # noqa: BLE001 - a lab that does not load fails in its own fixtures
            return None
        return reference_cache.entry_key(lab=lab, digest=digest, test=scope, seed=self.seed,
                                         key=key, device=self.device)

    def verdict(self, hint: str = "") -> None:
        """Fail the test when any measurement is outside its band, quoting each one."""
        missed = [m for m in self.measurements if not m.passed]
        if missed:
            raise CheckFailure("outside the band: " + " | ".join(m.text for m in missed),
                               hint=hint)


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def measurements_of(user_properties: Iterable[tuple[str, Any]]) -> list[Measurement]:
    """The measurements an outcome test recorded (from a report's ``user_properties``)."""
    return [Measurement.from_data(v) for k, v in user_properties if k == OUTCOME_KEY]

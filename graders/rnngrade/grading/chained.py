"""Grading a function that consumes another lab function's output, without charging it for the
other function's mistakes (the lab2 README: "a test of one function never loses points for a mistake
in another").

A backward pass reads the cache of a forward pass. When the student's own forward pass can feed
it (defined, runs, and reproduces the reference's outputs on the test's inputs), the backward pass
is graded on that cache, whatever its layout. Otherwise — and also when the backward pass fails
on its own forward's cache but would pass on a cache in the classic layout — it is graded on a
cache in the classic layout that the reference forward pass builds on the trusted side and hands
to the student's function as plain data. Either way the report says which cache was used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnngrade.diagnosis.aliasing import (
    cache_entry_names,
    describe_paths,
    shared_cache_diagnosis,
    shared_cache_groups,
)
from rnngrade.errors import GraderError
from rnngrade.grading.keys import LAB_ASSETS
from rnngrade.harness.checks.compare import CheckFailure
from rnngrade.harness.checks.gradcheck import (
    DIRECTIONAL_RTOL,
    DIRECTIONS,
    OutputLoss,
    central_differences,
    directional_differences,
    directional_error,
    locate,
    random_directions,
    relative_error,
    sample_indices,
)
from rnngrade.harness.checks.structure import compare_tree
from rnngrade.harness.checks.tolerance import Tolerance, tolerance_for
from rnngrade.harness.runner.base import (
    EXCEPTION,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    StudentError,
)
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy

NOTE_KEY = "rnngrade_note"  # a user property: a sentence for the report's notes

# Failures after which the backward pass is worth a second try on a classic cache (a time or
# memory limit would only be hit again).
_RETRIED = (EXCEPTION, NOT_IMPLEMENTED)


def add_note(text: str) -> None:
    """A sentence for the report's notes, from the running test (shown once per submission)."""
    from rnngrade.harness.checks.plugin import current_item

    item = current_item()
    if (NOTE_KEY, text) not in item.user_properties:
        item.user_properties.append((NOTE_KEY, text))


def reference_module(lab: str) -> Any:
    """The lab's reference solution, as the running session loaded it (trusted side)."""
    from rnngrade.harness.checks.plugin import current_item

    return current_item().config.stash[LAB_ASSETS](lab).reference


def trusted_value(what: str, args: tuple, extra: Any, run: Callable[[], Any]) -> Any:
    """``run()``, a computation on the trusted side that depends only on ``args`` and ``extra``
    (plain data) and the lab's files, named by ``what``; memoised across submissions when the
    session keeps a memo, and kept on disk with it for the next grading process of the same
    lab version (``grading/memo.py``). The value is shared with the memo: the caller only
    reads it."""
    from rnngrade.grading.memo import EXPECTATION_MEMO
    from rnngrade.harness.checks.plugin import current_item

    try:
        memo = current_item().config.stash.get(EXPECTATION_MEMO, None)
    except IndexError:  # called outside a running test: nothing to keep it in
        memo = None
    if memo is None:
        return run()
    return memo.compute(memo.key(what, None, args, extra), "reference", run, shared=True)


def reference_call(lab: str, function: str, args: tuple) -> Any:
    """``function(*args)`` of the lab's reference (trusted side), memoised as ``trusted_value``
    says: only read."""
    return trusted_value(f"{function} of the reference", args, lab,
                         lambda: getattr(reference_module(lab), function)(*args))


def reference_differences(lab: str, loss: OutputLoss, args: tuple, where: list,
                          directional: bool = False) -> list[np.ndarray]:
    """``central_differences`` (``directional_differences`` when ``directional``) through the
    lab's reference (trusted side), memoised when the session keeps a memo. Found through the
    running item, not captured: a probe that calls this stays digestible, so its own results
    are memoised too."""
    differences = directional_differences if directional else central_differences

    def run() -> list[np.ndarray]:
        return differences(ModuleProxy(InProcessRunner(reference_module(lab))), loss, args,
                           where)

    what = "directional" if directional else "central"
    return trusted_value(f"{what} differences of the reference", args, (lab, loss, where), run)


def expect_distinct_caches(lab: str, function: str, result: Any, index: int, args: tuple,
                           cell: str) -> None:
    """Fail when the caches a student's ``function`` returned (item ``index`` of ``result``, on
    ``args``) hold one array, or views of one memory, where the course's ``function`` caches
    distinct arrays with different values (``diagnosis/aliasing.py``: only with the classic
    layout, and every other cached array right). ``cell``: the function whose cache tuple names
    the entries of each step's cache. Raised from a probe, the failure goes through the checker's
    retry with stand-ins, so a ``cell`` that writes into its argument costs ``function``
    nothing."""
    if not isinstance(result, tuple | list) or not -len(result) <= index < len(result):
        return  # the checks of the outputs say what is wrong
    # not memoised: a stored copy would not keep views of one memory as the reference made them
    theirs = getattr(reference_module(lab), function)(*args)[index]
    tol = tolerance_for(*args)
    groups = shared_cache_groups(result[index], theirs, tol.atol, tol.rtol)
    if not groups:
        return
    from rnngrade.labs import get_lab

    try:
        source = get_lab(lab).solution_path().read_text(encoding="utf-8")
    except Exception:  # noqa: BLE001 - no names: the paths themselves are shown
        source = ""
    names = cache_entry_names(source, cell)
    described = [describe_paths(group, names, "caches") for group in groups]
    mine, ours = result[index], theirs
    paths = [path for group in groups for path in group]
    differing = 0
    for path in paths:
        a, b = mine, ours
        for key in path:
            a, b = a[key], b[key]
        differing += not np.allclose(a, b, atol=tol.atol, rtol=tol.rtol, equal_nan=True)
    found = shared_cache_diagnosis(function, described, differing, len(paths))
    raise CheckFailure(f"check `{function}` caches: {found.text[0].lower()}{found.text[1:]}",
                       diagnosis=[found],
                       hint=found.hint)


@dataclass(frozen=True)
class Chain:
    """``backward(*args[arity:], forward(*args[:arity])[cache])``: a function fed by another.

    outputs: how many leading items of the forward's result are its checked outputs (the rest
    is the cache); names: their names in messages.
    """

    lab: str
    forward: str
    backward: str
    arity: int
    cache: int
    outputs: int

    def own(self) -> Callable[..., Any]:
        """The probe: the backward pass on the cache of the same module's forward pass."""
        forward, backward, arity, cache = self.forward, self.backward, self.arity, self.cache

        def on_own_cache(m: Any, *args: Any) -> Any:
            return m.on_cache(backward, tuple(args[arity:]), forward, tuple(args[:arity]),
                              cache)
        return on_own_cache

    def classic(self) -> Callable[..., Any]:
        """The probe: the backward pass on the cache the reference forward pass builds (the
        classic layout), handed over as data."""
        lab, forward, backward, arity, cache = (self.lab, self.forward, self.backward,
                                                self.arity, self.cache)

        def on_classic_cache(m: Any, *args: Any) -> Any:
            # memoised and shared: the module's function gets the cache as its runner copies
            # arguments (a deep copy, or the sandbox's wire), never the stored value itself
            built = reference_call(lab, forward, tuple(args[:arity]))[cache]
            return getattr(m, backward)(*args[arity:], built)
        return on_classic_cache

    def forward_problem(self, student: Any, args: tuple) -> str | None:
        """Why the student's forward pass cannot feed the backward pass on ``args``, or None."""
        forward_args = tuple(args[:self.arity])
        try:
            got = student.head(self.forward, self.outputs, *forward_args)
        except StudentError as exc:
            if exc.kind == MISSING_FUNCTION:
                return "is missing"
            if exc.kind == NOT_IMPLEMENTED:
                return "looks unfinished"
            return "raised an error"
        except Exception:  # noqa: BLE001 - a result that is not a tuple (None, an array)
            return "does not return a tuple"
        finally:
            student.calls.clear()
        want = reference_call(self.lab, self.forward, forward_args)[:self.outputs]
        try:
            compared = compare_tree(tuple(got) if isinstance(got, list) else got, tuple(want),
                                    tolerance_for(*forward_args), self.forward, None, None)
        except Exception:  # noqa: BLE001 - whatever came back cannot be compared
            return "returns something its checks cannot compare"
        if any(not c.ok for c in compared):
            return "failed its own checks"
        return None

    def note(self) -> str:
        return (f"`{self.backward}` was graded on caches in the classic layout, built by the "
                f"course's `{self.forward}`, wherever your `{self.forward}` could not feed it "
                f"(missing, raising, wrong outputs, or caches `{self.backward}` cannot read): "
                f"`{self.backward}` loses no points for a mistake in `{self.forward}`")


def expect_chained(check: Any, chain: Chain, name: str, args: tuple, **options: Any) -> Any:
    """``check.expect`` of the backward pass in ``chain``, fed as the module docstring says."""
    return run_chained(check.student, chain, args,
                       lambda probe: check.expect(name, probe, args, **options))


def run_chained(student: Any, chain: Chain, args: tuple,
                run: Callable[[Callable[..., Any]], Any],
                own: Callable[..., Any] | None = None,
                classic: Callable[..., Any] | None = None) -> Any:
    """``run(probe)`` with the probe that feeds the backward pass fairly (``own``/``classic``:
    probes to use instead of the chain's own ones, e.g. a gradient check's)."""
    own = own or chain.own()
    classic = classic or chain.classic()
    if not student.has(chain.backward):
        return run(own)  # reported as missing, with no word about caches
    problem = chain.forward_problem(student, args)
    if problem is not None:
        add_note(chain.note())
        try:
            return run(classic)
        except (CheckFailure, StudentError) as failure:
            failure.message = (f"(graded on a classic-layout cache: your `{chain.forward}` "
                               f"{problem})\n{failure.message}")
            raise
    try:
        return run(own)
    except GraderError:
        raise  # trusted code failed: the grader's fault, never retried away
    except Exception as first:
        if isinstance(first, StudentError) and first.kind not in _RETRIED:
            raise
        try:
            value = run(classic)
        except Exception:  # noqa: BLE001 - wrong on classic caches too: the first failure says why
            raise first from None
        add_note(chain.note())
        return value


def directional_agreement(m: Any, loss: OutputLoss, a: tuple, gradients: dict,
                          shapes: dict[str, tuple[int, ...]], paths: dict[str, tuple],
                          directions: dict[str, list[np.ndarray]],
                          lab: str | None) -> dict[str, float] | None:
    """Per key of ``directions``, the worst ``directional_error`` of the module's gradient
    (``gradients[key]``, of shape ``shapes[key]``, differentiating the array at ``paths[key]``
    in ``a``) along its directions, when every one is within ``DIRECTIONAL_RTOL``; None when one
    is not, or a gradient cannot be read (then the entry-wise check says what is wrong).
    lab None: differences of ``loss`` through the module ``m``; else through the lab's
    reference (trusted side, memoised)."""
    try:
        arrays = {key: np.asarray(gradients[key], dtype=np.float64) for key in directions}
    except Exception:  # noqa: BLE001 - whatever the student returned
        return None
    if any(g.shape != shapes[key] for key, g in arrays.items()):
        return None
    where = [(paths[key], directions[key]) for key in directions]
    try:
        found = (directional_differences(m, loss, a, where) if lab is None
                 else reference_differences(lab, loss, a, where, directional=True))
    except StudentError as exc:
        if exc.kind not in _RETRIED:
            raise  # a time or memory limit would only be hit again
        return None
    except CheckFailure:
        return None
    worst = {}
    for key, numeric in zip(directions, found):
        worst[key] = max(directional_error(arrays[key], v, float(d))
                         for v, d in zip(directions[key], numeric))
        if not worst[key] <= DIRECTIONAL_RTOL:  # NaN fails too
            return None
    return worst


@dataclass(frozen=True)
class GradientCheck:
    """What a gradient check compares, drawn once for every module it runs on
    (``plan_gradient_check``). share: the tolerance's allowance on 1 per unit of
    ``DIRECTIONAL_RTOL``."""

    loss: OutputLoss
    shapes: dict[str, tuple[int, ...]]
    paths: dict[str, tuple]
    picks: dict[str, list[tuple[int, ...]]]
    directions: dict[str, list[np.ndarray]]
    share: float

    def along_directions(self, m: Any, a: tuple, mine: dict, lab: str | None) -> dict | None:
        """The probe's passing result when every gradient agrees along its directions; None
        when one does not, or cannot be read (the entry-wise check then says what is wrong)."""
        worst = directional_agreement(m, self.loss, a, mine, self.shapes, self.paths,
                                      self.directions, lab)
        if worst is None:
            return None
        result = {key: np.ones(shape) for key, shape in self.shapes.items()}
        for key, error in worst.items():
            result[key][self.picks[key][0]] = 1.0 + error * self.share
        return result

    def entrywise(self, m: Any, a: tuple, mine: dict, lab: str | None) -> dict:
        """Per key, ``1 + relative error`` at the sampled entries and 1 elsewhere; a gradient
        of the wrong shape as it is."""
        usable = [key for key, shape in self.shapes.items()
                  if (value := mine[key]) is not None and np.shape(value) == shape]
        where = [(self.paths[key], self.picks[key]) for key in usable]
        numeric = {}
        if usable:  # every entry's L(θ ± ε) in one call beside the module, on copies
            found = (central_differences(m, self.loss, a, where) if lab is None
                     else reference_differences(lab, self.loss, a, where))
            numeric = dict(zip(usable, found))
        result = {}
        for key, shape in self.shapes.items():
            if key not in numeric:
                result[key] = mine[key]  # a gradient of the wrong shape is compared as it is
                continue
            value = mine[key]
            assert value is not None  # only usable keys have differences
            analytic = np.array([value[i] for i in self.picks[key]], dtype=np.float64)
            agreement = np.ones(shape)
            for index, error in zip(self.picks[key], relative_error(analytic, numeric[key])):
                agreement[index] = 1.0 + error
            result[key] = agreement
        return result


def plan_gradient_check(reference: Any, backward: Callable[..., Any], loss: OutputLoss,
                        args: tuple, targets: dict, rng: np.random.Generator, tol: Tolerance,
                        count: int = 6) -> GradientCheck:
    """The entries and directions of ``expect_gradient_check`` (its arguments), drawn from
    ``rng``: the entries first, so they are the ones the entry-wise check always sampled."""
    wanted = trusted_value("gradients of the reference", args, backward,
                           lambda: backward(reference, *args))
    picks = {}
    for key, (array, allowed) in targets.items():
        size = np.abs(np.asarray(wanted[key], dtype=np.float64))
        mask = size >= 1e-2 * size.max()  # away from zero: numerical noise stays below 1e-7
        if allowed is not None:
            mask &= allowed
        picks[key] = sample_indices(array.shape, count, rng, mask)
    directions = {key: random_directions(array.shape, DIRECTIONS, rng, allowed)
                  for key, (array, allowed) in targets.items() if picks[key]}
    return GradientCheck(loss, {key: array.shape for key, (array, _) in targets.items()},
                         {key: locate(array, args[:loss.arity])
                          for key, (array, _) in targets.items()}, picks, directions,
                         float(tol.allowed(np.float64(1.0))) / DIRECTIONAL_RTOL)


def expect_gradient_check(check: Any, reference: Any, name: str, backward: Callable[..., Any],
                          loss: OutputLoss, args: tuple, targets: dict, rng: np.random.Generator,
                          tol: Tolerance, count: int = 6, chain: Chain | None = None) -> None:
    """A backward pass agrees with central differences of the forward pass that fed it.

    backward(m, *args): the module's gradients (a dict) on the cache of its own forward pass.
    loss: the scalar L through a forward pass. targets: {gradient key: (the array inside
    ``args`` it differentiates, mask of the entries where the gradient is not structurally zero,
    or None)}. chain: when given, the backward pass is fed as ``run_chained`` decides: by the
    student's own forward pass (differences of that pass), or by the reference's (a classic
    cache, and differences of the reference's forward pass, taken on the trusted side).

    First along ``DIRECTIONS`` random unit directions per key over the whole array (zero off
    the mask; ``gradcheck.py`` says why these suffice): when every key agrees, the check passes
    and the probe returns ones with ``1 + error`` scaled to the tolerance's share at the first
    sampled entry of each key, so the check's margin is the directional one. Otherwise the
    entry-wise check decides, and the report, the stand-in retry and the diagnosis are what
    they were without the directional one: up to ``count`` entries per key are sampled where
    the reference's gradient is not (structurally or nearly) zero, the same entries for every
    module. The probe then returns, per key, ``1 + relative error`` (the labs' |a − n| /
    max(|a|, |n|, 1e-12)) at the sampled entries and 1 elsewhere, expected to be 1; a gradient
    of the wrong shape is returned as it is, so the check reports it. Running the same probe on
    a mutant reproduces the mutant's own inconsistency, so the diagnosis names the mistake,
    whether it sits in the backward or the forward pass.
    """
    sampled = plan_gradient_check(reference, backward, loss, args, targets, rng, tol, count)
    shapes = sampled.shapes

    def gradient_probe(grads_of: Callable[..., Any], lab: str | None) -> Callable[..., Any]:
        """lab None: differences through the module itself; else through the lab's reference."""
        def probe(m: Any, *a: Any) -> dict:
            grads = grads_of(m, *a)
            mine = {key: grads.get(key) if isinstance(grads, dict) else grads for key in shapes}
            passed = sampled.along_directions(m, a, mine, lab)
            return passed if passed is not None else sampled.entrywise(m, a, mine, lab)
        return probe

    def ones(*a: Any) -> dict:
        return {key: np.ones(shape) for key, shape in shapes.items()}

    if chain is None:
        check.expect(f"{name} against central differences of your forward pass "
                     "(1 + relative error)", gradient_probe(backward, None), args, oracle=ones,
                     tol=tol)
        return
    own, classic = gradient_probe(chain.own(), None), gradient_probe(chain.classic(), chain.lab)
    titles = {own: "your forward pass", classic: "the course's forward pass"}
    run_chained(check.student, chain, args,
                lambda probe: check.expect(f"{name} against central differences of "
                                           f"{titles[probe]} (1 + relative error)", probe, args,
                                           oracle=ones, tol=tol),
                own=own, classic=classic)

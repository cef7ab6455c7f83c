"""Which mutants a check can tell apart from the reference, read off the sources.

A mutant edits some top-level functions of the reference. A check whose calls never run an
edited function (directly or through the functions they use) runs the very code of the
reference on the mutant: its result is the reference's, so it cannot name that mutant, and the
diagnosis need not run it. What a check runs is the reference's own calls for it (a correct
run makes the same calls as a mutant whose edits it never reaches).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# Generic worker helpers that run exactly the module functions named in their arguments
# (``rnngrade.harness.worker_helpers``); any other helper may run anything.
NAMING_HELPERS = frozenset({"perturbed_losses", "directional_losses", "autograd", "call_each",
                            "on_cache"})

Definitions = dict[str, str]  # top-level name → ast.dump of its definition


def _definitions(tree: ast.Module) -> tuple[Definitions, str]:
    """The top-level functions and classes by name, and a dump of every other statement."""
    named: Definitions = {}
    rest = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            named[node.name] = ast.dump(node)
        else:
            rest.append(ast.dump(node))
    return named, "\n".join(rest)


def edited_names(reference: str, mutant: str) -> frozenset[str] | None:
    """The top-level functions and classes whose definitions differ between two sources; None
    when anything else differs (a module-level statement, a definition added or removed)."""
    ours, our_rest = _definitions(ast.parse(reference))
    theirs, their_rest = _definitions(ast.parse(mutant))
    if our_rest != their_rest or ours.keys() != theirs.keys():
        return None
    return frozenset(name for name in ours if ours[name] != theirs[name])


def uses(source: str) -> dict[str, frozenset[str]]:
    """For each top-level function or class, the other top-level names it mentions (called or
    not: a function passed as a value runs too)."""
    tree = ast.parse(source)
    names = {node.name for node in tree.body
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    return {node.name: frozenset(n.id for n in ast.walk(node)
                                 if isinstance(n, ast.Name) and n.id in names) - {node.name}
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def called_names(calls: Iterable[tuple[str, tuple]], known: Iterable[str]
                 ) -> frozenset[str] | None:
    """The module functions a run's calls ``(function, args)`` name (a helper as
    ``helper:<name>``), whether they returned or raised; None when a call went to a helper that
    may run functions it does not name."""
    known = frozenset(known)
    found = set()
    for function, args in calls:
        if not function.startswith("helper:"):
            found.add(function)
        elif function.removeprefix("helper:") in NAMING_HELPERS:
            found |= {a for a in args if isinstance(a, str)} & known
        else:
            return None
    return frozenset(found)


class AttemptLog:
    """A runner that notes every call it is asked to make (``calls``), then makes it on
    ``runner``: a call that raises is noted too."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.calls: list[tuple[str, tuple]] = []

    def call(self, function: str, args: tuple = (), kwargs: dict | None = None,
             **options: Any) -> Any:
        self.calls.append((function, tuple(args)))
        return self.runner.call(function, args, kwargs, **options)

    def call_helper(self, helper: str, args: tuple = (), kwargs: dict | None = None,
                    **options: Any) -> Any:
        self.calls.append((f"helper:{helper}", tuple(args)))
        return self.runner.call_helper(helper, args, kwargs, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)


@dataclass(frozen=True)
class Reach:
    """The reference's uses between top-level names, and each mutant's edited names (None:
    an edit outside any definition, which any check may see)."""

    graph: dict[str, frozenset[str]] = field(default_factory=dict)
    edited: dict[str, frozenset[str] | None] = field(default_factory=dict)

    @classmethod
    def of(cls, reference: str, mutants: dict[str, str]) -> Reach:
        """From the reference's source and each mutant's (by name)."""
        return cls(uses(reference), {name: edited_names(reference, source)
                                     for name, source in mutants.items()})

    def running(self, names: Iterable[str]) -> frozenset[str]:
        """``names`` and everything they use, transitively."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += self.graph.get(name, ())
        return frozenset(seen)

    def may_differ(self, mutant: str, called: frozenset[str] | None) -> bool:
        """Whether a run that calls ``called`` (None: unknown) may run code ``mutant`` edits."""
        edited = self.edited.get(mutant)
        if called is None or edited is None:
            return True
        return bool(edited & self.running(called))

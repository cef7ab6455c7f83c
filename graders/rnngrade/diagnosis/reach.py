"""Which mutants a check can tell apart from the reference, read off the sources.

A mutant edits some top-level functions of the reference. A check whose calls never run an
edited function (directly or through the functions they use) runs the very code of the
reference on the mutant: its result is the reference's, so it cannot name that mutant, and the
diagnosis need not run it. What a check runs is the reference's own calls for it (a correct
run makes the same calls as a mutant whose edits it never reaches).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# Generic worker helpers that run exactly the module functions named in their arguments
# (``rnngrade.harness.worker_helpers``); any other helper may run anything.
NAMING_HELPERS = frozenset({"perturbed_losses", "directional_losses", "autograd", "call_each",
                            "on_cache"})


class _Statement:
    """A top-level statement of a source: its exact text (the lines it spans, and where on the
    first and last of them it starts and ends), and its syntax tree, dumped only when asked."""

    def __init__(self, node: ast.stmt, lines: list[str]) -> None:
        first = min([node, *getattr(node, "decorator_list", ())], key=lambda n: n.lineno)
        end = node.end_lineno or node.lineno
        self.text = (tuple(lines[first.lineno - 1:end]), first.col_offset, node.end_col_offset)
        self.node = node
        self._dump: str | None = None

    def same(self, other: _Statement) -> bool:
        """Whether the two statements' trees are equal (as ``ast.dump`` writes them). The same
        text is the same tokens, hence the same tree: only differing texts are dumped."""
        return self.text == other.text or self.dump() == other.dump()

    def dump(self) -> str:
        if self._dump is None:
            self._dump = ast.dump(self.node)
        return self._dump


Definitions = dict[str, _Statement]  # top-level name → its (last) definition


def _definitions(source: str) -> tuple[Definitions, list[_Statement]]:
    """The top-level functions and classes by name, and every other top-level statement."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # the parser's lines
    named: Definitions = {}
    rest = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            named[node.name] = _Statement(node, lines)
        else:
            rest.append(_Statement(node, lines))
    return named, rest


def edited_names(reference: str, mutant: str) -> frozenset[str] | None:
    """The top-level functions and classes whose definitions differ between two sources; None
    when anything else differs (a module-level statement, a definition added or removed)."""
    return _edited(_definitions(reference), mutant)


def _edited(reference: tuple[Definitions, list[_Statement]], mutant: str
            ) -> frozenset[str] | None:
    ours, our_rest = reference
    theirs, their_rest = _definitions(mutant)
    if (len(our_rest) != len(their_rest)
            or not all(a.same(b) for a, b in zip(our_rest, their_rest))
            or ours.keys() != theirs.keys()):
        return None
    return frozenset(name for name in ours if not ours[name].same(theirs[name]))


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


class _EditedNames(Mapping[str, "frozenset[str] | None"]):
    """Each mutant's ``edited_names`` against the reference, computed on first lookup (the
    reference parsed once, on the first)."""

    def __init__(self, reference: str, mutants: dict[str, str]) -> None:
        self._reference = reference
        self._mutants = dict(mutants)
        self._parsed: tuple[Definitions, list[_Statement]] | None = None
        self._found: dict[str, frozenset[str] | None] = {}

    def __getitem__(self, name: str) -> frozenset[str] | None:
        if name not in self._found:
            source = self._mutants[name]  # KeyError: not a mutant of this lab
            if self._parsed is None:
                self._parsed = _definitions(self._reference)
            self._found[name] = _edited(self._parsed, source)
        return self._found[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mutants)

    def __len__(self) -> int:
        return len(self._mutants)


@dataclass(frozen=True)
class Reach:
    """The reference's uses between top-level names, and each mutant's edited names (None:
    an edit outside any definition, which any check may see)."""

    graph: dict[str, frozenset[str]] = field(default_factory=dict)
    edited: Mapping[str, frozenset[str] | None] = field(default_factory=dict)

    @classmethod
    def of(cls, reference: str, mutants: dict[str, str]) -> Reach:
        """From the reference's source and each mutant's (by name). A mutant's edited names
        are read off the sources when first asked for (a submission that fails no check never
        asks)."""
        return cls(uses(reference), _EditedNames(reference, mutants))

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

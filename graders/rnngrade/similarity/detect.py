"""Similarity between students' submissions of one lab, with ``copydetect``.

``copydetect`` fingerprints code by winnowing (the method of MOSS): each file is tokenised,
names and strings are abstracted away (renaming variables does not hide a copy), and the hashes of
its k-grams are sampled; two files share code where they share fingerprints. The lab's stub (the
reference with its solution blocks taken out: the code every student was given) is boilerplate,
so only what students wrote counts, and comments and docstrings are left out. Each submission
is read with the grader's own loader (the lab's module, or a notebook's code cells), never run.
"""

from __future__ import annotations

import io
import itertools
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnngrade.errors import UsageError
from rnngrade.labs import Lab

NOISE_TOKENS = 25  # k: matches shorter than this many tokens are ignored (copydetect's default)
GUARANTEE_TOKENS = 30  # any match this long is found (the winnowing window follows from it)


class SimilarityError(UsageError):
    """The similarity check cannot run (no such folder, copydetect missing)."""


@dataclass
class Source:
    student: str
    text: str
    origin: str
    fingerprint: Any = None  # a copydetect CodeFingerprint


@dataclass
class Pair:
    a: Source
    b: Source
    similarity_a: float  # share of a's own code that matches b
    similarity_b: float
    tokens: int  # matching tokens
    slices_a: list[tuple[int, int]]  # character ranges of a's text that match
    slices_b: list[tuple[int, int]]

    @property
    def score(self) -> float:
        return max(self.similarity_a, self.similarity_b)


@dataclass
class Comparison:
    lab: str
    sources: list[Source]
    skipped: dict[str, str] = field(default_factory=dict)  # student → why not compared
    pairs: list[Pair] = field(default_factory=list)  # most similar first
    reference: dict[str, float] = field(default_factory=dict)  # share matching the reference


def _detector() -> Any:
    try:
        from copydetect import detector  # type: ignore[import-untyped]
    except ImportError:
        raise SimilarityError("the similarity check needs copydetect: "
                              "pip install 'rnngrade[similarity]'") from None
    return detector


def prose_mask(text: str) -> list[bool]:
    """For each character of ``text``, whether it belongs to a comment or a docstring (a
    string statement); all False when the code does not tokenise."""
    mask = [False] * len(text)
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    previous = tokenize.NEWLINE
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            statement = previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and statement):
                begin = starts[token.start[0] - 1] + token.start[1]
                end = starts[token.end[0] - 1] + token.end[1]
                mask[begin:end] = [True] * (end - begin)
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                previous = token.type
    except (tokenize.TokenError, IndentationError, SyntaxError, IndexError):
        return [False] * len(text)
    return mask


def blank_prose(text: str) -> str:
    """``text`` with its comments and docstrings turned into spaces, every character keeping
    its place: prose is what the stub gives everyone, and matches found in the rest map back to
    the original text unchanged."""
    return "".join(" " if prose and ch not in "\r\n" else ch
                   for ch, prose in zip(text, prose_mask(text)))


def fingerprint(text: str, boilerplate: list | None = None) -> Any:
    """The copydetect fingerprint of Python ``text``, comments and docstrings left out
    (``boilerplate``: hashes to leave out)."""
    detector = _detector()
    return detector.CodeFingerprint("submission.py", NOISE_TOKENS,
                                    GUARANTEE_TOKENS - NOISE_TOKENS + 1, boilerplate or [],
                                    filter=True, language="python",
                                    fp=io.StringIO(blank_prose(text)))


def compare(lab: Lab, sources: list[Source], stub: str, reference: str) -> Comparison:
    """Every pair of ``sources`` ranked by similarity, the stub's code left out."""
    detector = _detector()
    boilerplate = list(fingerprint(stub).hashes)
    for source in sources:
        source.fingerprint = fingerprint(source.text, boilerplate)
    done = Comparison(lab.name, sources)
    solution = fingerprint(reference, boilerplate)
    for source in sources:
        _, (share, _), _ = detector.compare_files(source.fingerprint, solution)
        done.reference[source.student] = float(share)
    for a, b in itertools.combinations(sources, 2):
        tokens, (sim_a, sim_b), (slices_a, slices_b) = detector.compare_files(a.fingerprint,
                                                                              b.fingerprint)
        if tokens == 0:
            continue
        done.pairs.append(Pair(a, b, float(sim_a), float(sim_b), int(tokens),
                               code_only(_ranges(slices_a), a.text),
                               code_only(_ranges(slices_b), b.text)))
    done.pairs.sort(key=lambda p: (-p.score, p.a.student, p.b.student))
    return done


def code_only(ranges: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """``ranges`` of ``text`` without the comments and docstrings inside them (a match spans
    them when they lie between matching code, yet they were never compared)."""
    mask = prose_mask(text)
    kept = []
    for start, end in ranges:
        run = None
        for i in range(max(start, 0), min(end, len(text))):
            prose = mask[i]
            if not prose and run is None:
                run = i
            elif prose and run is not None:
                kept.append((run, i))
                run = None
        if run is not None:
            kept.append((run, min(end, len(text))))
    return kept


def _ranges(slices: Any) -> list[tuple[int, int]]:
    if len(slices) == 0 or len(slices[0]) == 0:
        return []
    return [(int(start), int(end)) for start, end in zip(slices[0], slices[1])]


def load_sources(folders: list[Path], lab: Lab) -> tuple[list[Source], dict[str, str]]:
    """Each student's module source for ``lab``, and why the others could not be read."""
    from rnngrade.gradebook.entries import EntryError, discover
    from rnngrade.results.sanitize import clean_text
    from rnngrade.submission.load import SubmissionError, load_submission

    for folder in folders:
        if not folder.is_dir():
            raise SimilarityError(f"{folder} is not a folder of submissions")
    try:
        entries = discover(folders)
    except EntryError as exc:
        raise SimilarityError(str(exc)) from exc
    sources, skipped = [], {}
    for entry in entries:
        try:
            loaded = load_submission(entry.path, lab)
        except SubmissionError as exc:
            skipped[entry.student] = clean_text(str(exc), 300)
            continue
        sources.append(Source(entry.student, loaded.source, loaded.origin))
    return sources, skipped

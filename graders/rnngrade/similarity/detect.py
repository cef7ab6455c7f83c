"""Similarity between students' submissions of one lab, with ``copydetect``.

``copydetect`` fingerprints code by winnowing (the method of MOSS): each file is tokenised,
names and strings are abstracted away (renaming variables does not hide a copy), and the hashes of
its k-grams are sampled; two files share code where they share fingerprints. The lab's stub (the
reference with its solution blocks taken out: the code every student was given) is boilerplate,
so only what students wrote counts, and comments and docstrings are left out. Each submission
is read with the grader's own loader (the lab's module, or a notebook's code cells), never run.

The work is bounded: each submission is compared on at most its first ``MAX_CODE_CHARS``
characters (the time and memory of a file's fingerprint, and of each pair it is in, grow with its
length), and the whole comparison stops at ``DEFAULT_SECONDS`` (``compare(seconds=...)``); the
submissions and pairs left out for either reason are listed in ``Comparison.notes``.
"""

from __future__ import annotations

import io
import itertools
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnngrade.errors import UsageError
from rnngrade.labs import Lab
from rnngrade.similarity import DEFAULT_SECONDS

NOISE_TOKENS = 25  # k: matches shorter than this many tokens are ignored (copydetect's default)
GUARANTEE_TOKENS = 30  # any match this long is found (the winnowing window follows from it)
# A submission is compared on its first 100,000 characters: four times the longest reference
# solution (lab8's, 26 KB with its docstrings), so no plausible lab submission is cut, while a
# 2 MB file (eight of them took 200 s) costs what a long one does.
MAX_CODE_CHARS = 100_000


class SimilarityError(UsageError):
    """The similarity check cannot run (no such folder, copydetect missing)."""


@dataclass
class Source:
    student: str
    text: str  # the code compared: at most MAX_CODE_CHARS characters (``cut``)
    origin: str
    fingerprint: Any = None  # a copydetect CodeFingerprint
    length: int = 0  # the whole submission's characters (more than len(text) once cut)
    _mask: list[bool] | None = None

    def __post_init__(self) -> None:
        self.length = max(self.length, len(self.text))

    def cut(self) -> bool:
        """Keep the first ``MAX_CODE_CHARS`` characters, ending at a line's end where one
        lies in the second half; whether anything was left out."""
        if len(self.text) <= MAX_CODE_CHARS:
            return False
        end = self.text.rfind("\n", MAX_CODE_CHARS // 2, MAX_CODE_CHARS)
        self.text = self.text[:end + 1 if end >= 0 else MAX_CODE_CHARS]
        self._mask = None
        return True

    @property
    def mask(self) -> list[bool]:
        """``prose_mask(text)``, worked out once."""
        if self._mask is None:
            self._mask = prose_mask(self.text)
        return self._mask


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
    notes: list[str] = field(default_factory=list)  # what was cut or left out, and why
    not_compared: list[tuple[str, str]] = field(default_factory=list)  # pairs, out of time


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


def blank_prose(text: str, mask: list[bool] | None = None) -> str:
    """``text`` with its comments and docstrings turned into spaces, every character keeping
    its place: prose is what the stub gives everyone, and matches found in the rest map back to
    the original text unchanged. ``mask``: ``prose_mask(text)``, when the caller has it."""
    mask = prose_mask(text) if mask is None else mask
    return "".join(" " if prose and ch not in "\r\n" else ch for ch, prose in zip(text, mask))


def fingerprint(text: str, boilerplate: list | None = None, mask: list[bool] | None = None
                ) -> Any:
    """The copydetect fingerprint of Python ``text``, comments and docstrings left out
    (``boilerplate``: hashes to leave out; ``mask``: ``prose_mask(text)``, when known)."""
    detector = _detector()
    return detector.CodeFingerprint("submission.py", NOISE_TOKENS,
                                    GUARANTEE_TOKENS - NOISE_TOKENS + 1, boilerplate or [],
                                    filter=True, language="python",
                                    fp=io.StringIO(blank_prose(text, mask)))


def compare(lab: Lab, sources: list[Source], stub: str, reference: str,
            seconds: float = DEFAULT_SECONDS) -> Comparison:
    """Every pair of ``sources`` ranked by similarity, the stub's code left out, within
    ``seconds`` (see the module docstring: what is cut or left out is in ``notes``)."""
    detector = _detector()
    deadline = time.monotonic() + seconds
    out_of_time = f"not compared: the similarity check's time ({seconds:g} s) ran out"
    done = Comparison(lab.name, [])
    for source in sources:
        if source.cut():
            done.notes.append(f"{source.student}: only the first {len(source.text):,} of "
                              f"{source.length:,} characters compared (at most "
                              f"{MAX_CODE_CHARS:,} a submission)")
    boilerplate = list(fingerprint(stub[:MAX_CODE_CHARS]).hashes)
    solution = fingerprint(reference[:MAX_CODE_CHARS], boilerplate)
    for source in sources:
        if time.monotonic() >= deadline:
            done.skipped[source.student] = out_of_time
            continue
        source.fingerprint = fingerprint(source.text, boilerplate, source.mask)
        _, (share, _), _ = detector.compare_files(source.fingerprint, solution)
        done.reference[source.student] = float(share)
        done.sources.append(source)
    for a, b in itertools.combinations(done.sources, 2):
        if time.monotonic() >= deadline:
            done.not_compared.append((a.student, b.student))
            continue
        tokens, (sim_a, sim_b), (slices_a, slices_b) = detector.compare_files(a.fingerprint,
                                                                              b.fingerprint)
        if tokens == 0:
            continue
        done.pairs.append(Pair(a, b, float(sim_a), float(sim_b), int(tokens),
                               code_only(_ranges(slices_a), a.text, a.mask),
                               code_only(_ranges(slices_b), b.text, b.mask)))
    if len(done.skipped) or done.not_compared:
        total = len(sources) * (len(sources) - 1) // 2
        left = total - len(done.sources) * (len(done.sources) - 1) // 2 + len(done.not_compared)
        done.notes.append(f"{left:,} of {total:,} pairs {out_of_time}; --budget gives it more")
    done.pairs.sort(key=lambda p: (-p.score, p.a.student, p.b.student))
    return done


def code_only(ranges: list[tuple[int, int]], text: str, mask: list[bool] | None = None
              ) -> list[tuple[int, int]]:
    """``ranges`` of ``text`` without the comments and docstrings inside them (a match spans
    them when they lie between matching code, yet they were never compared). ``mask``:
    ``prose_mask(text)``, when the caller has it."""
    mask = prose_mask(text) if mask is None else mask
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

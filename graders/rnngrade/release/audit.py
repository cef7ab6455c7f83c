"""Leak audit of a student release: nothing of the solutions, hidden suites or mutants in it.

Secret text is every non-trivial line inside a ``# BEGIN SOLUTION`` region of a reference, every
non-trivial line of a file under ``graders/suites/`` (a lab's public ``lab.yaml`` aside), and
every non-trivial line of a mutant's edit (old and new text). A secret is a leak when it appears
anywhere in the release (a file, a notebook cell, a member of an .npz) unless the course already
publishes it in ``assignments/`` (an instructor may quote a formula in a README, and a filled-in
helper of the stub may share a line with a solution); a hidden-suite line is also excused when
the shipped checks library holds it.
"""

from __future__ import annotations

import ast
import io
import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rnngrade.authoring.stubs import solution_regions
from rnngrade.labs import METADATA, available_labs

MIN_LENGTH = 10  # shorter lines (``else:``, ``)``) say nothing about a solution
# Lines that say nothing either: returning names, imports, the first line of a raise, a name
# bound to an empty container.
TRIVIAL = re.compile(r"^(return|yield)\s+[\w\s,()]*$"
                     r"|^\w+\s*=\s*(\[\]|\{\}|\(\)|list\(\)|dict\(\)|set\(\))$"
                     r"|^(import|from)\s+[\w.]+(\s+import\s+[\w\s,]+)?(\s+as\s+\w+)?$"
                     r"|^raise\s+[\w.]+\(?$")


@dataclass(frozen=True)
class Leak:
    path: str  # file of the release (``::member`` or ``::cell N`` inside it)
    text: str  # the secret line found
    origin: str  # where it comes from (``solutions/lab2/bptt.py:57``)

    def __str__(self) -> str:
        return f"{self.path}: {self.text!r} (from {self.origin})"


def significant(line: str) -> str | None:
    """The stripped line, or None when it is too short or too common to be a secret."""
    text = line.strip()
    if len(text) < MIN_LENGTH or not any(c.isalnum() for c in text) or TRIVIAL.match(text):
        return None
    return text


def solution_lines(root: Path) -> dict[str, str]:
    """Secret line → origin, for every solution region of every lab."""
    secrets: dict[str, str] = {}
    for lab in available_labs(root):
        path = lab.solution_path(root)
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for first, last, _ in solution_regions(source):
            for number in range(first + 1, last):
                text = significant(lines[number])
                if text:
                    secrets.setdefault(text, f"{path.relative_to(root)}:{number + 1}")
    return secrets


def suite_lines(root: Path) -> dict[str, str]:
    """Secret line → origin, for every text file under ``graders/suites``."""
    secrets: dict[str, str] = {}
    suites = root / "graders" / "suites"
    for path in sorted(suites.rglob("*")) if suites.is_dir() else []:
        if not path.is_file() or "__pycache__" in path.parts or path.name == METADATA:
            continue  # a lab's metadata (title, module, function names) is public
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="ignore")
                                      .splitlines(), start=1):
            text = significant(line)
            if text:
                secrets.setdefault(text, f"{path.relative_to(root)}:{number}")
    return secrets


def mutant_edit_lines(root: Path) -> dict[str, str]:
    """Secret text → origin, for every line of every ``edits=`` string of a lab's mutants (read
    from the source, never executed)."""
    secrets: dict[str, str] = {}
    for path in sorted((root / "graders" / "suites").glob("*/mutants.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.keyword) or node.arg != "edits":
                continue
            for constant in ast.walk(node.value):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    for line in constant.value.splitlines():
                        text = significant(line)
                        if text:
                            secrets.setdefault(text, f"{path.relative_to(root)}:{node.lineno}")
    return secrets


def release_texts(folder: Path) -> dict[str, str]:
    """Every text of a release, by place: files, notebook cells, members of .npz/.zip files."""
    texts: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or ".git" in path.relative_to(folder).parts:
            continue
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        if zipfile.is_zipfile(io.BytesIO(data)):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.namelist():
                    texts[f"{name}::{member}"] = archive.read(member).decode("utf-8", "ignore")
            continue
        text = data.decode("utf-8", "ignore")
        texts[name] = text
        if path.suffix == ".ipynb":
            try:
                cells = json.loads(text).get("cells", [])
            except ValueError:
                continue
            for index, cell in enumerate(cells):
                source = cell.get("source", "")
                texts[f"{name}::cell {index}"] = "".join(source) if isinstance(source, list) \
                    else str(source)
    return texts


def published_lines(root: Path) -> set[str]:
    """Lines the course itself publishes: the files of ``assignments/`` (stubs, public tests,
    READMEs, notebook cells)."""
    lines: set[str] = set()
    for text in release_texts(root / "assignments").values():
        lines.update(line.strip() for line in text.splitlines())
    return lines


def library_text() -> str:
    """The source of the student side of the rnngrade package (shipped by design; a hidden suite
    shares lines with it, e.g. ``total.backward()`` or a usage example in a docstring)."""
    from rnngrade.release.package import student_modules

    return "\n".join(path.read_text(encoding="utf-8") for path in student_modules().values())


def find_leaks(release: Path, root: Path) -> list[Leak]:
    """Every secret of the course at ``root`` found anywhere in the release folder (inside a line
    too: a JSON string, a sentence). Solution and mutant lines are excused only when
    ``assignments/`` publishes them; hidden-suite lines also when the shipped checks library
    holds them."""
    published = "\n".join(sorted(published_lines(root)))
    library = library_text()
    secrets = {k: v for k, v in suite_lines(root).items() if k not in library}
    secrets.update(mutant_edit_lines(root))
    secrets.update(solution_lines(root))
    openings = Openings(secrets)
    order = {secret: index for index, secret in enumerate(secrets)}
    leaks = [Leak(place, secret, secrets[secret])
             for place, text in release_texts(release).items()
             for secret in openings.occurring(text) if secret not in published]
    return sorted(leaks, key=lambda leak: (order[leak.text], leak.path))


class Openings:
    """Secrets (each at least ``MIN_LENGTH`` characters) indexed by their first ``MIN_LENGTH``
    characters, to find those in a text in one pass over it rather than one search per secret."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.by_opening: dict[str, list[str]] = {}
        for secret in secrets:
            self.by_opening.setdefault(secret[:MIN_LENGTH], []).append(secret)

    def occurring(self, text: str) -> set[str]:
        """The secrets that occur in ``text``."""
        found: set[str] = set()
        for start in range(len(text) - MIN_LENGTH + 1):
            candidates = self.by_opening.get(text[start:start + MIN_LENGTH])
            if candidates:
                found.update(s for s in candidates if text.startswith(s, start))
        return found

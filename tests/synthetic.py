"""A synthetic class of submissions, for batch tests and the throughput benchmark (test data:
not part of the rnngrade package).

Students get, in a fixed rotation: the reference (with a unique comment, so every hash differs),
each of the lab's mutants (one known mistake), the untouched stub, and optionally the hostile
submissions of ``fixtures/submissions/hostile`` and bad entries (an empty folder, a corrupt zip,
a text file). Forms rotate too: a ``.py`` file, a folder, a ``.zip``, a notebook.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from rnngrade.diagnosis.mutants import load_mutant_table, strip_markers
from rnngrade.labs import Lab, get_lab
from rnngrade.paths import course_root

FORMS = ("py", "folder", "zip", "ipynb")


@dataclass(frozen=True)
class Sample:
    """One generated entry: its student id, what it contains and the form it takes."""

    student: str
    kind: str  # correct | mutant:<name> | stub | hostile:<name> | bad:<what>
    form: str
    path: Path


def hostile_sources() -> dict[str, str]:
    """The shipped hostile submissions (lab1), by name; empty when there are none."""
    folder = course_root() / "fixtures" / "submissions" / "hostile"
    if not folder.is_dir():
        return {}
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}


def sources(lab: Lab, hostile: bool = False, skip: frozenset[str] = frozenset()
            ) -> list[tuple[str, str]]:
    """(kind, module source) for one rotation of the class (``skip``: hostile ones left out)."""
    reference = strip_markers(lab.solution_path().read_text(encoding="utf-8"))
    raw_reference = lab.solution_path().read_text(encoding="utf-8")
    out = [("correct", reference), ("correct", reference)]
    mutants_file = lab.mutants_path()
    if mutants_file.exists():
        out += [(f"mutant:{m.name}", m.apply(raw_reference))
                for m in load_mutant_table(mutants_file).mutants]
    out.append(("stub", lab.stub_path().read_text(encoding="utf-8")))
    if hostile and lab.name == "lab1":
        out += [(f"hostile:{name}", text) for name, text in hostile_sources().items()
                if name not in skip]
    return out


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "id": "solution", "metadata": {},
            "outputs": [], "source": source}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


def write_entry(folder: Path, student: str, lab: Lab, source: str, form: str) -> Path:
    """Write ``source`` as ``student``'s entry in ``form``; return the entry's path."""
    if form == "py":
        path = folder / f"{student}.py"
        path.write_text(source, encoding="utf-8")
    elif form == "folder":
        path = folder / student
        path.mkdir()
        (path / lab.filename).write_text(source, encoding="utf-8")
        (path / "README.txt").write_text(f"{student}'s work\n", encoding="utf-8")
    elif form == "zip":
        path = folder / f"{student}.zip"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"{student}/{lab.filename}", source)
        path.write_bytes(buffer.getvalue())
    elif form == "ipynb":
        path = folder / f"{student}.ipynb"
        path.write_text(_notebook(source), encoding="utf-8")
    else:
        raise ValueError(f"unknown form {form!r}")
    return path


def write_bad(folder: Path, student: str, what: str) -> Path:
    """A bad entry: an empty folder, a corrupt zip or a file of another type."""
    if what == "empty":
        path = folder / student
        path.mkdir()
    elif what == "corrupt_zip":
        path = folder / f"{student}.zip"
        path.write_bytes(b"PK\x03\x04 this is not really a zip archive " + student.encode())
    elif what == "text":
        path = folder / f"{student}.txt"
        path.write_text("I could not finish the lab, sorry.\n", encoding="utf-8")
    else:
        raise ValueError(f"unknown bad entry {what!r}")
    return path


def make_class(folder: Path, lab_name: str, n: int, *, hostile: bool = False,
               bad: bool = False, forms: tuple[str, ...] = FORMS,
               skip: frozenset[str] = frozenset(), hostile_every: int = 0) -> list[Sample]:
    """Write ``n`` entries ``s0000``… into ``folder`` (created); return what each one is.

    hostile_every: with ``hostile``, every k-th entry is the next hostile submission (a class
    with a few attackers) instead of the hostile ones taking their turn in the rotation."""
    lab = get_lab(lab_name)
    folder.mkdir(parents=True, exist_ok=True)
    spread = hostile and hostile_every > 0
    rotation = sources(lab, hostile and not spread, skip)
    attackers = [(kind, text) for kind, text in sources(lab, True, skip)
                 if kind.startswith("hostile:")] if spread else []
    bad_kinds = ("empty", "corrupt_zip", "text") if bad else ()
    samples = []
    honest = 0
    for i in range(n):
        student = f"s{i:04d}"
        if attackers and i % hostile_every == hostile_every - 1:
            kind, source = attackers[(i // hostile_every) % len(attackers)]
            source = f"# submission of {student}\n{source}"
            samples.append(Sample(student, kind, "py", write_entry(folder, student, lab, source,
                                                                   "py")))
            continue
        slot = honest % (len(rotation) + len(bad_kinds))
        honest += 1
        if slot >= len(rotation):
            what = bad_kinds[slot - len(rotation)]
            samples.append(Sample(student, f"bad:{what}", "bad", write_bad(folder, student,
                                                                             what)))
            continue
        kind, source = rotation[slot]
        form = "py" if kind.startswith("hostile") else forms[(i // 3) % len(forms)]
        source = f"# submission of {student}\n{source}"  # every entry hashes differently
        samples.append(Sample(student, kind, form, write_entry(folder, student, lab, source,
                                                               form)))
    return samples

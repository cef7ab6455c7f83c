"""Finding a lab's module in a submission: a folder, a .py, a .ipynb, or a .zip of those.

Every byte is read through ``tree`` (folders and single files: no link followed, limits on
depth, files and bytes) or ``archive`` (zips, streamed into memory); whatever cannot be loaded
is a SubmissionError whose message is for the student.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rnngrade.errors import SubmissionError
from rnngrade.harness.source.notebook import NotebookError, notebook_source
from rnngrade.labs import Lab
from rnngrade.submission.archive import read_archive
from rnngrade.submission.tree import Tree, TreeLimits, kind_of, read_file, read_tree, shown

__all__ = ["LoadedSubmission", "SubmissionError", "load_submission"]

MAX_SOURCE_BYTES = 2 * 1024 * 1024
SOURCE_SUFFIXES = (".py", ".ipynb")
#: A folder: only its .py and .ipynb files are read, each up to MAX_SOURCE_BYTES.
FOLDER_LIMITS = TreeLimits(file_bytes=MAX_SOURCE_BYTES)


@dataclass
class LoadedSubmission:
    source: str  # the module source to run
    filename: str  # the lab's module file name, e.g. "rnn.py"
    origin: str  # what it came from, e.g. "notebook lab1.ipynb inside submission.zip"
    notes: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def load_submission(path: Path, lab: Lab) -> LoadedSubmission:
    """Load the lab's module source from ``path``; raise SubmissionError with a clear reason."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise SubmissionError(f"{shown(path.name)} does not exist") from None
    except OSError as exc:
        raise SubmissionError(f"{shown(path.name)} cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        return _from_folder(read_tree(path, want=_source, limits=FOLDER_LIMITS), lab,
                            shown(path.name))
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionError(f"{shown(path.name)} cannot be graded: {kind_of(info.st_mode)}")
    suffix = path.suffix.lower()
    if suffix == ".zip":
        tree = read_archive(path, want=_source,
                            limits=TreeLimits(files=500, file_bytes=MAX_SOURCE_BYTES))
        loaded = _from_folder(tree, lab, shown(path.name))
        loaded.origin = f"{loaded.origin} inside {shown(path.name)}"
        return loaded
    if suffix in SOURCE_SUFFIXES:
        return _from_file(path.name, read_file(path, MAX_SOURCE_BYTES), lab)
    raise SubmissionError(f"{shown(path.name)}: expected a folder, a .py file, a .ipynb "
                          f"notebook or a .zip archive, got a {suffix or 'file without extension'}")


def _source(rel: str) -> bool:
    return rel.lower().endswith(SOURCE_SUFFIXES)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _from_file(name: str, data: bytes, lab: Lab) -> LoadedSubmission:
    text = _decode(data)
    if name.lower().endswith(".ipynb"):
        try:
            source, notes = notebook_source(text, shown(name))
        except NotebookError as exc:
            raise SubmissionError(str(exc)) from None
        return LoadedSubmission(source, lab.filename, f"notebook {shown(name)}", notes)
    notes = [] if name == lab.filename else [f"graded {shown(name)} as {lab.filename}"]
    return LoadedSubmission(text, lab.filename, f"file {shown(name)}", notes)


def _read(tree: Tree, rel: str, lab: Lab) -> LoadedSubmission:
    """The chosen file of a folder or archive, with the notes of what was skipped."""
    if rel in tree.oversize:
        raise SubmissionError(f"{shown(rel)} is larger than {MAX_SOURCE_BYTES >> 20} MiB")
    loaded = _from_file(PurePosixPath(rel).name, tree.files[rel], lab)
    loaded.notes[:0] = tree.notes
    return loaded


def _from_folder(tree: Tree, lab: Lab, label: str) -> LoadedSubmission:
    files = [PurePosixPath(rel) for rel in tree.listed]
    exact = sorted((p for p in files if p.name == lab.filename), key=lambda p: len(p.parts))
    if exact:
        return _module_or_notebook(tree, exact[0], files, lab)
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    scripts = [p for p in files if p.suffix == ".py" and not p.name.startswith("test_")
               and p.name != "conftest.py"]
    for candidates in (notebooks, scripts):
        if len(candidates) == 1:
            loaded = _read(tree, candidates[0].as_posix(), lab)
            loaded.notes.append(f"no {lab.filename} found; graded {shown(candidates[0].name)} "
                                "instead")
            return loaded
    skipped = f" ({'; '.join(tree.notes)})" if tree.notes else ""
    if not files:
        raise SubmissionError(f"{label} is empty: expected {lab.filename} or a "
                              f"notebook{skipped}")
    listed = ", ".join(shown(p.as_posix(), 60) for p in sorted(files)[:10])
    raise SubmissionError(f"{label}: no {lab.filename} found, and no single notebook or .py file "
                          f"to grade instead (found: {listed}){skipped}")


def _module_or_notebook(tree: Tree, module: PurePosixPath, files: list[PurePosixPath],
                        lab: Lab) -> LoadedSubmission:
    """The module, unless it is the untouched stub and a notebook beside it holds the work (the
    student README's rule, as ``rnngrade ci`` applies it); a note says which file was graded and
    why, either way."""
    notebooks = [p for p in files if p.suffix == ".ipynb" and p.parent == module.parent]
    named = [p for p in notebooks if p.name == f"{lab.name}.ipynb"]
    notebook = (named or notebooks)[0] if len(named) == 1 or len(notebooks) == 1 else None
    loaded = _read(tree, module.as_posix(), lab)
    if notebook is None:
        loaded.notes.insert(0, f"graded {shown(module.name)}")
        return loaded
    if not _is_untouched_stub(loaded.source, lab):
        loaded.notes.insert(0, f"graded {shown(module.name)}; {shown(notebook.name)} beside it "
                               "was not graded (work in one of the two)")
        return loaded
    chosen = _read(tree, notebook.as_posix(), lab)
    chosen.notes.insert(0, f"graded {shown(notebook.name)}: {shown(module.name)} is the "
                           "untouched stub")
    return chosen


def _is_untouched_stub(source: str, lab: Lab) -> bool:
    """Whether ``source`` is the lab's released stub (line endings and outer blanks aside)."""
    from rnngrade.authoring.generate import stub_for

    try:
        stub = stub_for(lab).content.decode()
    except OSError:  # a grader without the course's solutions cannot tell
        return False
    return source.replace("\r\n", "\n").strip() == stub.replace("\r\n", "\n").strip()

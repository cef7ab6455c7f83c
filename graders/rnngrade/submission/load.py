"""Finding a lab's module in a submission: a folder, a .py, a .ipynb, or a .zip of those."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SubmissionError as _SubmissionError
from rnngrade.labs import Lab
from rnngrade.submission.archive import UnsafeArchiveError, safe_extract
from rnngrade.submission.notebook import NotebookError, notebook_source

MAX_SOURCE_BYTES = 2 * 1024 * 1024


class SubmissionError(_SubmissionError):
    """The submission cannot be loaded; the message says why, for the student."""


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
    if not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path.is_dir():
        return _from_folder(path, lab, path.name)
    suffix = path.suffix.lower()
    if suffix == ".zip":
        with tempfile.TemporaryDirectory(prefix="rnngrade-zip-") as tmp:
            try:
                safe_extract(path, Path(tmp))
            except UnsafeArchiveError as exc:
                raise SubmissionError(str(exc)) from None
            loaded = _from_folder(Path(tmp), lab, path.name)
            loaded.origin = f"{loaded.origin} inside {path.name}"
            return loaded
    if suffix in (".py", ".ipynb"):
        return _from_file(path, lab)
    raise SubmissionError(f"{path.name}: expected a folder, a .py file, a .ipynb notebook or a "
                          f".zip archive, got a {suffix or 'file without extension'}")


def _read_text(path: Path) -> str:
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise SubmissionError(f"{path.name} is larger than {MAX_SOURCE_BYTES >> 20} MiB")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _from_file(path: Path, lab: Lab) -> LoadedSubmission:
    text = _read_text(path)
    if path.suffix.lower() == ".ipynb":
        try:
            source, notes = notebook_source(text, path.name)
        except NotebookError as exc:
            raise SubmissionError(str(exc)) from None
        return LoadedSubmission(source, lab.filename, f"notebook {path.name}", notes)
    notes = [] if path.name == lab.filename else [f"graded {path.name} as {lab.filename}"]
    return LoadedSubmission(text, lab.filename, f"file {path.name}", notes)


def _from_folder(folder: Path, lab: Lab, label: str) -> LoadedSubmission:
    files = [p for p in folder.rglob("*") if p.is_file() and not _ignored(p, folder)]
    exact = sorted((p for p in files if p.name == lab.filename), key=lambda p: len(p.parts))
    if exact:
        return _module_or_notebook(exact[0], files, lab)
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    scripts = [p for p in files if p.suffix == ".py" and not p.name.startswith("test_")
               and p.name != "conftest.py"]
    for candidates in (notebooks, scripts):
        if len(candidates) == 1:
            loaded = _from_file(candidates[0], lab)
            loaded.notes.append(f"no {lab.filename} found; graded {candidates[0].name} instead")
            return loaded
    if not files:
        raise SubmissionError(f"{label} is empty: expected {lab.filename} or a notebook")
    listed = ", ".join(sorted(p.relative_to(folder).as_posix() for p in files)[:10])
    raise SubmissionError(f"{label}: no {lab.filename} found, and no single notebook or .py file "
                          f"to grade instead (found: {listed})")


def _module_or_notebook(module: Path, files: list[Path], lab: Lab) -> LoadedSubmission:
    """The module, unless it is the untouched stub and a notebook beside it holds the work (the
    student README's rule, as ``rnngrade ci`` applies it); a note says which file was graded and
    why, either way."""
    notebooks = [p for p in files if p.suffix == ".ipynb" and p.parent == module.parent]
    named = [p for p in notebooks if p.name == f"{lab.name}.ipynb"]
    notebook = (named or notebooks)[0] if len(named) == 1 or len(notebooks) == 1 else None
    loaded = _from_file(module, lab)
    if notebook is None:
        loaded.notes.insert(0, f"graded {module.name}")
        return loaded
    if not _is_untouched_stub(loaded.source, lab):
        loaded.notes.insert(0, f"graded {module.name}; {notebook.name} beside it was not graded "
                               "(work in one of the two)")
        return loaded
    chosen = _from_file(notebook, lab)
    chosen.notes.insert(0, f"graded {notebook.name}: {module.name} is the untouched stub")
    return chosen


def _is_untouched_stub(source: str, lab: Lab) -> bool:
    """Whether ``source`` is the lab's released stub (line endings and outer blanks aside)."""
    from rnngrade.authoring.generate import stub_for

    try:
        stub = stub_for(lab).content.decode()
    except OSError:  # a grader without the course's solutions cannot tell
        return False
    return source.replace("\r\n", "\n").strip() == stub.replace("\r\n", "\n").strip()


def _ignored(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return any(p.startswith(".") or p in ("__pycache__", "__MACOSX") for p in parts)

"""The entries of a batch: one per student in the submissions folder(s), and their bytes.

An entry is a folder, a ``.py``, a ``.ipynb`` or a ``.zip`` (anything else is still an entry, and
is recorded as a submission that cannot be graded). Its student id is its name without the
extension; when two entries would share an id (``reference/`` and ``reference.zip``) each keeps
its full name, across several submission folders the folder's name is put in front, and a number
after as a last resort (ids are compared as a case-insensitive file system would: never fatal).
Links and special files are never read: see ``rnngrade.submission.tree``.

The coordinator reads an entry into a ``Payload`` (the bytes of the file, or of every file of the
folder in sorted order), hashes exactly those bytes, and ships them to the grading worker, which
writes them back out under the entry's own name: the hash always describes what was graded, and
workers need no shared file system (a Dask cluster).
"""

from __future__ import annotations

import hashlib
import stat
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rnngrade.errors import SubmissionError
from rnngrade.submission.tree import (
    TreeError,
    TreeLimits,
    ignored,
    read_file,
    read_tree,
    shown,
)

SUBMISSION_SUFFIXES = (".py", ".ipynb", ".zip")
MAX_ENTRY_BYTES = 50 * 1024 * 1024
MAX_ENTRY_FILES = 2000


class EntryError(SubmissionError, ValueError):
    """An entry that cannot be read at all (too large, unreadable, not a file or folder)."""


@dataclass(frozen=True)
class Entry:
    """One student's submission in the submissions folder."""

    student: str
    path: Path

    @property
    def kind(self) -> str:
        if self.path.is_symlink():
            return "link"
        if self.path.is_dir():
            return "folder"
        suffix = self.path.suffix.lower()
        return suffix[1:] if suffix in SUBMISSION_SUFFIXES else "other"


@dataclass
class Payload:
    """The bytes of an entry: ``data`` for a file, ``files`` (relative POSIX path → bytes) for a
    folder. Plain data, so it travels to local and Dask workers alike."""

    name: str
    is_folder: bool
    data: bytes = b""
    files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was left out, for the student

    @property
    def size(self) -> int:
        return len(self.data) + sum(len(b) for b in self.files.values())

    @property
    def sha256(self) -> str:
        """SHA-256 of a file's bytes (as ``sha256sum`` prints it); for a folder, of every file's
        relative path and bytes, in sorted order."""
        if not self.is_folder:
            return hashlib.sha256(self.data).hexdigest()
        h = hashlib.sha256(b"rnngrade-folder-v1\0")
        for rel in sorted(self.files):
            data = self.files[rel]
            encoded = rel.encode("utf-8", "surrogateescape")
            h.update(len(encoded).to_bytes(8, "little") + encoded)
            h.update(len(data).to_bytes(8, "little") + data)
        return h.hexdigest()

    def to_wire(self) -> dict:
        return {"name": self.name, "is_folder": self.is_folder, "data": self.data,
                "files": self.files, "notes": self.notes}

    @classmethod
    def from_wire(cls, data: dict) -> Payload:
        return cls(data["name"], data["is_folder"], data["data"], dict(data["files"]),
                   list(data.get("notes", [])))

    def materialise(self, parent: Path) -> Path:
        """Write the entry under ``parent`` with its original name; return its path."""
        if not self.name or "/" in self.name or self.name in (".", ".."):
            raise EntryError(f"refusing the entry name {self.name!r}")
        target = parent / self.name
        if not self.is_folder:
            target.write_bytes(self.data)
            return target
        target.mkdir()
        for rel, data in self.files.items():
            path = PurePosixPath(rel)
            if not path.parts or path.is_absolute() or ".." in path.parts:
                raise EntryError(f"{self.name}: refusing the path {rel!r}")
            out = target.joinpath(*path.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        return target


def discover(folders: list[Path], exclude: Path | None = None) -> list[Entry]:
    """The entries of one or more submissions folders, with unique student ids, sorted by id;
    ``exclude`` (the output folder, when it lies among them) is left out. Links are entries too
    (recorded as not gradable), never followed here.

    An id is the entry's name without its extension; when two would be equal (compared after
    Unicode normalisation and case folding, as a file system may) the full names are used, then
    the folder's name in front, then a number after: never an error."""
    found: list[tuple[Path, Path]] = []  # (folder, entry path)
    for folder in folders:
        try:
            children = sorted(folder.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            raise EntryError(f"cannot list {folder} ({exc.strerror})") from None
        found.extend((folder, child) for child in children
                     if not ignored(child.name) and not _same_folder(child, exclude))
    stems = Counter(_key(_stem(path)) for _, path in found)
    names = Counter(_key(path.name) for _, path in found)
    entries = []
    used: set[str] = set()
    for folder, path in found:
        if stems[_key(_stem(path))] == 1:
            wanted = student_id(_stem(path))
        elif names[_key(path.name)] == 1:
            wanted = student_id(path.name)
        else:
            wanted = student_id(f"{folder.name}-{path.name}")
        student, number = wanted, 2
        while _key(student) in used:
            student, number = f"{wanted}-{number}", number + 1
        used.add(_key(student))
        entries.append(Entry(student, path))
    return sorted(entries, key=lambda e: e.student)


def _same_folder(path: Path, other: Path | None) -> bool:
    """Whether ``path`` (not followed if a link) is the folder ``other``."""
    if other is None:
        return False
    try:
        a, b = path.lstat(), other.stat()
    except OSError:
        return False
    return stat.S_ISDIR(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def student_id(name: str) -> str:
    """An entry's name as a student id: Unicode NFC, with surrogates (undecodable bytes) and
    control or formatting characters replaced; never empty."""
    text = unicodedata.normalize("NFC", "".join(
        "\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in name))
    text = "".join("_" if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)
    return text.strip() or "unnamed"


def _key(student: str) -> str:
    """What two ids must differ in: case and Unicode normalisation aside."""
    return unicodedata.normalize("NFC", student_id(student).casefold())


def _stem(path: Path) -> str:
    """The name without its extension (a folder's whole name)."""
    return path.name if path.is_dir() else (path.stem or path.name)


def read_entry(entry: Entry, max_bytes: int = MAX_ENTRY_BYTES) -> Payload:
    """Read an entry's bytes; raise EntryError when it is not a regular file or folder, is too
    large, or cannot be read. Inside a folder, links and special files are left out, with a
    note (``tree`` reads every byte: see its module doc)."""
    try:
        info = entry.path.lstat()
    except OSError as exc:
        raise EntryError(f"{shown(entry.path.name)}: cannot read it ({exc.strerror})") from None
    try:
        if stat.S_ISDIR(info.st_mode):
            tree = read_tree(entry.path, limits=TreeLimits(files=MAX_ENTRY_FILES,
                                                           bytes=max_bytes))
            return Payload(entry.path.name, True, files=tree.files, notes=tree.notes)
        return Payload(entry.path.name, False, read_file(entry.path, max_bytes))
    except TreeError as exc:
        raise EntryError(str(exc)) from None


class Workspace:
    """A private temporary folder a worker materialises one payload in."""

    def __init__(self, payload: Payload) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="rnngrade-batch-")
        try:
            self.path = payload.materialise(Path(self._tmp.name))
        except BaseException:
            self._tmp.cleanup()
            raise

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()

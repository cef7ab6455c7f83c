"""The entries of a batch: one per student in the submissions folder(s), and their bytes.

An entry is a folder, a ``.py``, a ``.ipynb`` or a ``.zip`` (anything else is still an entry, and
is recorded as a submission that cannot be graded). Its student id is its name without the
extension; when two entries would share an id (``reference/`` and ``reference.zip``) each keeps
its full name, and across several submission folders the folder's name is put in front.

The coordinator reads an entry into a ``Payload`` (the bytes of the file, or of every file of the
folder in sorted order), hashes exactly those bytes, and ships them to the grading worker, which
writes them back out under the entry's own name: the hash always describes what was graded, and
workers need no shared file system (a Dask cluster).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rnngrade.errors import SubmissionError

SUBMISSION_SUFFIXES = (".py", ".ipynb", ".zip")
IGNORED_NAMES = frozenset({"__pycache__", "__MACOSX", "Thumbs.db"})
MAX_ENTRY_BYTES = 50 * 1024 * 1024
MAX_ENTRY_FILES = 2000


class EntryError(SubmissionError, ValueError):
    """An entry that cannot be read at all (too large, unreadable, not a file or folder)."""


def ignored(name: str) -> bool:
    """Names skipped everywhere: hidden files, caches, macOS archive debris."""
    return name.startswith(".") or name in IGNORED_NAMES


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
                "files": self.files}

    @classmethod
    def from_wire(cls, data: dict) -> Payload:
        return cls(data["name"], data["is_folder"], data["data"], dict(data["files"]))

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


def discover(folders: list[Path]) -> list[Entry]:
    """The entries of one or more submissions folders, with unique student ids, sorted by id."""
    found: list[tuple[Path, Path]] = []  # (folder, entry path)
    for folder in folders:
        for child in sorted(folder.iterdir()):
            if not ignored(child.name):
                found.append((folder, child))
    stems = Counter(_stem(path) for _, path in found)
    names = Counter(path.name for _, path in found)
    entries = []
    for folder, path in found:
        if stems[_stem(path)] == 1:
            student = _stem(path)
        elif names[path.name] == 1:
            student = path.name
        else:
            student = f"{folder.name}-{path.name}"
        entries.append(Entry(student, path))
    ids = Counter(e.student for e in entries)
    duplicates = sorted(i for i, n in ids.items() if n > 1)
    if duplicates:
        raise EntryError(f"cannot give every entry its own student id: {duplicates}")
    return sorted(entries, key=lambda e: e.student)


def _stem(path: Path) -> str:
    """The name without its extension (a folder's whole name)."""
    return path.name if path.is_dir() else (path.stem or path.name)


def read_entry(entry: Entry, max_bytes: int = MAX_ENTRY_BYTES) -> Payload:
    """Read an entry's bytes; raise EntryError when it is not a regular file or folder, is too
    large, or cannot be read. Links and special files inside a folder are left out."""
    try:
        info = entry.path.lstat()
    except OSError as exc:
        raise EntryError(f"{entry.path.name}: cannot read it ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise EntryError(f"{entry.path.name} is a symbolic link, not a file or folder")
    if stat.S_ISREG(info.st_mode):
        if info.st_size > max_bytes:
            raise EntryError(f"{entry.path.name} is larger than {max_bytes >> 20} MiB")
        return Payload(entry.path.name, False, _read(entry.path, entry.path.name))
    if not stat.S_ISDIR(info.st_mode):
        raise EntryError(f"{entry.path.name} is not a regular file or folder")
    files: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(entry.path, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not ignored(d))
        for name in sorted(names):
            path = Path(root) / name
            if ignored(name) or not stat.S_ISREG(path.lstat().st_mode):
                continue
            rel = path.relative_to(entry.path).as_posix()
            total += path.lstat().st_size
            if total > max_bytes or len(files) >= MAX_ENTRY_FILES:
                raise EntryError(f"{entry.path.name} holds more than {max_bytes >> 20} MiB or "
                                 f"{MAX_ENTRY_FILES} files")
            files[rel] = _read(path, f"{entry.path.name}/{rel}")
    return Payload(entry.path.name, True, files=files)


def _read(path: Path, label: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise EntryError(f"{label}: cannot read it ({exc.strerror})") from None


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

"""Extracting a submitted .zip safely."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from rnngrade.errors import SubmissionError

MAX_FILES = 500
MAX_TOTAL_BYTES = 50 * 1024 * 1024
MAX_ARCHIVE_BYTES = 20 * 1024 * 1024


class UnsafeArchiveError(SubmissionError, ValueError):
    """The archive is corrupt, too large, or tries to write outside its folder."""


def safe_extract(archive: Path, destination: Path) -> list[Path]:
    """Extract ``archive`` into ``destination``; refuse absolute and ``..`` paths, links, device
    files, and archives over the size and count limits. Returns the extracted files."""
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise UnsafeArchiveError(f"{archive.name} is larger than {MAX_ARCHIVE_BYTES >> 20} MiB")
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnsafeArchiveError(f"{archive.name} is not a readable zip archive ({exc})") from None
    with zf:
        members = zf.infolist()
        if len(members) > MAX_FILES:
            raise UnsafeArchiveError(f"{archive.name} holds {len(members)} entries "
                                     f"(at most {MAX_FILES})")
        total = sum(m.file_size for m in members)
        if total > MAX_TOTAL_BYTES:
            raise UnsafeArchiveError(f"{archive.name} would extract to {total >> 20} MiB "
                                     f"(at most {MAX_TOTAL_BYTES >> 20} MiB)")
        for member in members:
            _check_member(archive.name, member)
        written = []
        root = destination.resolve()
        for member in members:
            target = (root / member.filename).resolve()
            if root not in target.parents and target != root:
                raise UnsafeArchiveError(f"{archive.name}: entry {member.filename!r} leaves the "
                                         "archive's folder")
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                data = zf.read(member)
            except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                raise UnsafeArchiveError(f"{archive.name}: cannot read {member.filename!r} "
                                         f"({exc})") from None
            if len(data) != member.file_size:
                raise UnsafeArchiveError(f"{archive.name}: {member.filename!r} has a wrong size")
            target.write_bytes(data)
            written.append(target)
        return written


def _check_member(name: str, member: zipfile.ZipInfo) -> None:
    path = PurePosixPath(member.filename.replace("\\", "/"))
    if path.is_absolute() or member.filename.startswith(("/", "\\")) or ":" in path.parts[0]:
        raise UnsafeArchiveError(f"{name}: entry {member.filename!r} has an absolute path")
    if ".." in path.parts:
        raise UnsafeArchiveError(f"{name}: entry {member.filename!r} contains '..'")
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeArchiveError(f"{name}: entry {member.filename!r} is a symbolic link")
    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UnsafeArchiveError(f"{name}: entry {member.filename!r} is not a regular file")

"""Reading a submitted .zip by streaming, into memory: nothing is written to disk.

Only the members the caller wants are decompressed, in chunks, and every limit counts the bytes
actually produced, never the sizes the archive declares (a member that lies about its size is
stopped at the limit, or refused by its checksum). Refused outright: absolute paths, ``..``,
links and special files, the same path twice, a path that is both a file and a folder, nesting
deeper than the limit, and archives over the count and size limits. Names longer than a file
system allows are skipped with a note; hidden names and archive debris (``__MACOSX``) silently.
"""

from __future__ import annotations

import io
import stat
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from rnngrade.submission.tree import CHUNK, Tree, TreeError, TreeLimits, ignored, read_file, shown

MAX_FILES = 500
MAX_TOTAL_BYTES = 50 * 1024 * 1024  # bytes actually decompressed, wanted members together
MAX_ARCHIVE_BYTES = 20 * 1024 * 1024
LIMITS = TreeLimits(files=MAX_FILES, bytes=MAX_TOTAL_BYTES)


class UnsafeArchiveError(TreeError):
    """The archive is corrupt, too large, or tries to write outside its folder."""


def read_archive(archive: Path, *, want: Callable[[str], bool] = lambda rel: True,
                 limits: TreeLimits = LIMITS) -> Tree:
    """The members of ``archive`` as a Tree (see the module doc); UnsafeArchiveError when it
    cannot be read safely."""
    name = shown(archive.name)
    data = read_file(archive, MAX_ARCHIVE_BYTES)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        members = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise UnsafeArchiveError(f"{name} is not a readable zip archive ({exc})") from None
    with zf:
        if len(members) > limits.files:
            raise UnsafeArchiveError(f"{name} holds {len(members)} entries "
                                     f"(at most {limits.files})")
        declared = sum(m.file_size for m in members if want(m.filename))
        if declared > limits.bytes:
            raise UnsafeArchiveError(f"{name} would extract to {declared >> 20} MiB "
                                     f"(at most {limits.bytes >> 20} MiB)")
        tree = Tree()
        folders: set[str] = set()
        chosen: list[tuple[str, zipfile.ZipInfo]] = []
        for member in members:
            rel = _checked(name, member, limits, tree)
            if rel is None:
                continue
            parents = PurePosixPath(rel).parents
            folders.update(p.as_posix() for p in parents if p.as_posix() != ".")
            if member.is_dir():
                folders.add(rel)
                continue
            if rel in tree.listed:
                raise UnsafeArchiveError(f"{name}: {shown(rel)} appears twice")
            tree.listed.append(rel)
            chosen.append((rel, member))
        clash = sorted(folders.intersection(tree.listed))
        if clash:
            raise UnsafeArchiveError(f"{name}: {shown(clash[0])} is both a file and a folder")
        budget = limits.bytes
        for rel, member in chosen:
            if not want(rel):
                continue
            cap = min(budget, limits.file_bytes if limits.file_bytes is not None else budget)
            content = _inflate(zf, member, name, rel, cap + 1)
            if limits.file_bytes is not None and len(content) > limits.file_bytes:
                tree.oversize[rel] = max(len(content), member.file_size)
                continue
            if len(content) > budget:
                raise UnsafeArchiveError(f"{name} holds more than {limits.bytes >> 20} MiB "
                                         "to read")
            budget -= len(content)
            tree.files[rel] = content
    return tree.finish()


def _checked(name: str, member: zipfile.ZipInfo, limits: TreeLimits, tree: Tree) -> str | None:
    """The member's relative path; None when it is skipped (a note says why when it matters)."""
    raw = member.filename
    path = PurePosixPath(raw.replace("\\", "/"))
    if path.is_absolute() or raw.startswith(("/", "\\")) or (path.parts and
                                                            ":" in path.parts[0]):
        raise UnsafeArchiveError(f"{name}: entry {shown(raw)!r} has an absolute path")
    if ".." in path.parts:
        raise UnsafeArchiveError(f"{name}: entry {shown(raw)!r} contains '..'")
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeArchiveError(f"{name}: entry {shown(raw)!r} is a symbolic link")
    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UnsafeArchiveError(f"{name}: entry {shown(raw)!r} is not a regular file")
    if not path.parts or any(ignored(part) for part in path.parts):
        return None
    if len(path.parts) - (0 if member.is_dir() else 1) > limits.depth:
        raise UnsafeArchiveError(f"{name}: folders are nested more than {limits.depth} deep "
                                 f"({shown(raw)})")
    rel = path.as_posix()
    if any(len(part.encode("utf-8", "surrogatepass")) > limits.name_bytes
           for part in path.parts) or len(rel.encode("utf-8", "surrogatepass")) > \
            limits.path_bytes:
        tree.skip(rel, "its name is longer than a file system allows")
        return None
    return rel


def _inflate(zf: zipfile.ZipFile, member: zipfile.ZipInfo, name: str, rel: str,
             cap: int) -> bytes:
    """At most ``cap`` decompressed bytes of ``member``, read in chunks (a lying size never
    inflates more than one chunk past ``cap``)."""
    chunks: list[bytes] = []
    got = 0
    try:
        with zf.open(member) as stream:
            while got < cap:
                chunk = stream.read(min(CHUNK, cap - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
    except (zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, EOFError,
            OSError, ValueError) as exc:
        raise UnsafeArchiveError(f"{name}: cannot read {shown(rel)!r} ({exc})") from None
    data = b"".join(chunks)
    if len(data) < cap and len(data) != member.file_size:
        raise UnsafeArchiveError(f"{name}: {shown(rel)!r} has a wrong size")
    return data

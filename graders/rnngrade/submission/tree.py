"""Reading a submission's files without leaving it: the one owner of what is read and skipped.

Every file of a submission (``grade``, ``batch``, ``ci``) is read through here. Nothing is
followed out of the submission: each folder is opened relative to its parent's descriptor with
``O_NOFOLLOW``, so a folder swapped for a link between listing and opening is refused, and a
file is opened the same way and checked again on its descriptor (``fstat``) before one byte is
read. Symbolic links, hard links to files elsewhere (a regular file with more than one link),
named pipes, devices and sockets are skipped with a note. The walk is iterative (a 2,000-deep
folder is an error at ``depth``, never a RecursionError) and bounded in depth, names listed, files
kept and bytes actually read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import SubmissionError

#: Names skipped everywhere, in folders, zips and batch folders alike (besides hidden names:
#: ``.git``, ``.ipynb_checkpoints``, ``.DS_Store`` ...).
IGNORED_NAMES = frozenset({"__pycache__", "__MACOSX", "Thumbs.db", "desktop.ini"})
MAX_NOTES = 20  # skip notes kept per submission; the rest are counted
CHUNK = 64 * 1024

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a pipe swapped in after the check must not block the open; O_NOCTTY: nor a tty
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def ignored(name: str) -> bool:
    """Names never read: hidden files and folders, caches, archive and desktop debris."""
    return name.startswith(".") or name in IGNORED_NAMES


class TreeError(SubmissionError, ValueError):
    """A submission over a limit, or a part of it that cannot be read; says which, for the
    student."""


@dataclass(frozen=True)
class TreeLimits:
    """What one submission may hold. ``file_bytes``: files larger are listed, not read."""

    depth: int = 32  # folders below the top
    files: int = 2000  # regular files, ignored names aside
    entries: int = 20_000  # names listed, of every kind, ignored ones included
    bytes: int = 50 * 1024 * 1024  # bytes actually read, all files together
    file_bytes: int | None = None
    name_bytes: int = 255  # one name (the usual file-system limit)
    path_bytes: int = 1024  # a path relative to the top


@dataclass
class Tree:
    """What was found: ``files`` maps relative POSIX paths to the bytes read; ``listed`` holds
    every regular file (read or not); ``oversize`` those over ``file_bytes`` (path → size);
    ``notes`` what was skipped and why, in the grader's words."""

    files: dict[str, bytes] = field(default_factory=dict)
    listed: list[str] = field(default_factory=list)
    oversize: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: int = 0

    def skip(self, rel: str, why: str) -> None:
        self.skipped += 1
        if self.skipped <= MAX_NOTES:
            self.notes.append(f"{shown(rel)} was not read: {why}")

    def finish(self) -> Tree:
        if self.skipped > MAX_NOTES:
            self.notes.append(f"... and {self.skipped - MAX_NOTES} more were not read")
        self.listed.sort()
        return self


def shown(rel: str, limit: int = 120) -> str:
    """A path short enough for a note (the renderers escape it)."""
    return rel if len(rel) <= limit else rel[:limit - 20] + "…" + rel[-19:]


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISLNK(mode):
        return "it is a symbolic link (links are not followed)"
    if stat.S_ISFIFO(mode):
        return "it is a named pipe, not a regular file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a regular file"
    return "it is not a regular file"


HARD_LINK = "it is a hard link to a file elsewhere (links are not followed)"


def read_tree(root: Path, *, want: Callable[[str], bool] = lambda rel: True,
              limits: TreeLimits = TreeLimits()) -> Tree:
    """Every regular file under the folder ``root`` (itself not a link); bytes of those
    ``want(rel)`` accepts. Raises TreeError when over ``limits`` or unreadable."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise TreeError(_open_error(root.name, exc, root)) from None
    return _walk(fd, root.name, want, limits)


def read_tree_below(top: Path, parts: tuple[str, ...], *,
                    want: Callable[[str], bool] = lambda rel: True,
                    limits: TreeLimits = TreeLimits()) -> Tree | None:
    """Like ``read_tree`` for the folder ``top/parts...``, where ``top`` is trusted and no part
    below it may be a link. None when a part is missing; TreeError when one is a link or not a
    folder."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # trusted: may be a link
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TreeError(_open_error(top.name, exc)) from None
    for number, part in enumerate(parts):
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError as exc:
            message = _open_error("/".join(parts[:number + 1]), exc, (part, fd))
            os.close(fd)
            raise TreeError(message) from None
        os.close(fd)
        fd = child
    return _walk(fd, "/".join(parts), want, limits)


def read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (not a link, not hard-linked elsewhere), at most
    ``max_bytes``; TreeError otherwise."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise TreeError(_open_error(path.name, exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise TreeError(f"{shown(path.name)} cannot be graded: {kind_of(info.st_mode)}")
    try:
        fd = os.open(path, _FILE_FLAGS)
    except OSError as exc:
        raise TreeError(_open_error(path.name, exc)) from None
    try:
        why = _not_plain(os.fstat(fd), info)
        if why:
            raise TreeError(f"{shown(path.name)} cannot be graded: {why}")
        data = _read_fd(fd, max_bytes + 1)
    except OSError as exc:
        raise TreeError(_open_error(path.name, exc)) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise TreeError(f"{shown(path.name)} is larger than {_size(max_bytes)}")
    return data


_Frame = tuple[int, str, list[str]]  # (folder fd, its relative prefix, names left)


def _walk(top_fd: int, label: str, want: Callable[[str], bool], limits: TreeLimits) -> Tree:
    """The files under the open folder ``top_fd`` (closed on the way out, as is every folder
    opened below it), depth first in sorted order."""
    tree = Tree()
    budget = limits.bytes
    listed = 0
    # every fd on the stack is closed on the way out
    stack: list[_Frame] = [(top_fd, "", [])]
    try:
        stack[0] = (top_fd, "", _names(top_fd, label, label, limits.entries))
        listed += len(stack[-1][2])
        while stack:
            fd, prefix, names = stack[-1]
            if not names:
                os.close(fd)
                stack.pop()
                continue
            name = names.pop()
            if ignored(name):
                continue
            rel = prefix + name
            info = _stat_entry(fd, name, rel, label, limits)
            if stat.S_ISDIR(info.st_mode):
                listed += _enter(stack, fd, name, rel, info, label, limits, listed)
            else:
                budget -= _take_file(tree, fd, name, rel, info, label, want, limits, budget)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return tree.finish()


def _stat_entry(fd: int, name: str, rel: str, label: str,
                limits: TreeLimits) -> os.stat_result:
    """The ``lstat`` of ``name`` in the folder ``fd``, once its name and path are checked
    against the limits; TreeError otherwise."""
    if len(os.fsencode(name)) > limits.name_bytes or \
            len(os.fsencode(rel)) > limits.path_bytes:
        raise TreeError(f"{label}: a path is longer than {limits.path_bytes} bytes "
                        f"({shown(rel)})")
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError as exc:
        raise TreeError(f"{label}: {_open_error(rel, exc)}") from None


def _enter(stack: list[_Frame], fd: int, name: str, rel: str, info: os.stat_result,
           label: str, limits: TreeLimits, listed: int) -> int:
    """Open the folder ``name`` in ``fd`` (listed as ``info``) and push it, with its names, on
    ``stack`` (pushed before it is checked, so it is closed on the way out); the number of
    names listed. TreeError when too deep, unopenable, swapped or over the entries left."""
    if len(stack) > limits.depth:
        raise TreeError(f"{label}: folders are nested more than {limits.depth} "
                        f"deep ({shown(rel)})")
    try:
        child = os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise TreeError(f"{label}: {_open_error(rel, exc, (name, fd))}") from None
    stack.append((child, rel + "/", []))
    if _same(os.fstat(child), info) is False:
        raise TreeError(f"{label}: {shown(rel)} changed while it was read")
    children = _names(child, label, rel, limits.entries - listed)
    stack[-1] = (child, rel + "/", children)
    return len(children)


def _take_file(tree: Tree, fd: int, name: str, rel: str, info: os.stat_result, label: str,
               want: Callable[[str], bool], limits: TreeLimits, budget: int) -> int:
    """List the entry ``name`` in ``fd`` (``info``) on ``tree`` and read it when wanted; the
    bytes kept, to take from ``budget``. Non-regular files and hard links are skipped with a
    note; TreeError past the file count or the byte budget."""
    if not stat.S_ISREG(info.st_mode):
        tree.skip(rel, kind_of(info.st_mode))
        return 0
    if info.st_nlink > 1:
        tree.skip(rel, HARD_LINK)
        return 0
    if len(tree.listed) >= limits.files:
        raise TreeError(f"{label} holds more than {limits.files} files")
    tree.listed.append(rel)
    if not want(rel):
        return 0
    if limits.file_bytes is not None and info.st_size > limits.file_bytes:
        tree.oversize[rel] = info.st_size
        return 0
    data = _read_at(fd, name, rel, info, tree, min(budget, limits.file_bytes or budget))
    if data is None:
        return 0
    if limits.file_bytes is not None and len(data) > limits.file_bytes:
        tree.oversize[rel] = len(data)
        return 0
    if len(data) > budget:
        raise TreeError(f"{label} holds more than {_size(limits.bytes)} to read")
    tree.files[rel] = data
    return len(data)


def _read_at(dir_fd: int, name: str, rel: str, info: os.stat_result, tree: Tree,
             cap: int) -> bytes | None:
    """At most ``cap + 1`` bytes of ``name`` in ``dir_fd``, or None (skipped, with a note) when
    what is opened is no longer the plain file that was listed."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        tree.skip(rel, f"it cannot be opened ({exc.strerror})")
        return None
    try:
        why = _not_plain(os.fstat(fd), info)
        if why:
            tree.skip(rel, why)
            return None
        return _read_fd(fd, cap + 1)
    except OSError as exc:
        tree.skip(rel, f"it cannot be read ({exc.strerror})")
        return None
    finally:
        os.close(fd)


def _not_plain(opened: os.stat_result, listed: os.stat_result) -> str:
    """Why the opened file is not the plain file that was listed ("" when it is)."""
    if not stat.S_ISREG(opened.st_mode):
        return kind_of(opened.st_mode)
    if not _same(opened, listed):
        return "it changed while it was read"
    if opened.st_nlink > 1:
        return HARD_LINK
    return ""


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _names(fd: int, label: str, rel: str, room: int) -> list[str]:
    """The names in the open folder ``fd``, in reverse order (popped from the end: sorted);
    TreeError past ``room`` names."""
    names: list[str] = []
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                names.append(entry.name)
                if len(names) > room:
                    raise TreeError(f"{label} holds too many files and folders")
    except OSError as exc:
        raise TreeError(_open_error(rel, exc)) from None
    return sorted(names, reverse=True)


def _read_fd(fd: int, cap: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < cap:
        chunk = os.read(fd, min(CHUNK, cap - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _open_error(name: str, exc: OSError, at: Path | tuple[str, int] | None = None) -> str:
    """Why ``name`` cannot be opened, in words; ``at`` (a path, or a name in a folder's
    descriptor) is looked at again to tell a link: a folder swapped for a link fails
    O_NOFOLLOW | O_DIRECTORY with ENOTDIR or ELOOP."""
    import errno

    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        try:
            if isinstance(at, tuple):
                mode = os.stat(at[0], dir_fd=at[1], follow_symlinks=False).st_mode
            elif at is not None:
                mode = os.lstat(at).st_mode
            else:
                mode = stat.S_IFLNK if exc.errno == errno.ELOOP else 0
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode):
            return f"{shown(name)} is a symbolic link (links are not followed)"
        return f"{shown(name)} is not a folder"
    if exc.errno == errno.ENOENT:
        return f"{shown(name)} does not exist"
    return f"{shown(name)} cannot be read ({exc.strerror})"


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} B"

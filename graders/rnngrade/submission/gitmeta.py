"""What a student's ``.git`` folder says (the branch checked out, the time of HEAD's commit),
read as hostile input and without running git.

Only what is needed is read: ``HEAD``, the one ref it names (its loose file, else its line in
``packed-refs``) and the one commit object (loose, or in a pack, found through the pack's
``.idx``: stored whole, or rebuilt from a chain of at most ``MAX_DELTA_DEPTH`` deltas in that
pack). Every file is opened below ``.git`` one folder at a time with ``O_NOFOLLOW`` and
``O_NONBLOCK``, checked on its descriptor to be a regular file, and read up to a bound
(``MAX_*``): no link is followed, no named pipe waited on, no object inflated past
``MAX_COMMIT_BYTES``, nothing copied. What cannot be read so gives no time, with a note saying
why: a commit only in ``objects/info/alternates``, or a delta on an object outside its pack,
among them.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rnngrade.errors import SubmissionError
from rnngrade.results.text import clean_name
from rnngrade.submission.tree import kind_of

MAX_REF_BYTES = 4096  # HEAD or one loose ref
MAX_PACKED_REFS_BYTES = 1 << 20
MAX_LOOSE_BYTES = 1 << 20  # one loose object, compressed
MAX_COMMIT_BYTES = 64 << 10  # one commit, inflated
MAX_PACKS = 64  # .idx files looked at
MAX_PACK_NAMES = 1000  # names listed in objects/pack
MAX_SYMREFS = 5  # "ref: ..." followed in a row
MAX_DELTA_DEPTH = 64  # deltas in a row down to a whole object (git makes at most 50)
MAX_DELTA_BYTES = 2 * MAX_COMMIT_BYTES  # one delta, inflated
CHUNK = 16 << 10

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|//|@\{|/\.|\.lock(/|$)|[/.]$")
_IDX_MAGIC = b"\xfftOc"
_COMMIT, _OFS_DELTA, _REF_DELTA = 1, 6, 7
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


class Unreadable(SubmissionError):
    """Why the ``.git`` folder gives no answer, in the grader's words (for a note); never leaves
    this module."""


@dataclass(frozen=True)
class CommitTime:
    """HEAD's committer time in seconds since 1970, as written (None when there is none), and
    why there is none when a ``.git`` folder is there ("" when there is no ``.git``)."""

    seconds: int | None
    note: str = ""


def head_commit_time(entry: Path, *, follow_top: bool = False) -> CommitTime:
    """The committer time of HEAD in ``entry/.git``; ``follow_top``: ``entry`` itself may be a
    link (a path the instructor gave), else it must be a plain folder."""
    try:
        with _git_folder(entry, follow_top) as git:
            if git is None:
                return CommitTime(None)
            ref, sha = _resolve_head(git)
            return CommitTime(_committer_seconds(_commit(git, sha, ref)))
    except Unreadable as exc:
        return CommitTime(None, str(exc))
    except FileNotFoundError as exc:
        return CommitTime(None, f"{clean_name(Path(exc.filename or '?').name, 80)} is missing")
    except zlib.error:
        return CommitTime(None, "the commit object is damaged (it does not inflate)")
    except (OSError, ValueError) as exc:
        return CommitTime(None, f"it cannot be read ({type(exc).__name__})")


def checked_out_branch(checkout: Path) -> str:
    """The branch ``checkout/.git/HEAD`` names ("" when detached, not a clone or unreadable)."""
    try:
        with _git_folder(checkout, follow_top=True) as git:
            if git is None:
                return ""
            ref = _symref(_read(git, ("HEAD",), MAX_REF_BYTES))
    except (Unreadable, OSError, ValueError):
        return ""
    return ref.removeprefix("refs/heads/") if ref and ref.startswith("refs/heads/") else ""


@contextlib.contextmanager
def _git_folder(entry: Path, follow_top: bool) -> Iterator[int | None]:
    """The open ``entry/.git`` folder (None when ``entry`` is no folder or has no ``.git``)."""
    try:
        top = os.open(entry, _DIR if not follow_top else _DIR & ~os.O_NOFOLLOW)
    except OSError:
        yield None
        return
    try:
        try:
            info = os.stat(".git", dir_fd=top, follow_symlinks=False)
        except FileNotFoundError:
            yield None
            return
        if not stat.S_ISDIR(info.st_mode):
            raise Unreadable(f".git {_not_a_folder(info.st_mode)}")
        git = os.open(".git", _DIR, dir_fd=top)
        try:
            yield git
        finally:
            os.close(git)
    finally:
        os.close(top)


def _not_a_folder(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "is a file, not a folder (a worktree's or a submodule's pointer is not followed)"
    return kind_of(mode).replace("it is", "is", 1)


@contextlib.contextmanager
def _opened(git: int, parts: tuple[str, ...]) -> Iterator[tuple[int, os.stat_result]]:
    """The regular file ``.git/<parts>`` open for reading, with its ``fstat``; each folder on
    the way opened without following a link. FileNotFoundError when it is not there."""
    fds: list[int] = []
    try:
        folder = git
        for part in parts[:-1]:
            try:
                folder = os.open(part, _DIR, dir_fd=folder)
            except OSError as exc:
                _raise_kind(folder, part, parts, exc)
            fds.append(folder)
        name = parts[-1]
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{'/'.join(parts)}: {kind_of(info.st_mode)}")
        fd = os.open(name, _FILE, dir_fd=folder)
        fds.append(fd)
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != \
                (info.st_dev, info.st_ino):
            raise Unreadable(f"{'/'.join(parts)}: it changed while it was read")
        yield fd, opened
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _raise_kind(folder: int, part: str, parts: tuple[str, ...], exc: OSError) -> None:
    """Re-raise a failure to open the folder ``part`` as what it is (missing stays missing)."""
    if isinstance(exc, FileNotFoundError):
        raise exc
    try:
        mode = os.stat(part, dir_fd=folder, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    where = "/".join(parts[:parts.index(part) + 1])
    raise Unreadable(f"{where}: {kind_of(mode) if mode else 'it cannot be opened'}") from None


def _read(git: int, parts: tuple[str, ...], limit: int) -> bytes:
    """All of the small regular file ``.git/<parts>`` (Unreadable past ``limit`` bytes)."""
    with _opened(git, parts) as (fd, info):
        if info.st_size > limit:
            raise Unreadable(f"{'/'.join(parts)} is larger than {limit >> 10} KiB")
        data = os.read(fd, limit + 1)
    if len(data) > limit:
        raise Unreadable(f"{'/'.join(parts)} is larger than {limit >> 10} KiB")
    return data


def _symref(data: bytes) -> str:
    """The ref a ``ref: refs/...`` file names ("" when it holds an object id)."""
    text = data.decode("utf-8", "replace").strip()
    if not text.startswith("ref:"):
        return ""
    ref = text[4:].strip()
    if not ref.startswith("refs/") or len(ref) > 1024 or _BAD_REF.search(ref):
        raise Unreadable(f"HEAD names an impossible ref ({clean_name(ref, 80)!r})")
    return ref


def _resolve_head(git: int) -> tuple[str, str]:
    """The ref HEAD names ("HEAD" when detached) and the object id it comes to."""
    ref, data = "HEAD", _read(git, ("HEAD",), MAX_REF_BYTES)
    for _ in range(MAX_SYMREFS):
        target = _symref(data)
        if not target:
            sha = data.decode("ascii", "replace").strip()
            if not _SHA.fullmatch(sha):
                raise Unreadable(f"{clean_name(ref, 80)} holds no object id")
            return ref, sha
        ref = target
        try:
            data = _read(git, tuple(ref.split("/")), MAX_REF_BYTES)
        except FileNotFoundError:
            return ref, _packed_ref(git, ref)
    raise Unreadable(f"HEAD names refs that name refs more than {MAX_SYMREFS} times")


def _packed_ref(git: int, ref: str) -> str:
    """The object id of ``ref`` in ``packed-refs``."""
    try:
        data = _read(git, ("packed-refs",), MAX_PACKED_REFS_BYTES)
    except FileNotFoundError:
        raise Unreadable(f"{clean_name(ref, 80)} does not exist (no commit yet)") from None
    wanted = ref.encode()
    for line in data.splitlines():
        sha, _, name = line.partition(b" ")
        if name.strip() == wanted and _SHA.fullmatch(sha.decode("ascii", "replace")):
            return sha.decode("ascii")
    raise Unreadable(f"{clean_name(ref, 80)} does not exist (no commit yet)")


def _commit(git: int, sha: str, ref: str) -> bytes:
    """The header of the commit ``sha``: loose, else whole in a pack."""
    try:
        return _loose(git, sha)
    except FileNotFoundError:
        pass
    found = _packed(git, sha)
    if found is None:
        raise Unreadable(f"the commit {clean_name(ref, 80)} names is not in .git/objects (an "
                         "alternates file is not followed)")
    return found


def _loose(git: int, sha: str) -> bytes:
    parts = ("objects", sha[:2], sha[2:])
    with _opened(git, parts) as (fd, info):
        if info.st_size > MAX_LOOSE_BYTES:
            raise Unreadable(f"the commit object is larger than {MAX_LOOSE_BYTES >> 20} MiB")
        data = os.read(fd, MAX_LOOSE_BYTES + 1)
    inflated = zlib.decompressobj().decompress(data, MAX_COMMIT_BYTES + 64)
    head, zero, body = inflated.partition(b"\0")
    kind, _, size = head.partition(b" ")
    if not zero or not size.isdigit() or len(size) > 20:
        raise Unreadable("the commit object is damaged")
    if kind != b"commit":
        raise Unreadable(f"HEAD names a {clean_name(kind.decode('ascii', 'replace'), 20)}, "
                         "not a commit")
    _check_size(int(size))
    return body[:int(size)]


def _check_size(size: int) -> None:
    if size > MAX_COMMIT_BYTES:
        raise Unreadable(f"the commit object inflates to {size} bytes, more than "
                         f"{MAX_COMMIT_BYTES >> 10} KiB: not read")


def _packed(git: int, sha: str) -> bytes | None:
    """The commit ``sha`` from the first pack whose index lists it (None: in none)."""
    names = _pack_indexes(git)
    key = bytes.fromhex(sha)
    for name in names:
        offset = _index_offset(git, ("objects", "pack", name), key)
        if offset is not None:
            return _pack_commit(git, ("objects", "pack", name[:-4] + ".pack"), offset,
                                len(key))
    return None


def _pack_indexes(git: int) -> list[str]:
    """The names of the ``.idx`` files in ``objects/pack`` (links and the like included: they
    are refused when opened), sorted."""
    fds: list[int] = []
    names: list[str] = []
    try:
        for part in ("objects", "pack"):
            try:
                fds.append(os.open(part, _DIR, dir_fd=fds[-1] if fds else git))
            except FileNotFoundError:
                return []
        with os.scandir(fds[-1]) as listing:
            for number, item in enumerate(listing):
                if number >= MAX_PACK_NAMES:
                    raise Unreadable(f"objects/pack holds more than {MAX_PACK_NAMES} names")
                if item.name.endswith(".idx"):
                    names.append(item.name)
    finally:
        for fd in reversed(fds):
            os.close(fd)
    if len(names) > MAX_PACKS:
        raise Unreadable(f"objects/pack holds more than {MAX_PACKS} packs")
    return sorted(names)


def _pread(fd: int, size: int, at: int, total: int) -> bytes:
    if at < 0 or at + size > total:
        raise Unreadable("a pack index is damaged")
    data = os.pread(fd, size, at)
    if len(data) != size:
        raise Unreadable("a pack index is damaged")
    return data


def _index_offset(git: int, parts: tuple[str, ...], key: bytes) -> int | None:
    """Where the object ``key`` starts in the pack of the version-2 index ``parts`` (None when
    it is not listed); a binary search, a few small reads whatever the index's size."""
    width = len(key)
    with _opened(git, parts) as (fd, info):
        total = info.st_size
        if _pread(fd, 8, 0, total) != _IDX_MAGIC + (2).to_bytes(4, "big"):
            raise Unreadable(f"{parts[-1]}: not a version 2 pack index")
        fanout = _pread(fd, 1024, 8, total)
        count = int.from_bytes(fanout[-4:], "big")
        if 8 + 1024 + count * (width + 8) + 2 * width > total:
            raise Unreadable(f"{parts[-1]}: a pack index is damaged")
        low = int.from_bytes(fanout[4 * key[0] - 4:4 * key[0]], "big") if key[0] else 0
        high = int.from_bytes(fanout[4 * key[0]:4 * key[0] + 4], "big")
        if not 0 <= low <= high <= count:
            raise Unreadable(f"{parts[-1]}: a pack index is damaged")
        while low < high:
            middle = (low + high) // 2
            name = _pread(fd, width, 1032 + middle * width, total)
            if name == key:
                base = 1032 + count * (width + 4)
                offset = int.from_bytes(_pread(fd, 4, base + middle * 4, total), "big")
                if offset & 0x80000000:
                    large = base + count * 4 + (offset & 0x7FFFFFFF) * 8
                    offset = int.from_bytes(_pread(fd, 8, large, total), "big")
                return offset
            low, high = (middle + 1, high) if name < key else (low, middle)
    return None


def _pack_commit(git: int, parts: tuple[str, ...], offset: int, width: int) -> bytes:
    """The commit at ``offset`` of the pack ``parts``: stored whole, or as a chain of deltas
    (``OFS_DELTA``/``REF_DELTA``, at most ``MAX_DELTA_DEPTH`` of them, each base found in the
    same pack) on a whole object. Every object of the chain is bounded as one commit is."""
    with _opened(git, parts) as (fd, info):
        total = info.st_size
        if offset < 12 or offset >= total or os.pread(fd, 4, 0) != b"PACK":
            raise Unreadable(f"{parts[-1]}: a pack is damaged")
        deltas: list[bytes] = []
        seen: set[int] = set()
        while True:
            if offset in seen or len(deltas) > MAX_DELTA_DEPTH:
                raise Unreadable(f"the commit is stored as a chain of more than "
                                 f"{MAX_DELTA_DEPTH} deltas in a pack: not read")
            seen.add(offset)
            kind, size, at = _pack_header(fd, offset, total, parts)
            if kind == _OFS_DELTA:
                back, at = _base_distance(fd, at, total, parts)
                base = offset - back
                if not 12 <= base < offset:
                    raise Unreadable(f"{parts[-1]}: a pack is damaged")
            elif kind == _REF_DELTA:
                key = os.pread(fd, width, at)
                at += width
                found = _index_offset(git, (*parts[:-1], parts[-1][:-5] + ".idx"), key) \
                    if len(key) == width else None
                if found is None:
                    raise Unreadable("the commit is stored as a delta on an object outside "
                                     "its pack: not read")
                base = found
            if kind in (_OFS_DELTA, _REF_DELTA):
                deltas.append(_inflate(fd, at, size, MAX_DELTA_BYTES, parts))
                offset = base
                continue
            if kind != _COMMIT:
                raise Unreadable(f"HEAD names a {_TYPES.get(kind, 'damaged object')}, "
                                 "not a commit")
            _check_size(size)
            data = _inflate(fd, at, size, MAX_COMMIT_BYTES, parts)
            break
    for delta in reversed(deltas):
        data = _apply_delta(data, delta, parts)
    return data


def _pack_header(fd: int, offset: int, total: int, parts: tuple[str, ...]) -> tuple[int, int,
                                                                                       int]:
    """The type and inflated size of the pack entry at ``offset``, and where its data starts."""
    header = os.pread(fd, 16, offset)
    if not header or offset >= total:
        raise Unreadable(f"{parts[-1]}: a pack is damaged")
    kind, size, used = (header[0] >> 4) & 7, header[0] & 15, 1
    shift = 4
    while header[used - 1] & 0x80:
        if used >= len(header):
            raise Unreadable(f"{parts[-1]}: a pack is damaged")
        size |= (header[used] & 0x7F) << shift
        shift += 7
        used += 1
    return kind, size, offset + used


def _base_distance(fd: int, at: int, total: int, parts: tuple[str, ...]) -> tuple[int, int]:
    """An ``OFS_DELTA``'s distance back to its base, and where its delta data starts."""
    data = os.pread(fd, 10, at)
    if not data:
        raise Unreadable(f"{parts[-1]}: a pack is damaged")
    distance, used = data[0] & 0x7F, 1
    while data[used - 1] & 0x80:
        if used >= len(data):
            raise Unreadable(f"{parts[-1]}: a pack is damaged")
        distance = ((distance + 1) << 7) | (data[used] & 0x7F)
        used += 1
    return distance, at + used


def _inflate(fd: int, at: int, size: int, limit: int, parts: tuple[str, ...]) -> bytes:
    """The ``size`` bytes the zlib stream at ``at`` inflates to (``size`` at most ``limit``;
    at most ``MAX_LOOSE_BYTES`` read)."""
    if size > limit:
        raise Unreadable(f"the commit object inflates to {size} bytes, more than "
                         f"{limit >> 10} KiB: not read")
    inflate = zlib.decompressobj()
    out = b""
    start = at
    while len(out) < size and not inflate.eof and at - start < MAX_LOOSE_BYTES:
        chunk = os.pread(fd, CHUNK, at)
        if not chunk:
            break
        at += len(chunk)
        out += inflate.decompress(chunk, size - len(out))
    if len(out) != size:
        raise Unreadable(f"{parts[-1]}: a pack is damaged")
    return out


def _delta_size(delta: bytes, at: int, parts: tuple[str, ...]) -> tuple[int, int]:
    size, shift = 0, 0
    while True:
        if at >= len(delta) or shift > 63:
            raise Unreadable(f"{parts[-1]}: a delta in the pack is damaged")
        byte = delta[at]
        size |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return size, at


def _apply_delta(base: bytes, delta: bytes, parts: tuple[str, ...]) -> bytes:
    """``base`` rebuilt by git's delta instructions (copies from the base, inserted bytes);
    the result bounded as a commit is."""
    damaged = Unreadable(f"{parts[-1]}: a delta in the pack is damaged")
    source, at = _delta_size(delta, 0, parts)
    target, at = _delta_size(delta, at, parts)
    if source != len(base):
        raise damaged
    _check_size(target)
    out = bytearray()
    while at < len(delta):
        op = delta[at]
        at += 1
        if op & 0x80:
            start = length = 0
            for bit in range(4):
                if op & (1 << bit):
                    if at >= len(delta):
                        raise damaged
                    start |= delta[at] << (8 * bit)
                    at += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    if at >= len(delta):
                        raise damaged
                    length |= delta[at] << (8 * bit)
                    at += 1
            length = length or 0x10000
            if start + length > len(base):
                raise damaged
            piece = base[start:start + length]
        elif op:
            piece = delta[at:at + op]
            if len(piece) != op:
                raise damaged
            at += op
        else:
            raise damaged
        if len(out) + len(piece) > target:
            raise damaged
        out += piece
    if len(out) != target:
        raise damaged
    return bytes(out)


def _committer_seconds(commit: bytes) -> int:
    """The seconds of the ``committer`` line of a commit's header."""
    for line in commit.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            fields = line.rsplit(b" ", 2)
            if len(fields) == 3 and fields[1].isdigit() and len(fields[1]) <= 20:
                return int(fields[1])
            break
    raise Unreadable("the commit has no readable committer date")

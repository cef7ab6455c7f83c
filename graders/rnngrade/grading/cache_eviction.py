"""Keeping the grader's disk cache (``grading.reference_cache``) from growing without bound.

Every edit of the grader or of a lab makes fresh keys, and lab 11's recorded training calls
alone are files of 7-24 MB, so a cache that only ever adds would fill a disk over a term. The
cache is therefore laid out by what can still be hit::

    <cache folder>/<generation>/<lab>-<lab version>/<SHA-256 of the key>.json

- ``generation``: 16 hex digits of a digest of the cache's format, the grader's version and the
  digest of its source. Another generation's files can never be hit by this grader.
- ``<lab>-<lab version>``: the lab's name and 16 hex digits of a digest of its content digest.
  Another version of the same lab can never be hit either; other labs stay.

The first time a process uses the cache for one lab version (its grading run starts) it tidies
once: the other generations' folders and the other versions of that lab are removed whole (no
walk of their files), and then the files left are kept under a size cap, the least recently
used removed first. A hit touches its file (its modification time is the "last used"), and a
process that has written another eighth of the cap since it last tidied tidies again, so one
long batch stays under the cap too.

The cap is ``$RNNGRADE_CACHE_MAX``: a size such as ``500M``, ``2G`` or ``1.5G`` (powers of
1024; ``K``, ``M``, ``G``, ``T``, an optional ``B``), a number of bytes, or ``none`` for no
cap; unset or empty, ``DEFAULT_MAX_BYTES`` (1 GiB: lab 3's values for one version are about
50 MB, lab 11's about 15 MB, every lab together about 150 MB, so several versions of the whole
course fit). A value that does not parse costs one note on stderr and the default applies.

Other grading processes may use the same folder at once: files are written atomically by
their writers; a file or folder removed under a reader is a cache miss (the value is
computed); a writer whose folder was removed under it makes it again. Only names of the
cache's own forms are ever removed, so a cache folder pointed at a folder with other content
loses none of it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import time
from pathlib import Path

MAX_ENV = "RNNGRADE_CACHE_MAX"
DEFAULT_MAX_BYTES = 1 << 30
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_GENERATION = re.compile(r"^[0-9a-f]{16}$")
_LAB_VERSION = re.compile(r"^(?P<lab>[A-Za-z0-9_][A-Za-z0-9_.-]*)-[0-9a-f]{16}$")
_ENTRY = re.compile(r"^[0-9a-f]{64}\.json$")
_TEMPORARY = re.compile(r"^\.[0-9a-f]{64}\.json\.\d+\.[0-9a-f]+\.tmp$")  # files.atomic_path
_STALE_TEMPORARY_S = 3600.0  # a writer's temporary file this old outlived its writer
_REWALK_FRACTION = 8  # tidy again after writing this fraction of the cap

_tidied: set[tuple[str, str, str]] = set()  # (cache folder, generation, lab version) done
_written: dict[str, int] = {}  # cache folder -> bytes this process wrote since it tidied
_warned_env = False


def max_bytes() -> int | None:
    """The size cap (``$RNNGRADE_CACHE_MAX``); None for no cap."""
    global _warned_env
    chosen = os.environ.get(MAX_ENV, "").strip()
    if not chosen:
        return DEFAULT_MAX_BYTES
    if chosen.lower() in ("none", "unlimited"):
        return None
    match = _SIZE.match(chosen)
    if match is not None:
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if not _warned_env:
        _warned_env = True
        print(f"rnngrade: {MAX_ENV}={chosen!r} is not a size (such as 500M or 2G, or none); "
              f"the cache is kept under {DEFAULT_MAX_BYTES >> 20} MiB", file=sys.stderr)
    return DEFAULT_MAX_BYTES


def place(key: dict) -> tuple[str, str]:
    """``(generation, lab version)``: the names of the folders ``key``'s file sits in."""
    facts = repr((key.get("format"), key.get("rnngrade"), key.get("source"))).encode()
    generation = hashlib.sha256(facts).hexdigest()[:16]
    lab = re.sub(r"[^A-Za-z0-9_.-]", "_", str(key.get("lab", ""))).lstrip(".-") or "_"
    version = hashlib.sha256(str(key.get("digest", "")).encode()).hexdigest()[:16]
    return generation, f"{lab}-{version}"


def folder_of(root: Path, key: dict) -> Path:
    """The folder of ``key``'s file under the cache folder ``root`` (see the module
    docstring); tidies the cache the first time this process uses that folder."""
    generation, lab_version = place(key)
    done = (str(root), generation, lab_version)
    if done not in _tidied:
        _tidied.add(done)
        tidy(root, generation, lab_version)
    return root / generation / lab_version


def tidy(root: Path, generation: str, lab_version: str) -> None:
    """Remove what this grader can no longer hit (other generations, other versions of the
    lab ``lab_version`` is of), then keep the rest under the size cap."""
    lab = _LAB_VERSION.match(lab_version)
    for entry in _scan(root):
        if entry.name == generation:
            continue
        if _GENERATION.match(entry.name) and _is_dir(entry):
            shutil.rmtree(entry.path, ignore_errors=True)
        elif _ENTRY.match(entry.name) or _TEMPORARY.match(entry.name):
            _unlink(entry.path)  # the flat layout of earlier graders: never hit again
    if lab is not None:
        for entry in _scan(root / generation):
            other = _LAB_VERSION.match(entry.name)
            if other is not None and other["lab"] == lab["lab"] and entry.name != lab_version \
                    and _is_dir(entry):
                shutil.rmtree(entry.path, ignore_errors=True)
    enforce_cap(root)


def enforce_cap(root: Path) -> None:
    """Remove the least recently used files until the cache holds at most the cap (and any
    writer's temporary file that outlived its writer)."""
    _written[str(root)] = 0
    cap = max_bytes()
    files: list[tuple[float, int, str]] = []
    now = time.time()
    for generation in _scan(root):
        if not (_GENERATION.match(generation.name) and _is_dir(generation)):
            continue
        for lab_version in _scan(Path(generation.path)):
            if not (_LAB_VERSION.match(lab_version.name) and _is_dir(lab_version)):
                continue
            for entry in _scan(Path(lab_version.path)):
                kind = _ENTRY.match(entry.name) or _TEMPORARY.match(entry.name)
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:  # removed meanwhile
                    continue
                if kind is None or not entry.is_file(follow_symlinks=False):
                    continue
                if entry.name.startswith(".") and now - stat.st_mtime > _STALE_TEMPORARY_S:
                    _unlink(entry.path)
                    continue
                files.append((stat.st_mtime, stat.st_size, entry.path))
    if cap is None:
        return
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= cap:
            break
        _unlink(path)
        total -= size


def used(path: Path) -> None:
    """Mark the entry at ``path`` as just used (a hit): the cap removes it last."""
    try:
        os.utime(path)
    except OSError:  # removed meanwhile, or a cache this process may read but not write
        pass


def wrote(root: Path, size: int) -> None:
    """Count ``size`` bytes this process wrote under ``root``; tidy again after an eighth of
    the cap."""
    key = str(root)
    _written[key] = _written.get(key, 0) + size
    cap = max_bytes()
    if cap is not None and _written[key] * _REWALK_FRACTION > cap:
        enforce_cap(root)


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:  # not there (yet, or any more), or not a folder
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # already removed by another process
        pass

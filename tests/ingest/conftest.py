"""Helpers of the ingest tests: hostile submissions built where git cannot hold them, and the
checks every graded attack must pass."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from pathlib import Path
from xml.etree import ElementTree

from rnngrade.cli import main
from rnngrade.paths import course_root

ROOT = course_root()
HOSTILE = ROOT / "fixtures" / "submissions" / "hostile"
LAB1 = ROOT / "fixtures" / "submissions" / "lab1"
STUB = (ROOT / "assignments" / "lab1" / "rnn.py").read_text(encoding="utf-8")
REPORTS = ("results.json", "feedback.html", "feedback.md", "junit.xml")
COMMON = ["--lab", "lab1", "--inprocess", "--device", "cpu"]


def grade(path: Path, out: Path) -> tuple[int, dict]:
    """``rnngrade grade`` in this process; the exit code and results.json."""
    code = main(["grade", str(path), *COMMON, "--out", str(out)])
    return code, reports_of(out)


def reports_of(folder: Path) -> dict:
    """Every report is written and parses; results.json as a dict."""
    for name in REPORTS:
        assert (folder / name).is_file(), f"{name} missing in {folder}"
    ElementTree.parse(folder / "junit.xml")
    assert (folder / "feedback.md").read_text(encoding="utf-8")
    result = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert result["lab"] == "lab1"
    return result


def snapshot(*folders: Path) -> dict[str, str]:
    """Every path under ``folders`` (links not followed; walked without recursion) with a digest
    of what it is."""
    seen: dict[str, str] = {}
    stack = [folder for folder in folders if folder.exists()]
    while stack:
        with os.scandir(stack.pop()) as listing:
            for entry in listing:
                info = entry.stat(follow_symlinks=False)
                digest = str(info.st_mode)
                if entry.is_file(follow_symlinks=False) and info.st_size < 1 << 20:
                    digest += hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                seen[entry.path] = digest
    return seen


def course_digest() -> str:
    """The course's solutions and hidden suites, which a link attack would target."""
    h = hashlib.sha256()
    for folder in (ROOT / "solutions", ROOT / "graders" / "suites"):
        for path in sorted(folder.rglob("*.py")):
            h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


def lying_zip(path: Path, name: str, inflated: int, declared: int) -> Path:
    """A zip whose one member inflates to ``inflated`` zero bytes but declares ``declared``
    (in the local header and the central directory alike)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block, crc, parts = bytes(1 << 20), 0, []
    for _ in range(inflated >> 20):
        parts.append(packer.compress(block))
        crc = zlib.crc32(block, crc)
    parts.append(packer.flush())
    data = b"".join(parts)
    encoded = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data),
                        declared, len(encoded), 0) + encoded
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, 0, 8, 0, 0x21, crc,
                          len(data), declared, len(encoded), 0, 0, 0, 0,
                          0o100644 << 16, 0) + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


def deep_folder(top: Path, depth: int, leaf: str = "rnn.py") -> Path:
    """``top/d/d/.../d/leaf`` with ``depth`` folders, built relative to descriptors (the path
    may be longer than the system allows a path to be)."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf_fd = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf_fd, STUB.encode())
        os.close(leaf_fd)
    finally:
        os.close(fd)
    return top


def remove_deep(top: Path) -> None:
    """Remove a tree built by ``deep_folder`` without recursion (shutil.rmtree recurses)."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while True:
            names = os.listdir(fds[-1])
            if "d" not in names:
                break
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        while fds:
            fd = fds.pop()
            for name in os.listdir(fd):
                if name == "d":
                    os.rmdir(name, dir_fd=fd)
                else:
                    os.unlink(name, dir_fd=fd)
            os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
    top.rmdir()

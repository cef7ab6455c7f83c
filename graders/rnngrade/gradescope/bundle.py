"""``rnngrade gradescope``: one lab's Gradescope autograder as ``autograder.zip``.

The zip holds, at its root, ``setup.sh`` and ``run_autograder`` (``scripts``) and under
``course/`` the files the grader needs for this one lab: the ``rnngrade`` package, the lab's hidden
suite and reference solution, the report templates and the project files pip installs from. Other
labs' suites and solutions are left out. Entries are sorted and dated 1980-01-01, so the same
course files always give the same bytes. The build reports how many tests each visibility of the
lab's rubric covers (Gradescope shows ``visible`` ones as soon as a submission is graded).
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import UsageError
from rnngrade.files import atomic_path
from rnngrade.gradescope.scripts import COURSE_DIR, run_script, setup_script
from rnngrade.grading.rubric import load_rubric
from rnngrade.labs import Lab, get_lab
from rnngrade.paths import course_root

ZIP_NAME = "autograder.zip"
PROJECT_FILES = ("pyproject.toml", "README.md", "conftest.py")
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


class BundleError(UsageError):
    """The bundle cannot be built (a lab without a hidden suite, an unusable output folder)."""


@dataclass(frozen=True)
class Bundle:
    lab: str
    path: Path
    files: int  # entries in the zip
    size: int  # bytes
    inprocess: bool
    visibility: dict[str, int] = field(default_factory=dict)  # rubric visibility → tests


def _tree(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if path.is_file() and not path.is_symlink() and not any(
                p in SKIPPED_PARTS or p.startswith(".") or p.endswith(".egg-info")
                for p in parts):
            yield path


def course_files(lab: Lab, root: Path) -> list[Path]:
    """The course files one lab's autograder needs, relative to ``root`` (sorted)."""
    files = [root / name for name in PROJECT_FILES if (root / name).is_file()]
    for folder in (root / "graders" / "rnngrade", lab.suite_dir(root),
                   lab.solution_path(root).parent, root / "templates"):
        files += _tree(folder)
    return sorted({f.relative_to(root) for f in files})


def _entry(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    return info


def build_bundle(lab_name: str, out: Path, *, torch_version: str, device: str = "auto",
                 inprocess: bool = False) -> Bundle:
    """Write ``out/autograder.zip`` for ``lab_name`` (see the module docstring)."""
    lab = get_lab(lab_name)
    root = course_root()
    rubric_path = lab.rubric_path(root)
    if not rubric_path.is_file():
        raise BundleError(f"{lab.name} has no hidden suite yet ({rubric_path} is missing)")
    visibility = Counter(e.visibility for e in load_rubric(rubric_path).entries.values())
    if out.exists() and not out.is_dir():
        raise BundleError(f"{out} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    path = out / ZIP_NAME
    files = course_files(lab, root)
    with atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w") as bundle:
        bundle.writestr(_entry("setup.sh", True), setup_script(lab.name, torch_version))
        bundle.writestr(_entry("run_autograder", True),
                        run_script(lab.name, inprocess=inprocess, device=device))
        for relative in files:
            bundle.writestr(_entry(f"{COURSE_DIR}/{relative.as_posix()}", False),
                            (root / relative).read_bytes())
    return Bundle(lab.name, path, len(files) + 2, path.stat().st_size, inprocess,
                  dict(visibility))

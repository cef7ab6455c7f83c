"""``rnngrade release``: the student repository, built from the course.

What goes in: per lab the README, the stub and the notebook (generated from the reference now),
the public tests and the public test vectors; the student side of the ``rnngrade`` package
(``rnngrade.release.package``); a conftest that registers only the student plugin; an installable
``pyproject.toml``; a README; the public-tests workflow (and, on request, the grading workflow).
What never goes in: solutions, hidden suites, mutants, the grading engine, the sandbox, instructor
tools. The release checks both before it reports success: the shipped package imports on its own,
and the leak audit (``rnngrade.release.audit``) finds nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rnngrade import __version__
from rnngrade.authoring.generate import notebook_for, public_fixtures, stub_for
from rnngrade.course.config import Course
from rnngrade.course.schedule import answer_leaks
from rnngrade.errors import ExitCode, RnngradeError
from rnngrade.harness import markers
from rnngrade.labs import Lab, available_labs
from rnngrade.paths import course_root, templates_dir
from rnngrade.release.audit import find_leaks
from rnngrade.release.package import public_test_imports, relative_path, student_modules

TORCH_VERSION = "2.13.0"
# PyTorch's CPU wheel index: PyPI's Linux torch wheel pulls the CUDA libraries (several GB).
# Every torch install names it (Makefile, the Gradescope setup.sh, READMEs, workflows).
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
MANIFEST = ".rnngrade-release.json"
CONFTEST = '''"""Registers the pytest plugin of the public tests (student side of rnngrade)."""

pytest_plugins = ["rnngrade.harness.checks.plugin"]
'''
GITIGNORE = """__pycache__/
*.py[cod]
*.egg-info/
.venv/
.pytest_cache/
.ipynb_checkpoints/
build/
"""
BASE_DEPENDENCIES = ("numpy>=1.24,<3", "pytest>=8,<10", "nbformat>=5.9,<6")
TORCH_LINE = '"torch==2.13.0"'  # as written in templates/workflows/*.yml
SKIPPED_NAMES = ("__pycache__", ".ipynb_checkpoints", ".pytest_cache")


class ReleaseError(RnngradeError):
    """The release cannot be built, or failed its own checks."""

    exit_code = ExitCode.FAILURES


@dataclass
class LabInfo:
    """What the student README says about a lab."""

    name: str
    title: str
    module: str
    points: float
    readme: bool
    first_function: str


@dataclass
class ReleaseReport:
    out: Path
    labs: list[str]
    files: list[str]
    modules: list[str]
    warnings: list[str] = field(default_factory=list)


def public_tests(lab: Lab, root: Path) -> list[Path]:
    return sorted(lab.assignment_dir(root).glob("test_*_public.py"))


def public_points(paths: list[Path]) -> dict[str, float]:
    """Lab → public points of these test files as ``pytest assignments/labN`` counts them: the
    ``@pytest.mark.points(n)`` of every collected item (a parametrised test counts per case)."""
    import contextlib
    import io
    from collections import defaultdict

    import pytest

    class Collector:
        total: dict[str, float] = defaultdict(float)

        def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
            for item in items:
                marker = item.get_closest_marker(markers.POINTS.name)
                if marker is not None:
                    self.total[Path(item.path).parent.name] += float(marker.args[0])

    if not paths:
        return {}
    collector = Collector()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--import-mode=importlib", "-o", "addopts=", *map(str, paths)]
    with contextlib.redirect_stdout(io.StringIO()) as log:
        code = pytest.main(args, plugins=[collector])
    if code != pytest.ExitCode.OK:
        raise ReleaseError(f"cannot collect the public tests {[p.name for p in paths]} "
                           f"(pytest exit {int(code)}):\n{log.getvalue()[-2000:]}")
    return dict(collector.total)


def default_labs(root: Path) -> list[Lab]:
    """The labs ready for students: a reference and at least one public test."""
    return [lab for lab in available_labs(root) if public_tests(lab, root)]


def lab_files(lab: Lab, root: Path, warnings: list[str]) -> dict[str, bytes]:
    """Release path → content for one lab: generated files fresh from the reference, the rest
    of ``assignments/labN`` as the instructor wrote it."""
    folder = lab.assignment_dir(root)
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if path.is_file() and not any(p.startswith(".") or p in SKIPPED_NAMES for p in parts) \
                and path.suffix not in (".pyc", ".pyo"):
            files[f"assignments/{lab.name}/{'/'.join(parts)}"] = path.read_bytes()
    for item in (stub_for(lab, root), notebook_for(lab, root)):
        name = item.path.relative_to(root).as_posix()
        if name in files and files[name] != item.content:
            warnings.append(f"{name} is stale in the course (released the regenerated one; run "
                            "`rnngrade generate`)")
        files[name] = item.content
    vectors, mistakes = public_fixtures(lab, root)  # the known mistakes' outputs, not their code
    committed = lab.public_fixture_path(root)
    if vectors is not None:
        files[f"fixtures/public/{lab.name}.npz"] = vectors.content
    elif committed.exists():
        files[f"fixtures/public/{lab.name}.npz"] = committed.read_bytes()
    if mistakes is not None:
        files[f"fixtures/public/{mistakes.path.name}"] = mistakes.content
    return files


def render_template(template: str, **context: object) -> str:
    from rnngrade.results.render import environment

    return environment().get_template(template).render(**context)


def workflow(name: str, torch_version: str | None) -> str:
    """A workflow of ``templates/workflows`` with the torch pin of this release (no torch line
    when no released lab needs torch)."""
    text = (templates_dir() / "workflows" / name).read_text(encoding="utf-8")
    if torch_version is None:
        return "".join(line for line in text.splitlines(keepends=True) if TORCH_LINE not in line)
    return text.replace(TORCH_LINE, f'"torch=={torch_version}"')


def build_files(labs: list[Lab], root: Path, *, torch_version: str, grading_workflow: bool,
                name: str, warnings: list[str]) -> tuple[dict[str, bytes], list[str]]:
    """Release path → content of every file; and the shipped rnngrade modules."""
    files: dict[str, bytes] = {}
    tests = [path for lab in labs for path in public_tests(lab, root)]
    points = public_points(tests)
    infos = []
    for lab in labs:
        files.update(lab_files(lab, root, warnings))
        if not public_tests(lab, root):
            warnings.append(f"{lab.name} has no public tests yet")
        infos.append(LabInfo(lab.name, lab.title, lab.module, points.get(lab.name, 0.0),
                             (lab.assignment_dir(root) / "README.md").exists(),
                             lab.functions[0]))
    modules = student_modules(public_test_imports(tests))
    for module, path in modules.items():
        files[relative_path(module, path)] = path.read_bytes()
    uses_torch = any(lab.uses_torch for lab in labs)
    dependencies = list(BASE_DEPENDENCIES) + ([f"torch=={torch_version}"] if uses_torch else [])
    files["pyproject.toml"] = render_template(
        "release/pyproject.toml.j2", name=name, version=__version__,
        dependencies=dependencies).encode()
    example = next((i for i in infos if i.points), infos[0])
    files["README.md"] = render_template(
        "release/README.md.j2", labs=infos, example=example, torch=uses_torch,
        torch_version=torch_version, grading=grading_workflow,
        dependencies=[d.split(">")[0].split("=")[0] for d in dependencies]).encode()
    files["conftest.py"] = CONFTEST.encode()
    files[".gitignore"] = GITIGNORE.encode()
    files[".github/workflows/public-tests.yml"] = workflow(
        "student.yml", torch_version if uses_torch else None).encode()
    if grading_workflow:
        files[".github/workflows/grading.yml"] = workflow("grading.yml", torch_version).encode()
    return files, list(modules)


def _clear_previous(out: Path) -> None:
    """Empty ``out`` of a previous release (the files its manifest lists); refuse a folder that
    holds anything else than ``.git``."""
    manifest = out / MANIFEST
    if manifest.exists():
        listed = json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
        for name in [*listed, MANIFEST]:
            path = (out / name).resolve()
            if path.is_relative_to(out.resolve()) and path.is_file():
                path.unlink()
        for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
            if ".git" not in folder.relative_to(out).parts and not any(folder.iterdir()):
                folder.rmdir()
        return
    others = [p.name for p in out.iterdir() if p.name != ".git"] if out.exists() else []
    if others:
        raise ReleaseError(f"{out} is not empty and holds no previous release ({MANIFEST}); "
                           f"choose an empty folder (found: {', '.join(sorted(others)[:5])})")


VERIFY = """
import importlib, sys
from pathlib import Path
root = Path(sys.argv[1]).resolve()
for name in sys.argv[2:]:
    importlib.import_module(name)
outside = sorted(name for name, module in list(sys.modules.items())
                 if name.split(".")[0] == "rnngrade"
                 and not str(getattr(module, "__file__", "") or "").startswith(str(root)))
if outside:
    sys.exit("imported from outside the release: " + ", ".join(outside))
"""


def verify_imports(out: Path, modules: list[str]) -> None:
    """Import every shipped module from the release alone, in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RNNGRADE_ROOT")}
    env["PYTHONPATH"] = str(out)
    done = subprocess.run([sys.executable, "-c", VERIFY, str(out), *modules], cwd=out, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise ReleaseError("the released rnngrade package does not import on its own:\n"
                           + (done.stderr or done.stdout)[-3000:])


def build_release(out: Path, labs: list[Lab] | None = None, *, root: Path | None = None,
                  torch_version: str = TORCH_VERSION, grading_workflow: bool = False,
                  name: str = "rnn-course", verify: bool = True, course: Course | None = None,
                  force: bool = False, now: dt.datetime | None = None) -> ReleaseReport:
    """Write the student repository into ``out`` and check it; see the module docstring.
    With a ``course`` file, refuse (unless ``force``) when the shipped code answers a lab whose
    due date has not passed (``rnngrade.course.schedule``)."""
    root = root or course_root()
    labs = default_labs(root) if labs is None else labs
    if not labs:
        raise ReleaseError("no lab to release: a lab needs a reference solution and public tests")
    warnings: list[str] = []
    files, modules = build_files(labs, root, torch_version=torch_version,
                                 grading_workflow=grading_workflow, name=name, warnings=warnings)
    if course is not None:
        answers = answer_leaks(course, labs, available_labs(root), files,
                               now or dt.datetime.now(dt.timezone.utc))
        reasons = [answer.reason() for answer in answers]
        if reasons and not force:
            raise ReleaseError("not released, it would give away answers of a lab still open: "
                               + "; ".join(reasons)
                               + ". Release after that due date, or pass --force")
        warnings += [f"released anyway (--force): {r}" for r in reasons]
    _clear_previous(out)
    out.mkdir(parents=True, exist_ok=True)
    for relative, content in sorted(files.items()):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    manifest = {"rnngrade": __version__, "labs": [lab.name for lab in labs],
                "files": {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    if verify:
        verify_imports(out, modules)
        leaks = find_leaks(out, root)
        if leaks:
            shown = "\n".join(f"  {leak}" for leak in leaks[:20])
            raise ReleaseError(f"the release in {out} leaks {len(leaks)} line(s) of solutions, "
                               f"hidden suites or mutants:\n{shown}")
    return ReleaseReport(out, [lab.name for lab in labs], sorted(files), modules, warnings)

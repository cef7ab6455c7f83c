"""Everything generated from a lab's reference: the student stub, the lab notebook, the public test
vectors and the sample submissions (the reference and the stub as a folder, a notebook and a zip).

``rnngrade generate`` writes them; ``stale_files`` tells which committed files are out of date
(a test fails on those).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import io
import stat
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rnngrade.authoring.edit_tables import edit_tables
from rnngrade.authoring.notebooks import lab_notebook, module_to_notebook, notebook_bytes
from rnngrade.authoring.stubs import make_stub
from rnngrade.diagnosis.mutants import (
    Mutant,
    load_mutant_table,
    load_source_as_module,
    strip_markers,
)
from rnngrade.errors import MutantError
from rnngrade.harness.checks.compare import compare
from rnngrade.harness.checks.edit_prints import EDITS
from rnngrade.harness.checks.seeding import seed_everything
from rnngrade.harness.checks.structure import flatten
from rnngrade.harness.checks.tolerance import Tolerance, tolerance_for
from rnngrade.harness.checks.vectors import PublicVectors, dump_vectors
from rnngrade.labs import Lab
from rnngrade.paths import course_root


@dataclass
class Generated:
    path: Path
    content: bytes
    kind: str  # "stub" | "notebook" | "vectors" | "fingerprints" | "sample"


def stub_for(lab: Lab, root: Path | None = None) -> Generated:
    root = root or course_root()
    source = lab.solution_path(root).read_text(encoding="utf-8")
    test_path = f"assignments/{lab.name}"
    return Generated(lab.stub_path(root), make_stub(source, test_path).encode(), "stub")


def notebook_for(lab: Lab, root: Path | None = None) -> Generated:
    """``assignments/labN/labN.ipynb``: the lab README and the stub as a notebook."""
    root = root or course_root()
    readme = lab.assignment_dir(root) / "README.md"
    notebook = lab_notebook(lab.name, lab.title, lab.module, stub_for(lab, root).content.decode(),
                            readme.read_text(encoding="utf-8") if readme.exists() else None)
    return Generated(lab.assignment_dir(root) / f"{lab.name}.ipynb", notebook_bytes(notebook),
                     "notebook")


def _load_cases(lab: Lab, root: Path) -> dict[str, tuple]:
    path = lab.public_cases_path(root)
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_public_cases_{lab.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    seed_everything(0)
    spec.loader.exec_module(module)
    return dict(module.CASES)


def vectors_for(lab: Lab, root: Path | None = None) -> Generated | None:
    root = root or course_root()
    cases = _load_cases(lab, root)
    if not cases:
        return None
    source = strip_markers(lab.solution_path(root).read_text(encoding="utf-8"))
    reference = load_source_as_module(source, f"_generate_{lab.name}")
    stored = {name: _run_case(reference, spec) for name, spec in cases.items()}
    return Generated(lab.public_fixture_path(root), dump_vectors(stored), "vectors")


def _run_case(module: Any, spec: tuple) -> dict[str, Any]:
    """``{"function", "args", "outputs"}`` of one public case run on ``module``."""
    function, args = spec[0], tuple(spec[1])
    seed_everything(0)
    if callable(function):  # a chain such as backward-of-forward: function(module, *args)
        outputs = function(module, *copy.deepcopy(args))
        function = function.__name__
    else:
        outputs = getattr(module, function)(*copy.deepcopy(args))
    if len(spec) > 2:
        outputs = tuple(outputs[i] for i in spec[2])
    return {"function": function, "args": args, "outputs": _detach(outputs)}


def fingerprints_for(lab: Lab, root: Path | None = None,
                     expected: Generated | None = None) -> Generated | None:
    """``fixtures/public/labN_mistakes.npz``: every known mistake's outputs on the public inputs,
    so the public tests can name a mistake without shipping its code; and per float64 case the
    sealed table of the formula slips the grader names by an edit (``edit_tables``).
    ``expected``: the lab's ``vectors_for``, when the caller has it."""
    root = root or course_root()
    cases = _load_cases(lab, root)
    table = lab.mutants_path(root)
    if not cases or not table.exists():
        return None
    source = lab.solution_path(root).read_text(encoding="utf-8")
    expected = expected or vectors_for(lab, root)
    assert expected is not None
    with tempfile.NamedTemporaryFile(suffix=".npz") as tmp:
        tmp.write(expected.content)
        tmp.flush()
        vectors = PublicVectors(Path(tmp.name))
        stored = mistake_fingerprints(vectors, cases, load_mutant_table(table).mutants, source)
        reference = load_source_as_module(strip_markers(source), f"_edits_{lab.name}")
        stored.update(edit_tables(reference, lab.functions, vectors, cases,
                                  lambda module, spec: _run_case(module, spec)["outputs"]))
    path = lab.public_fixture_path(root)
    return Generated(path.with_name(f"{path.stem}_mistakes.npz"), dump_vectors(stored),
                     "fingerprints")


def mistake_fingerprints(vectors: PublicVectors, cases: dict[str, tuple],
                         mutants: list[Mutant], source: str) -> dict[str, dict[str, Any]]:
    """Per public case and mistake whose outputs differ from the reference's: the mistake's
    name, line, hint and outputs (stored under ``"<case>::<mistake>"``)."""
    stored: dict[str, dict[str, Any]] = {}
    for mutant in mutants:
        try:
            module = load_source_as_module(mutant.apply(source), f"_fingerprint_{mutant.name}")
        except (MutantError, SyntaxError):
            continue  # a mutant that no longer applies: validate reports it, with its line
        for name, spec in cases.items():
            try:  # a mistake may overflow (softmax of -x): its warnings say nothing to an author
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outputs = _run_case(module, spec)["outputs"]
            except Exception:  # noqa: BLE001 - a mistake that raises here has no fingerprint
                continue
            if _same_within(outputs, vectors.case(name).outputs):
                continue
            stored[f"{name}::{mutant.name}"] = {
                "function": mutant.function, "args": (name,),
                "outputs": {"name": mutant.name, "text": mutant.description, "hint": mutant.hint,
                            "value": outputs}}
    return {entry: value for entry, value in stored.items()
            if not _coincides(entry, stored, vectors)}


def _coincides(entry: str, stored: dict[str, dict[str, Any]], vectors: PublicVectors) -> bool:
    """Whether another mistake's outputs on the same public case equal this one's within the
    case's tolerance: the case cannot tell the two apart, so neither is named there (a public
    test would otherwise name a mistake the student may not have)."""
    case = entry.split("::")[0]
    tol = tolerance_for(*vectors.case(case).args)
    mine = flatten(stored[entry]["outputs"]["value"], "f", None)
    for other, value in stored.items():
        if other == entry or other.split("::")[0] != case:
            continue
        theirs = flatten(value["outputs"]["value"], "f", None)
        if len(mine) == len(theirs) and all(
                la == lb and _compares(a, b, tol) for (la, a), (lb, b) in zip(mine, theirs)):
            return True
    return False


def _compares(a: Any, b: Any, tol: Tolerance) -> bool:
    try:
        return compare(a, b, tol, "f").ok
    except Exception:  # noqa: BLE001 - values that cannot be compared do not coincide
        return False


def _same_within(a: Any, b: Any) -> bool:
    try:
        return _same(a, b)
    except (TypeError, ValueError, AttributeError):
        return False


def _detach(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return type(value)(_detach(v) for v in value)
    if isinstance(value, dict):
        return {k: _detach(v) for k, v in value.items()}
    if hasattr(value, "detach") and type(value).__module__.startswith("torch"):
        return value.detach()
    return value


def sample_submissions(lab: Lab, root: Path | None = None) -> list[Generated]:
    """The reference and the stub as sample submissions: a folder each, a notebook, a zip."""
    root = root or course_root()
    folder = root / "fixtures" / "submissions" / lab.name
    reference = strip_markers(lab.solution_path(root).read_text(encoding="utf-8")).encode()
    notebook = module_to_notebook(reference.decode(), f"{lab.name} — reference solution")
    return [
        Generated(folder / "reference" / lab.filename, reference, "sample"),
        Generated(folder / "stub" / lab.filename, stub_for(lab, root).content, "sample"),
        Generated(folder / f"reference_{lab.name}.ipynb", notebook_bytes(notebook), "sample"),
        Generated(folder / "reference.zip", _zip({f"{lab.name}/{lab.filename}": reference}),
                  "sample"),
    ]


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, data)
    return buffer.getvalue()


def public_fixtures(lab: Lab, root: Path | None = None, *,
                    kept_in: Callable[[str, Callable[[], FixturePair]], FixturePair] | None = None
                    ) -> FixturePair:
    """(``vectors_for``, ``fingerprints_for``) of ``lab``, computed on one torch thread, once
    per process for the same inputs (every file of the lab's solution and suite folders: the
    reference, its public cases, the mutants, ``lab.yaml``); the release and the staleness
    check ask for the same pair.

    kept_in: on a miss in this process, ``kept_in(name, compute)`` gives the pair (``name``
    says the lab and the digest of its inputs: a store shared by several processes keeps it
    under that name, and calls ``compute`` when it has none)."""
    root = root or course_root()
    digest = _inputs_digest(lab, root)
    key = (lab.name, str(root), digest)
    if key not in _FIXTURES:
        def compute() -> FixturePair:
            with _one_torch_thread(lab):
                vectors = vectors_for(lab, root)
                mistakes = fingerprints_for(lab, root, vectors) if vectors is not None else None
            return vectors, mistakes

        _FIXTURES[key] = compute() if kept_in is None else kept_in(f"{lab.name}-{digest}",
                                                                   compute)
    return _FIXTURES[key]


FixturePair = tuple["Generated | None", "Generated | None"]
_FIXTURES: dict[tuple[str, str, str], FixturePair] = {}


def _inputs_digest(lab: Lab, root: Path) -> str:
    """SHA-256 of the names and bytes of every file in the lab's solution and suite folders."""
    digest = hashlib.sha256()
    for folder in (lab.solution_path(root).parent, lab.suite_dir(root)):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(root)}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def generated_files(lab: Lab, root: Path | None = None) -> list[Generated]:
    items = [stub_for(lab, root), notebook_for(lab, root)]
    items += [v for v in public_fixtures(lab, root) if v is not None]
    return items + sample_submissions(lab, root)


@contextlib.contextmanager
def _one_torch_thread(lab: Lab) -> Iterator[None]:
    """torch on one thread while a torch lab's vectors are computed: the course's figures were
    measured so, the vectors then do not depend on the machine's cores, and a shared machine
    is not oversubscribed."""
    if not lab.uses_torch:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def write_generated(lab: Lab, root: Path | None = None) -> list[Path]:
    written = []
    for item in generated_files(lab, root):
        item.path.parent.mkdir(parents=True, exist_ok=True)
        if not item.path.exists() or item.path.read_bytes() != item.content:
            item.path.write_bytes(item.content)
            written.append(item.path)
    return written


def stale_files(lab: Lab, root: Path | None = None) -> list[str]:
    """Generated files that are missing or differ from what the reference produces now."""
    problems = []
    for item in generated_files(lab, root):
        if not item.path.exists():
            problems.append(f"{item.path} is missing")
        elif item.kind in ("vectors", "fingerprints"):
            if not _same_vectors(item.path, item.content):
                problems.append(f"{item.path} differs from the vectors the reference computes"
                                if item.kind == "vectors" else
                                f"{item.path} differs from the outputs the known mistakes give "
                                "on the public inputs")
        elif item.path.read_bytes() != item.content:
            problems.append(f"{item.path} differs from what the reference generates")
    return problems


def _same_vectors(path: Path, content: bytes) -> bool:
    with tempfile.NamedTemporaryFile(suffix=".npz") as tmp:
        tmp.write(content)
        tmp.flush()
        fresh = PublicVectors(Path(tmp.name))
        committed = PublicVectors(path)
        if fresh.names() != committed.names():
            return False
        return all(_same_edits(fresh.case(n).outputs, committed.case(n).outputs)
                   if n.endswith(f"::{EDITS}") else
                   _same(fresh.case(n).__dict__, committed.case(n).__dict__)
                   for n in fresh.names())


# An edit table's digests are of its outputs put on a grid (``edit_prints``); another machine's
# rounding (see below) moves an output across a grid line only for an element within ~1e-13 of
# one, so nearly every digest is the same, never all: a table is stale when it has other rows,
# or when more than 1 % of their digests differ.
_EDIT_DIGESTS_CHANGED = 0.01


def _same_edits(fresh: dict[str, np.ndarray], committed: dict[str, np.ndarray]) -> bool:
    if fresh.keys() != committed.keys() or fresh["digests"].shape != committed["digests"].shape:
        return False
    if not all(np.array_equal(fresh[k], committed[k]) for k in ("leaves", "starts")):
        return False
    if not _same(fresh["scales"], committed["scales"]):
        return False
    changed = np.any(fresh["digests"] != committed["digests"], axis=1)
    return float(np.mean(changed)) <= _EDIT_DIGESTS_CHANGED


# Committed vectors were computed on the author's machine. Another CPU computes the same float32
# operations with other vector instructions (AVX-512 against AVX2), and float64 sums in another
# BLAS order: a few ulps, which a recurrence, a training step or an FFT of large values carries
# across the whole array. So the error is measured against the array's largest entry: float32
# within 1e-5 of it (about 80 ulps), float64 within 1e-11; a stale file differs by far more.
# A Python float may come from float32 arithmetic (a training loss), so it gets float32's.
_SAME_RTOL_DOUBLE, _SAME_RTOL_SINGLE = 1e-11, 1e-5


def _same(a: Any, b: Any) -> bool:
    """Whether freshly computed vectors ``a`` equal committed ones ``b`` up to another machine's
    rounding (see the comment above)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "detach") and hasattr(b, "detach"):
        a, b = a.detach().numpy(), b.detach().numpy()
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind not in "fc":
            return bool(np.array_equal(a, b))
        real = a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)
        return _close_to_scale(a, b, _SAME_RTOL_DOUBLE if real >= 8 else _SAME_RTOL_SINGLE)
    if isinstance(a, float) and isinstance(b, float):
        return _close_to_scale(np.array(a), np.array(b), _SAME_RTOL_SINGLE)
    return bool(a == b)


def _close_to_scale(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    """NaN and ±inf in the same places, and every finite difference within ``rtol`` of the
    largest finite ``|b|`` (plus a tiny absolute floor for arrays of zeros)."""
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    infinite, finite = np.isinf(b), np.isfinite(b)
    if not np.array_equal(a[infinite], b[infinite]):
        return False
    if not finite.any():
        return True
    if not np.isfinite(a[finite]).all():
        return False
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    scale = float(np.max(np.abs(b[finite].astype(wide))))
    error = float(np.max(np.abs(a[finite].astype(wide) - b[finite].astype(wide))))
    return error <= rtol * scale + 1e-14

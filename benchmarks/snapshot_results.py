"""Snapshot what every lab's reference, stub and known mistakes are graded, to compare two versions
of the grader field by field (every field of ``results.json`` but timings).

    python benchmarks/snapshot_results.py --out before.json            # every lab
    python benchmarks/snapshot_results.py --out after.json --lab lab3   # some labs
    python benchmarks/snapshot_results.py --compare before.json after.json

Submissions are graded in-process. Tests graded by outcome (training runs) are left out unless
``--outcome``: they cost minutes per submission, and ``rnngrade validate`` checks their verdicts.
``--compare`` prints each field that differs (path, before, after) and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from rnngrade.grading.engine import grade, shared_grader
from rnngrade.labs import available_labs, get_lab
from rnngrade.paths import course_root

# Fields that measure how long something took, not what it found.
TIMING_KEYS = frozenset({"seconds", "timings", "duration", "elapsed", "started", "finished",
                         "graded_at", "execution_time"})


def without_timings(value: Any) -> Any:
    """``value`` (plain JSON data) with every timing field removed, recursively."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def _grade_source(source: str, lab_name: str, filename: str, outcome: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rnngrade-snapshot-") as tmp:
        folder = Path(tmp) / "submission"
        folder.mkdir()
        (folder / filename).write_text(source, encoding="utf-8")
        result = grade(folder, lab_name, inprocess=True, outcome=outcome)
    return without_timings(result.to_dict())


def snapshot_lab(lab_name: str, outcome: bool) -> dict[str, Any]:
    lab = get_lab(lab_name)
    assets = shared_grader(lab.name, inprocess=True).assets
    reference = assets.reference_source
    graded = {"reference": _grade_source(reference, lab.name, lab.filename, outcome),
              "stub": _grade_source(lab.stub_path().read_text(encoding="utf-8"), lab.name,
                                    lab.filename, outcome)}
    for mutant in assets.mutant_table:
        graded[f"mutant:{mutant.name}"] = _grade_source(mutant.apply(reference), lab.name,
                                                        lab.filename, outcome)
    return graded


def differences(before: Any, after: Any, path: str = "") -> list[str]:
    """Each place where two snapshots differ, as ``path: before -> after``."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                found.append(f"{where}: {'absent' if key not in before else 'present'} -> "
                             f"{'absent' if key not in after else 'present'}")
            else:
                found += differences(before[key], after[key], where)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [d for i, (b, a) in enumerate(zip(before, after))
                for d in differences(b, a, f"{path}[{i}]")]
    return [] if before == after else [f"{path}: {before!r:.200} -> {after!r:.200}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--lab", action="append", default=[])
    parser.add_argument("--outcome", action="store_true")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        found = differences(without_timings(before), without_timings(after))
        print("\n".join(found) if found else "identical (timings aside)")
        return 1 if found else 0
    if args.out is None:
        parser.error("--out or --compare is required")
    labs = args.lab or [lab.name for lab in available_labs(course_root())]
    snapshot = {}
    for name in labs:
        snapshot[name] = snapshot_lab(name, args.outcome)
        print(f"{name}: {len(snapshot[name])} submissions", file=sys.stderr)
    args.out.write_text(json.dumps(snapshot, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

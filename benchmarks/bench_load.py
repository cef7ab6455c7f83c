"""Do scores depend on how busy the machine is? Grade a class idle and again beside busy processes.

    python benchmarks/bench_load.py                       # lab1-3, 60 submissions each, 8 busy
    python benchmarks/bench_load.py --labs lab3 -n 40 --busy 12

For each lab it writes one synthetic class (the reference, every known mistake, the stub, a few
hostile submissions that do not hang), grades it with ``rnngrade batch -j 2`` in the sandbox,
then grades the same class again while ``--busy`` processes spin on the CPUs, and compares every
student's score and every test's score between the two runs. It prints the counts, the wall time
of each run and the machine's load average during the busy one, and exits 1 when any score
differs: a limit that a submission reaches only because the machine is busy is a bug.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from rnngrade.gradebook.batch import BatchOptions, run_batch
from rnngrade.gradebook.store import Gradebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_batch import HANGING  # the hostile kinds that hang: they measure the call limit
from synthetic import make_class

Scores = dict[str, tuple[str, float | None, tuple[tuple[str, float], ...]]]


def spin(deadline: float) -> None:
    """Burn one CPU until ``deadline`` (time.monotonic) has passed."""
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1000003


def grade(folder: Path, out: Path, lab: str, jobs: int) -> tuple[Scores, float]:
    started = time.perf_counter()
    run_batch([folder], BatchOptions(lab, out, jobs=jobs, device="cpu"))
    seconds = time.perf_counter() - started
    book = Gradebook(out / "gradebook.sqlite")
    try:
        scores: Scores = {}
        for row in book.current_rows(lab):
            result = book.load_result(row["id"])
            tests = tuple((t.name, round(t.score, 9)) for t in result.tests)
            scores[row["student_id"]] = (row["status"], row["score"], tests)
    finally:
        book.close()
    return scores, seconds


def compare(lab: str, n: int, jobs: int, busy: int) -> bool:
    with tempfile.TemporaryDirectory(prefix="rnngrade-load-") as tmp:
        folder = Path(tmp) / "class"
        make_class(folder, lab, n, hostile=True, skip=HANGING, hostile_every=10)
        idle, idle_seconds = grade(folder, Path(tmp) / "idle", lab, jobs)
        deadline = time.monotonic() + 3600
        spinners = [multiprocessing.Process(target=spin, args=(deadline,), daemon=True)
                    for _ in range(busy)]
        for process in spinners:
            process.start()
        try:
            loaded, loaded_seconds = grade(folder, Path(tmp) / "busy", lab, jobs)
            load = os.getloadavg()[0]
        finally:
            for process in spinners:
                process.kill()
                process.join()
    differ = sorted(s for s in idle if idle[s] != loaded.get(s))
    missing = sorted(set(idle) ^ set(loaded))
    tests = sum(len(v[2]) for v in idle.values())
    print(f"{lab}: {len(idle)} submissions, {tests} test scores; idle {idle_seconds:.0f} s, "
          f"beside {busy} busy processes {loaded_seconds:.0f} s (load {load:.1f}); "
          f"{len(differ)} differ, {len(missing)} graded in one run only")
    for student in differ[:10]:
        before, after = idle[student], loaded[student]
        changed = [name for (name, a), (_, b) in zip(before[2], after[2]) if a != b]
        print(f"  {student}: {before[1]} idle, {after[1]} busy; tests {', '.join(changed)}")
    return not differ and not missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labs", nargs="+", default=["lab1", "lab2", "lab3"])
    parser.add_argument("-n", type=int, default=60, help="submissions per lab")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--busy", type=int, default=8, help="busy processes beside the batch")
    args = parser.parse_args(argv)
    same = [compare(lab, args.n, args.jobs, args.busy) for lab in args.labs]
    print("identical scores" if all(same) else "SCORES DIFFER under load")
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())

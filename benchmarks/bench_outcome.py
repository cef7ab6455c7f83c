"""The share of a lab's grading time that its tests graded by outcome take, on a batch.

    python benchmarks/bench_outcome.py                      # lab9, 40 submissions, -j 2, sandboxed
    python benchmarks/bench_outcome.py --count 10 --jobs 1  # a quick look
    python benchmarks/bench_outcome.py --lab lab8 --count 4  # lab 8 with its Part B

The batch holds the reference, the stub, every known mistake of the lab and, up to ``--count``,
copies of the reference under other names. It prints the batch's wall time and throughput, the
mean grading time per submission, the outcome tests' share of it (their time over the
submissions' whole grading time, from ``results.json``), and the grader's own share
(``timings.grader_seconds``: what it computes itself, such as the figures it measures on the
returned models). Run it with ``OMP_NUM_THREADS=1`` as the grader's machines do, on an otherwise
idle machine: wall times on a shared one say little.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.gradebook.batch import BatchOptions, run_batch
from rnngrade.labs import get_lab
from rnngrade.paths import course_root


def make_batch(lab_name: str, count: int, folder: Path) -> list[str]:
    """Write the batch into ``folder``; the students' names."""
    lab = get_lab(lab_name)
    samples = course_root() / "fixtures" / "submissions" / lab.name
    reference = (samples / "reference" / lab.filename).read_text(encoding="utf-8")
    sources = {"reference": reference,
               "stub": (samples / "stub" / lab.filename).read_text(encoding="utf-8")}
    for mutant in load_mutant_table(lab.mutants_path()).mutants:
        sources[f"mistake-{mutant.name}"] = mutant.apply(reference)
    copy = 0
    while len(sources) < count:
        copy += 1
        sources[f"copy-{copy:02d}"] = reference + f"\n# copy {copy}\n"
    for name, source in list(sources.items())[:count]:
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return list(sources)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lab", default="lab9")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--inprocess", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rnngrade-bench-outcome-") as tmp:
        source = Path(tmp) / "in"
        source.mkdir()
        names = make_batch(args.lab, args.count, source)
        out = Path(tmp) / "out"
        started = time.perf_counter()
        run_batch([source], BatchOptions(lab=args.lab, out=out, jobs=args.jobs,
                                         inprocess=args.inprocess, device="cpu"))
        wall = time.perf_counter() - started
        total, outcome, grader, scores = [], [], [], {}
        for name in names:
            data = json.loads((out / args.lab / "students" / name / "results.json")
                              .read_text())
            total.append(data["execution_time"])
            grader.append(data.get("timings", {}).get("grader_seconds", 0.0))
            outcome.append(sum(t["execution_time"] for t in data["tests"]
                               if t.get("measurements")))
            scores[name] = (data["score"], data["max_score"])
    print(f"{args.lab}: {len(names)} submissions, -j {args.jobs}, "
          f"{'in-process' if args.inprocess else 'sandboxed'}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  batch wall {wall:.1f} s: {len(names) / wall * 60:.1f} submissions per minute")
    print(f"  grading time per submission: mean {statistics.mean(total):.1f} s, "
          f"median {statistics.median(total):.1f} s, max {max(total):.1f} s")
    share = sum(outcome) / sum(total) if sum(total) else 0.0
    print(f"  tests graded by outcome: mean {statistics.mean(outcome):.1f} s per submission, "
          f"{100 * share:.0f}% of the grading time")
    print(f"  the grader's own share (the reference's expectations, measuring the trained "
          f"models): mean {statistics.mean(grader):.2f} s per submission")
    full = sum(1 for s, m in scores.values() if m and s == m)
    print(f"  full marks: {full} of {len(names)} (the reference and its copies)")


if __name__ == "__main__":
    main()

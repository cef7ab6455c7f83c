"""Cold start: one submission graded by a fresh ``rnngrade`` process, against one ``import torch``.

    python benchmarks/bench_cold.py                  # every lab's reference, batches of 1 and 20
    python benchmarks/bench_cold.py --labs lab1 lab3 -n 3
    python benchmarks/bench_cold.py --large          # also a batch of 200

For ``rnngrade grade`` of each lab's reference (fixtures/submissions/labN/reference, sandboxed)
it prints the median wall time of several runs, split at the moments the process reaches:

- interpreter: Python is up and runs its first line;
- imports: the grading starts (the command line parsed, the grader's modules imported);
- session: the lab's assets are loaded and its hidden suite collected (a pytest session ready);
- checks: the suite has run on the submission (this includes waiting for the zygote, the fork
  server of the sandbox, when it was not ready by then);
- reports: the reports are written; exit: the process has ended (the zygote stopped).

It also prints when the zygote was ready (seconds from the start; it may overlap the phases
before), and the wall time of ``rnngrade batch -j 2`` on 1 and 20 (with --large: 200) lab1
submissions (the reference, each mutant and the stub in turn). Every figure is also given as a
ratio to ``python -c "import torch"``, timed in the same run, interleaved with the others: the
floor, since lab1 has torch checks and the sandbox's worker needs torch too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("interpreter", "imports", "session", "checks", "reports", "exit")

# Runs in the measured process: records when it reaches each moment, through hooks installed as
# the grader's modules are imported (so that nothing is imported earlier than rnngrade would).
CHILD = r"""
import time
T = {"interpreter": time.time()}
import importlib.abc, importlib.util, json, sys

def _patch_engine(m):
    grade, init, run = m.grade, m.Grader.__init__, m.Grader.grade
    def grade_(*a, **k):
        T.setdefault("imports", time.time())
        return grade(*a, **k)
    def init_(self, *a, **k):
        init(self, *a, **k)
        T.setdefault("session", time.time())
    def run_(self, *a, **k):
        try:
            return run(self, *a, **k)
        finally:
            T.setdefault("checks", time.time())
    m.grade, m.Grader.__init__, m.Grader.grade = grade_, init_, run_

def _patch_zygote(m):
    start = m.ZygoteClient._start
    def start_(self):
        start(self)
        T.setdefault("zygote", time.time())
    m.ZygoteClient._start = start_

PATCHES = {"rnngrade.grading.engine": _patch_engine,
           "rnngrade.sandbox.zygote.client": _patch_zygote}

class _Hooks(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        loader = spec.loader
        run_module = loader.exec_module
        def exec_module(module):
            run_module(module)
            PATCHES[name](module)
        loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Hooks())
record, argv = sys.argv[1], sys.argv[2:]
from rnngrade import cli
main = cli.main

def main_():
    code = main(argv)
    T["reports"] = time.time()
    with open(record, "w") as f:
        json.dump({"times": T, "code": code}, f)
    return code

cli.main = main_
if hasattr(cli, "console"):  # the rnngrade command's own exit
    cli.console()
raise SystemExit(main_())
"""


def python() -> str:
    return sys.executable


def timed(command: list[str]) -> float:
    """Wall seconds of ``command`` (its output discarded); raises when it fails."""
    started = time.time()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.time() - started


def import_torch() -> float:
    return timed([python(), "-c", "import torch"])


def grade_once(lab: str, tmp: Path) -> dict[str, float]:
    """Seconds from the start of one ``rnngrade grade`` to each moment (see the docstring)."""
    record, out = tmp / "record.json", tmp / "out"
    submission = ROOT / "fixtures" / "submissions" / lab / "reference"
    started = time.time()
    done = subprocess.run([python(), "-c", CHILD, str(record), "grade", str(submission),
                           "--lab", lab, "--out", str(out), "--device", "cpu"],
                          cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ended = time.time()
    if done.returncode != 0 or not record.exists():
        raise SystemExit(f"rnngrade grade failed for {lab}:\n{done.stderr[-3000:]}")
    data = json.loads(record.read_text())
    record.unlink()
    moments = {k: v - started for k, v in data["times"].items()}
    moments["exit"] = ended - started
    return moments


def make_batch(folder: Path, n: int) -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from synthetic import make_class

    make_class(folder, "lab1", n)
    return folder


def batch_once(folder: Path, tmp: Path) -> float:
    out = tmp / f"batch-{time.monotonic_ns()}"
    return timed([python(), "-m", "rnngrade.cli", "batch", str(folder), "--lab", "lab1",
                  "--out", str(out), "-j", "2", "--quiet", "--device", "cpu"])


def split(moments: list[dict[str, float]]) -> tuple[dict[str, float], float | None, float]:
    """Median duration of each phase, median zygote-ready time, median total."""
    durations: dict[str, list[float]] = {p: [] for p in PHASES}
    for m in moments:
        previous = 0.0
        for phase in PHASES:
            at = m.get(phase, previous)
            durations[phase].append(at - previous)
            previous = at
    zygote = [m["zygote"] for m in moments if "zygote" in m]
    return ({p: statistics.median(v) for p, v in durations.items()},
            statistics.median(zygote) if zygote else None,
            statistics.median(m["exit"] for m in moments))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labs", nargs="*", default=[f"lab{i}" for i in range(1, 8)])
    parser.add_argument("-n", type=int, default=3, help="runs of each measure (median)")
    parser.add_argument("--large", action="store_true", help="also a batch of 200 (one run)")
    args = parser.parse_args(argv)
    labs = [lab for lab in args.labs
            if (ROOT / "fixtures" / "submissions" / lab / "reference").exists()]
    print(f"rnngrade cold-start benchmark: {os.cpu_count()} CPUs (load "
          f"{os.getloadavg()[0]:.1f}), medians of {args.n} runs, sandboxed, --device cpu")
    with tempfile.TemporaryDirectory(prefix="rnngrade-cold-") as name:
        tmp = Path(name)
        batches = {size: make_batch(tmp / f"class{size}", size) for size in (1, 20)}
        torch_times: list[float] = []
        grades: dict[str, list[dict[str, float]]] = {lab: [] for lab in labs}
        batch_times: dict[int, list[float]] = {size: [] for size in batches}
        for _ in range(args.n):  # interleaved: a drifting load weighs on every measure alike
            torch_times.append(import_torch())
            for lab in labs:
                grades[lab].append(grade_once(lab, tmp))
            for size, folder in batches.items():
                batch_times[size].append(batch_once(folder, tmp))
        if args.large:
            batch_times[200] = [batch_once(make_batch(tmp / "class200", 200), tmp)]
    floor = statistics.median(torch_times)
    print(f'python -c "import torch": {floor:.2f} s (the unit of the ratios below)')
    for lab in labs:
        phases, zygote, total = split(grades[lab])
        parts = ", ".join(f"{p} {phases[p]:.2f}" for p in PHASES)
        ready = f"; zygote ready at {zygote:.2f} s" if zygote is not None else ""
        print(f"rnngrade grade {lab}: {total:.2f} s = {total / floor:.2f}× import torch "
              f"({parts}{ready})")
    for size, times in batch_times.items():
        wall = statistics.median(times)
        runs = "one run" if len(times) == 1 else f"median of {len(times)}"
        print(f"rnngrade batch -j 2, {size} lab1 submission{'s' if size > 1 else ''}: "
              f"{wall:.2f} s = {wall / floor:.2f}× import torch ({runs}; {size / wall:.1f}/s "
              "overall)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

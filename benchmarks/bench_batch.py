"""Throughput and memory of ``rnngrade batch`` on a synthetic class.

    python benchmarks/bench_batch.py                 # lab1 and lab3, in-process, 200 each
    python benchmarks/bench_batch.py --sandbox       # student code in the sandbox (+ hostile)
    python benchmarks/bench_batch.py --sandbox --all-hostile   # also those that hang
    python benchmarks/bench_batch.py --memory 500    # peak memory over 500 lab1 submissions

For each lab and worker count it prints submissions per second, overall (worker start-up
included) and in steady state (from the first result to the last), the grader's time per
submission split into the checks themselves (the test bodies: student, reference, comparisons,
diagnosis) and the overhead around them (loading the submission, fixtures, pytest's protocol),
the same for one ``pytest.main`` session per submission (the old path), and the peak resident
memory of the coordinator and the workers. It also prints the grader's CPU time per submission
measured in this process (what bounds the throughput on an idle machine: CPUs / that time).

In sandbox mode the hostile submissions that hang (an infinite loop, a sleep, a fork bomb,
ignored signals) are left out unless --all-hostile: each of their calls runs to the sandbox's
per-call time limit, so they measure that limit, not the batch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rnngrade.gradebook.batch import BatchOptions, ProgressHook, run_batch
from rnngrade.gradebook.store import GRADED, Gradebook
from rnngrade.labs import get_lab

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from synthetic import make_class


class Probe(ProgressHook):
    """Timestamps every result and samples the memory of the coordinator and its workers."""

    def __init__(self, every: int = 25) -> None:
        self.times: list[float] = []
        self.samples: list[tuple[int, float, float]] = []  # (done, coordinator MiB, worker MiB)
        self.peak_coordinator = 0.0
        self.peak_worker = 0.0
        self.every = every

    def start(self, total: int, skipped: int) -> None:
        self.started = time.perf_counter()

    def advance(self, student: str, status: str) -> None:
        self.times.append(time.perf_counter())
        done = len(self.times)
        if done == 1 or done % self.every == 0:  # VmHWM is a high-water mark: sampling will do
            coordinator, worker = rss()
            self.samples.append((done, coordinator, worker))
            coordinator, worker = peak_rss()
            self.peak_coordinator = max(self.peak_coordinator, coordinator)
            self.peak_worker = max(self.peak_worker, worker)

    def steady_rate(self) -> float:
        if len(self.times) < 3:
            return 0.0
        return (len(self.times) - 1) / (self.times[-1] - self.times[0])


def _descendants() -> list[int]:
    """The processes this one started, directly or not (the fork server and the workers)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [os.getpid()]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _status_mib(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss() -> tuple[float, float]:
    """Current RSS (MiB) of this process and of the largest worker."""
    workers = [_status_mib(pid, "VmRSS") for pid in _descendants()]
    return _status_mib(os.getpid(), "VmRSS"), max(workers, default=0.0)


def peak_rss() -> tuple[float, float]:
    """Peak RSS so far (VmHWM, MiB) of this process and of the largest worker."""
    workers = [_status_mib(pid, "VmHWM") for pid in _descendants()]
    return _status_mib(os.getpid(), "VmHWM"), max(workers, default=0.0)


HANGING = frozenset({"infinite_loop", "sleep_forever", "signal_handlers", "fork_bomb"})


def category(kind: str) -> str:
    return kind.split(":", 1)[0]


def bench(lab: str, n: int, jobs: int, inprocess: bool, hostile: bool, every: int = 25,
          skip: frozenset[str] = HANGING, hostile_every: int = 0) -> dict:
    with tempfile.TemporaryDirectory(prefix="rnngrade-bench-") as tmp:
        folder, out = Path(tmp) / "class", Path(tmp) / "out"
        samples = make_class(folder, lab, n, hostile=hostile and not inprocess, skip=skip,
                             hostile_every=hostile_every)
        kinds = {s.student: category(s.kind) for s in samples}
        probe = Probe(every)
        cpu = time.process_time()
        report = run_batch([folder], BatchOptions(lab, out, jobs=jobs, inprocess=inprocess,
                                                  device="cpu"), probe)
        book = Gradebook(out / "gradebook.sqlite")
        try:
            executions, checks = [], []
            by_kind: dict[str, list[float]] = {}
            for row in book.current_rows(lab):
                if row["status"] != GRADED:
                    continue
                result = book.load_result(row["id"])
                executions.append(result.execution_time)
                by_kind.setdefault(kinds.get(row["student_id"], "?"), []).append(
                    result.execution_time)
                checks.append(sum(c.seconds for t in result.tests for c in t.cases))
        finally:
            book.close()
    return {"lab": lab, "n": n, "jobs": jobs, "overall": report.graded / report.seconds,
            "steady": probe.steady_rate(), "seconds": report.seconds,
            "exec": statistics.fmean(executions) if executions else 0.0,
            "checks": statistics.fmean(checks) if checks else 0.0,
            "coordinator_cpu": (time.process_time() - cpu) / max(report.graded, 1),
            "samples": probe.samples, "peak_coordinator": probe.peak_coordinator,
            "peak_worker": probe.peak_worker, "errors": report.errors,
            "by_kind": {k: (len(v), statistics.fmean(v)) for k, v in sorted(by_kind.items())}}


def grader_cpu(lab: str, inprocess: bool, n: int = 40) -> float:
    """CPU seconds per submission of one long-lived grader in this process (memo warm)."""
    from rnngrade.grading.engine import Grader

    with tempfile.TemporaryDirectory(prefix="rnngrade-bench-") as tmp:
        samples = make_class(Path(tmp), lab, n)
        with Grader(lab, device="cpu", inprocess=inprocess) as grader:
            for sample in samples:
                grader.grade(sample.path)
            started = time.process_time()
            for sample in samples:
                grader.grade(sample.path)
            return (time.process_time() - started) / len(samples)


def isolated_cost(lab: str, inprocess: bool, k: int = 4) -> float:
    """Seconds per submission with one pytest.main session each (the per-submission path)."""
    from rnngrade.grading.engine import grade_isolated

    with tempfile.TemporaryDirectory(prefix="rnngrade-bench-") as tmp:
        samples = make_class(Path(tmp), lab, k, forms=("py",))
        grade_isolated(samples[0].path, lab, device="cpu", inprocess=inprocess)  # warm imports
        started = time.perf_counter()
        for sample in samples:
            grade_isolated(sample.path, lab, device="cpu", inprocess=inprocess)
        return (time.perf_counter() - started) / len(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=200, help="submissions per run")
    parser.add_argument("--labs", nargs="*", default=["lab1", "lab3"],
                        help="labs to measure (none: only --memory)")
    parser.add_argument("--jobs", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--sandbox", action="store_true",
                        help="grade in the sandbox (default: --inprocess) and add the hostile "
                             "submissions")
    parser.add_argument("--all-hostile", action="store_true",
                        help="with --sandbox, include the hostile submissions that hang")
    parser.add_argument("--hostile-every", type=int, default=20, metavar="K",
                        help="with --sandbox, every K-th student is one of the hostile "
                             "submissions (default 20: 5%% of the class); 0: each hostile "
                             "submission takes its turn in the rotation")
    parser.add_argument("--memory", type=int, default=0, metavar="N",
                        help="also grade N lab1 submissions at -j 2 and report memory")
    args = parser.parse_args(argv)
    inprocess = not args.sandbox
    mode = "sandbox" if args.sandbox else "in-process"
    attackers = "" if not args.sandbox else (
        f", every {args.hostile_every}th student hostile" if args.hostile_every
        else ", each hostile submission in turn")
    print(f"rnngrade batch benchmark: {os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}), "
          f"{mode}, "
          f"{args.n} submissions per run (correct, every mutant, stub{attackers})")
    for lab in args.labs:
        if not (get_lab(lab).suite_dir() / "rubric.yaml").exists():
            print(f"{lab}: skipped (graders/suites/{lab}/rubric.yaml is missing)")
            continue
        old = isolated_cost(lab, inprocess)
        skip = frozenset() if args.all_hostile else HANGING
        if inprocess:
            cpu = grader_cpu(lab, inprocess)
            print(f"{lab}: grader CPU {1000 * cpu:.0f} ms per submission in one process, so "
                  f"at most {os.cpu_count() / cpu:.1f} submissions/s on {os.cpu_count()} idle "
                  "CPUs")
        for jobs in args.jobs:
            r = bench(lab, args.n, jobs, inprocess, hostile=True, skip=skip,
                      hostile_every=args.hostile_every)
            overhead = r["exec"] - r["checks"]
            print(f"{lab} -j {jobs}: {r['steady']:.1f} submissions/s steady, "
                  f"{r['overall']:.1f}/s overall ({r['n']} in {r['seconds']:.1f} s, "
                  f"{r['errors']} not graded); per submission {1000 * r['exec']:.0f} ms = "
                  f"{1000 * r['checks']:.0f} ms checks + {1000 * overhead:.0f} ms overhead "
                  f"(one pytest.main per submission: {1000 * old:.0f} ms); coordinator "
                  f"CPU {1000 * r['coordinator_cpu']:.0f} ms per submission; peak RSS "
                  f"coordinator {r['peak_coordinator']:.0f} MiB, worker "
                  f"{r['peak_worker']:.0f} MiB")
            print("  mean seconds per submission by kind: " + ", ".join(
                f"{kind} {mean:.2f} s (x{count})" for kind, (count, mean) in r["by_kind"].items()))
    if args.memory:
        r = bench("lab1", args.memory, 2, inprocess, hostile=True,
                  every=max(args.memory // 10, 1), hostile_every=args.hostile_every)
        print(f"memory over {args.memory} lab1 submissions at -j 2 ({r['steady']:.1f}/s): "
              f"peak coordinator {r['peak_coordinator']:.0f} MiB, peak worker "
              f"{r['peak_worker']:.0f} MiB")
        print("  RSS after  " + ", ".join(f"{done}: {c:.0f}/{w:.0f}"
                                           for done, c, w in r["samples"])
              + "  (coordinator/worker MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the sandbox costs.

    python benchmarks/bench_sandbox.py            # default repetitions
    python benchmarks/bench_sandbox.py --quick    # fewer repetitions

Prints medians of:
- the round trip of a call with a small array (``softmax`` of a 4×3 array), sandboxed (calls
  back to back, and each after 1 ms of grader work, as in a suite) and in-process;
- a worker's start: the zygote handing out a jailed spare until its hello (target ≤ 20 ms), and
  until the submission is loaded; the same with the worker that the last runner left on
  standby, as each submission of a batch finds it;
- a 100 MB result: its round trip, and the grader's memory for it (traced: the one buffer the
  array is laid over, and nothing else);
- the lab1 hidden suite on fixtures/submissions/lab1/reference through
  ``rnngrade.grading.engine.grade``, sandboxed and in-process, and their ratio (target ≤ 1.25).
The first, warm-up runs (starting the zygote, collecting the suite) are not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

import numpy as np

from rnngrade.grading.engine import grade
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.paths import course_root
from rnngrade.sandbox import SandboxRunner


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def round_trips(runner, n: int, work: float = 0.0) -> list[float]:
    """Round trips of a small call; ``work``: seconds of grader computation before each (as a
    hidden suite computes and compares between calls)."""
    x = np.random.default_rng(0).standard_normal((4, 3))
    for _ in range(20):
        runner.call("softmax", (x,))
    times = []
    for _ in range(n):
        busy = time.perf_counter()
        while time.perf_counter() - busy < work:
            pass
        start = time.perf_counter()
        runner.call("softmax", (x,))
        times.append(time.perf_counter() - start)
    return times


def starts(source: str, n: int, pause: float, standby: bool) -> tuple[list[float], list[float]]:
    """Start latencies: to the worker's hello, and to the submission loaded. Without
    ``standby`` each worker is a fresh one from the zygote's spare; with it, the worker the last
    runner left on standby (as between the submissions of a batch)."""
    hello, ready = [], []
    for _ in range(n):
        time.sleep(pause)  # let the zygote get its next spare ready, as between submissions
        runner = SandboxRunner(source, "rnn.py", standby=standby)
        runner.load_notes()  # waits for the load
        hello.append(runner.startup["hello"])
        ready.append(runner.startup["hello"] + runner.startup["load"])
        runner.close()
    return hello, ready


LARGE_SOURCE = "import numpy as np\n\ndef make(n):\n    return np.full(n, 0.5)\n"


def large_result(n: int, calls: int) -> tuple[list[float], int]:
    """Round trips of a call returning ``n`` float64, and the grader's traced peak for one."""
    runner = SandboxRunner(LARGE_SOURCE, "rnn.py")
    try:
        runner.call("make", (n,))
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            runner.call("make", (n,))
            times.append(time.perf_counter() - start)
        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        value = runner.call("make", (n,)).value
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert value.nbytes == 8 * n
        return times, peak - before
    finally:
        runner.close()


def suite_times(path, n: int) -> tuple[list[float], list[float]]:
    """Wall times of the suite sandboxed and in-process, the runs interleaved so that the
    machine's drifting load weighs on both alike."""
    for inprocess in (False, True):  # warm-up: collection, zygote, memoised reference
        grade(path, "lab1", inprocess=inprocess)
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(n):
        for inprocess in (False, True):
            start = time.perf_counter()
            result = grade(path, "lab1", inprocess=inprocess)
            times[inprocess].append(time.perf_counter() - start)
            assert result.score == result.max_score, "the reference should get full marks"
    return times[False], times[True]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    calls, spawns, suites = (300, 10, 5) if args.quick else (2000, 30, 15)

    root = course_root()
    source = (root / "solutions" / "lab1" / "rnn.py").read_text()
    reference = root / "fixtures" / "submissions" / "lab1" / "reference"
    print(f"rnngrade sandbox benchmark: {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")

    started = time.perf_counter()
    runner = SandboxRunner(source, "rnn.py")
    print(f"first runner (starts the zygote): {time.perf_counter() - started:.2f} s; "
          f"protections: {sum(runner.protections().values())}/{len(runner.protections())} "
          "active")
    time.sleep(0.5)  # the zygote prepares its next spare once, after the first worker
    sandboxed = round_trips(runner, calls)
    between = round_trips(runner, calls // 4, work=1e-3)
    runner.close()
    local = round_trips(InProcessRunner.from_source(source, "rnn.py"), calls)
    print(f"call round trip, 4x3 array softmax: {median_ms(sandboxed) * 1e3:.0f} µs sandboxed "
          f"back to back (p90 {np.percentile(sandboxed, 90) * 1e6:.0f} µs), "
          f"{median_ms(between) * 1e3:.0f} µs after 1 ms of grader work (p90 "
          f"{np.percentile(between, 90) * 1e6:.0f} µs), {median_ms(local) * 1e3:.0f} µs "
          "in-process (target ≤ 200 µs)")

    hello, ready = starts(source, spawns, pause=0.15, standby=False)
    print(f"worker start: {median_ms(hello):.1f} ms to hello (target ≤ 20 ms), "
          f"{median_ms(ready):.1f} ms with the lab1 reference loaded")
    hello, ready = starts(source, spawns, pause=0.15, standby=True)
    print(f"  with a worker on standby (the next submission's, started as the last one "
          f"closed): {median_ms(hello):.1f} ms to hello, {median_ms(ready):.1f} ms loaded")

    n = 12_500_000
    times, extra = large_result(n, 3)
    print(f"a 100 MB result: {median_ms(times):.0f} ms round trip; the grader's memory for it "
          f"{extra / 8 / n:.3f}× its size (traced)")

    sandbox_suite, inprocess_suite = suite_times(reference, suites)
    ratio = statistics.median(sandbox_suite) / statistics.median(inprocess_suite)
    print(f"lab1 hidden suite on the reference: {median_ms(sandbox_suite):.0f} ms sandboxed, "
          f"{median_ms(inprocess_suite):.0f} ms in-process, ratio {ratio:.2f} (target ≤ 1.25)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

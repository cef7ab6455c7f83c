"""Wall time of lab7's three forms of the LRU (the reference solution): loop, FFT and scan.

    python benchmarks/bench_lru.py                      # CPU (and CUDA when present), float32
    python benchmarks/bench_lru.py --lengths 256 4096 --batch 8 --dtype float64

For each sequence length T it prints the best time of each form over a few runs (after one
warm-up run), the speed-up of the FFT and the scan over the loop, and the largest difference of
each from the loop (the forms compute the same map; float32 differences of ~1e-5 are rounding).
The loop costs T small steps, the FFT O(T log T) work in a few calls, the scan ⌈log₂ T⌉ rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import torch

from rnngrade.labs import get_lab

FORMS = ("lru_forward_loop", "lru_forward_fft", "lru_forward_scan")


def load_reference():
    path = get_lab("lab7").solution_path()
    spec = importlib.util.spec_from_file_location("_bench_lru_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the solution markers are comments: the file runs as is
    return module


def best_time(fn, device: str, min_seconds: float, max_repeats: int) -> float:
    """The fastest of up to ``max_repeats`` runs (at least one, and until ``min_seconds`` pass)."""

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    fn()  # warm-up: FFT plans, CUDA kernels, allocator
    sync()
    times: list[float] = []
    started = time.perf_counter()
    while len(times) < max_repeats and (not times or time.perf_counter() - started < min_seconds):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench(lru, device: str, dtype: torch.dtype, lengths: list[int], batch: int, N: int,
          min_seconds: float, max_repeats: int) -> None:
    d_in, d_out = 4, 3
    params = lru.init_lru(N, d_in, d_out, generator=torch.Generator().manual_seed(0))
    params = {k: v.to(device=device, dtype=dtype) for k, v in params.items()}
    threads = f"{torch.get_num_threads()} threads"
    name = torch.cuda.get_device_name() if device == "cuda" else threads
    print(f"\n{device} ({name}), {str(dtype).removeprefix('torch.')}, B = {batch}, N = {N}, "
          f"d_in = {d_in}, d_out = {d_out}")
    header = (f"{'T':>7}  {'loop ms':>9}  {'fft ms':>8}  {'scan ms':>8}  {'fft ×':>6}  "
              f"{'scan ×':>6}  {'max|fft−loop|':>13}  {'max|scan−loop|':>14}")
    print(header)
    print("-" * len(header))
    for T in lengths:
        g = torch.Generator().manual_seed(T)
        x = torch.randn(batch, T, d_in, generator=g, dtype=dtype).to(device)
        with torch.no_grad():
            outputs = {form: getattr(lru, form)(x, params) for form in FORMS}
            seconds = {form: best_time(lambda f=form, x=x: getattr(lru, f)(x, params), device,
                                       min_seconds, max_repeats) for form in FORMS}
        loop = outputs["lru_forward_loop"]
        diff = {form: (outputs[form] - loop).abs().max().item() for form in FORMS[1:]}
        ms = {form: 1e3 * s for form, s in seconds.items()}
        print(f"{T:>7,}  {ms['lru_forward_loop']:>9.2f}  {ms['lru_forward_fft']:>8.2f}  "
              f"{ms['lru_forward_scan']:>8.2f}  "
              f"{seconds['lru_forward_loop'] / seconds['lru_forward_fft']:>6.1f}  "
              f"{seconds['lru_forward_loop'] / seconds['lru_forward_scan']:>6.1f}  "
              f"{diff['lru_forward_fft']:>13.2e}  {diff['lru_forward_scan']:>14.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 4096, 16384])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--state", type=int, default=64, help="N, the number of channels")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", choices=["cpu", "cuda", "all"], default="all",
                        help="all: CPU, and CUDA when present")
    parser.add_argument("--min-seconds", type=float, default=0.5,
                        help="keep repeating a form until this much time has passed")
    parser.add_argument("--repeats", type=int, default=5, help="the most runs per form")
    args = parser.parse_args()
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if "cuda" in devices and not torch.cuda.is_available():
        if args.device == "cuda":
            parser.error("--device cuda: no CUDA device on this machine")
        devices.remove("cuda")
        print("(no CUDA device: CPU only)")
    lru = load_reference()
    for device in devices:
        bench(lru, device, getattr(torch, args.dtype), args.lengths, args.batch, args.state,
              args.min_seconds, args.repeats)


if __name__ == "__main__":
    main()

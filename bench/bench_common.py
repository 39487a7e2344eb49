"""What the benchmark scripts share (bench/op_torch.py, bench/train_torch.py,
bench/op_compare.py, bench/train_compare.py): the timing loop, and Google
Benchmark-style JSON written and its time units read, so that PyTorch's
figures sit beside op_bench's and train_bench's. No PyTorch here: the compare
scripts import it without torch.

The scripts run as `/usr/bin/python3 bench/X.py` and import this module from
their own folder (bench/), which they put first on sys.path.
"""
import json
import time

# Google Benchmark's time units in ms.
TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def ms_per_call(fn, min_time):
    """Calls fn until at least min_time seconds have passed (once at least);
    the mean real time per call in ms."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls * 1e3


def fastest(fn, repetitions, min_time, warmups=1):
    """After `warmups` calls (first-touch allocation, kernel selection), the
    fastest of `repetitions` ms_per_call measurements, in ms."""
    for _ in range(warmups):
        fn()
    return min(ms_per_call(fn, min_time) for _ in range(repetitions))


def write_benchmarks(path, context, benchmarks):
    """Writes {"context": context, "benchmarks": benchmarks} to path, as Google
    Benchmark's --benchmark_out_format=json does (each benchmark a dict with at
    least name, real_time and time_unit)."""
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": benchmarks}, f, indent=1)

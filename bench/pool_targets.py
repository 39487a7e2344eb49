#!/usr/bin/env python3
"""Checks pool_bench's JSON output (--benchmark_out) against issue 6's targets
and prints the README's table in Markdown.

Usage: pool_targets.py RESULTS.json
Per benchmark CASE/DIRECTION/IMPL/threads:T it takes the fastest repetition
(the "min" aggregate pool_bench adds, or the fastest of the runs listed): on a
shared VM other processes only ever slow a run down. Targets, per case and direction: with 2
threads nodeflow <= oneDNN and nodeflow / bound <= 1.5 (fwd) or 2.0 (train,
bwd); with 1 thread the same ratios times 1.25. Every row of P1-P7 must be
there: exits 1 when a row misses a target or a nodeflow, oneDNN or bound time
is absent (a --benchmark_filter run), 2 when the file is not benchmark JSON.
"""
import json
import sys

CASES = ("P1", "P2", "P3", "P4", "P5", "P6", "P7")
DIRECTIONS = ("fwd", "train", "bwd")
THREADS = (1, 2)


def fastest_times(path):
    """run_name -> the fastest time in ms over its runs and "min" aggregates
    (runs that failed are left out)."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    times = {}
    try:
        with open(path) as f:
            benchmarks = json.load(f)["benchmarks"]
        for b in benchmarks:
            aggregate = b.get("run_type") == "aggregate"
            if b.get("error_occurred") or (aggregate and b.get("aggregate_name") != "min"):
                continue
            ms = float(b["real_time"]) * scale[b["time_unit"]]
            times[b["run_name"]] = min(ms, times.get(b["run_name"], ms))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        print(f"pool_targets.py: {path}: not Google Benchmark JSON output "
              f"({type(e).__name__}: {e})", file=sys.stderr)
        sys.exit(2)
    return times


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    times = fastest_times(sys.argv[1])
    print("| case | dir | T | nodeflow (ms) | oneDNN (ms) | bound (ms) "
          "| nodeflow / oneDNN | nodeflow / bound |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    misses = []
    for case in CASES:
        for d in DIRECTIONS:
            for t in THREADS:
                row = [times.get(f"{case}/{d}/{impl}/threads:{t}")
                       for impl in ("nodeflow", "onednn", "bound")]
                if None in row or min(row) <= 0:
                    misses.append(f"{case} {d} T={t}: a time is missing, failed or zero")
                    continue
                nf, dn, bd = row
                slack = 1.25 if t == 1 else 1.0
                limit = (1.5 if d == "fwd" else 2.0) * slack
                if nf > dn * slack:
                    misses.append(f"{case} {d} T={t}: {nf / dn:.2f}x oneDNN (limit {slack:.2f})")
                if nf / bd > limit:
                    misses.append(f"{case} {d} T={t}: {nf / bd:.2f}x bound (limit {limit:g})")
                print(f"| {case} | {d} | {t} | {nf:.3f} | {dn:.3f} | {bd:.3f} "
                      f"| {nf / dn:.2f} | {nf / bd:.2f} |")
    rows = len(CASES) * len(DIRECTIONS) * len(THREADS)
    if misses:
        print(f"\n{len(misses)} problem(s) in {rows} rows:", file=sys.stderr)
        for m in misses:
            print("  " + m, file=sys.stderr)
        sys.exit(1)
    print(f"\nevery target met in all {rows} rows", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Puts op_bench's figures (Google Benchmark JSON) next to op_torch.py's and
checks the targets of the README's "Performance" section: a memory-bound case
within 1.5x of the bandwidth probe, and no case slower than PyTorch with 2
threads. Prints a Markdown table; exits 1 naming the rows that miss a target,
2 if a figure is missing.

Usage: /usr/bin/python3 bench/op_compare.py NODEFLOW.json TORCH.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import TO_MS  # noqa: E402  (bench/bench_common.py)

BOUND_LIMIT = 1.5
TORCH_LIMIT = 1.0  # with 2 threads


def fastest(path):
    """run_name -> ms: the "min" aggregate when there are repetitions, else the run."""
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    out = {}
    for r in runs:
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "min":
            continue
        if r.get("run_type") != "aggregate" and r.get("repetitions", 1) > 1:
            continue
        out[r.get("run_name", r["name"])] = r["real_time"] * TO_MS[r.get("time_unit", "ns")]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    times = fastest(sys.argv[1])
    times.update(fastest(sys.argv[2]))
    rows = sorted({n.split("/")[0] for n in times}, key=lambda c: list(times).index(
        next(n for n in times if n.startswith(c + "/"))))
    print("| case | dir | T | nodeflow ms | PyTorch ms | bound ms | nf/PyTorch | nf/bound |")
    print("|---|---|---|---|---|---|---|---|")
    missed, missing = [], []
    for case in rows:
        for direction in ("fwd", "bwd"):
            for t in (1, 2):
                key = lambda impl: f"{case}/{direction}/{impl}/threads:{t}"
                nf, pt, bd = (times.get(key(i)) for i in ("nodeflow", "torch", "bound"))
                if nf is None or pt is None:
                    missing.append(key("nodeflow" if nf is None else "torch"))
                    continue
                r_pt = nf / pt
                r_bd = nf / bd if bd else None
                print(f"| {case} | {direction} | {t} | {nf:.2f} | {pt:.2f} | "
                      f"{'' if bd is None else f'{bd:.2f}'} | {r_pt:.2f} | "
                      f"{'' if r_bd is None else f'{r_bd:.2f}'} |")
                if t == 2 and r_pt > TORCH_LIMIT:
                    missed.append(f"{key('nodeflow')}: {r_pt:.2f}x PyTorch (limit {TORCH_LIMIT})")
                if r_bd is not None and r_bd > BOUND_LIMIT:
                    missed.append(f"{key('nodeflow')}: {r_bd:.2f}x the bound (limit {BOUND_LIMIT})")
    if missing:
        print("missing figures: " + ", ".join(missing), file=sys.stderr)
        sys.exit(2)
    if missed:
        print("targets missed:\n  " + "\n  ".join(missed), file=sys.stderr)
        sys.exit(1)
    print("every target met", file=sys.stderr)


if __name__ == "__main__":
    main()

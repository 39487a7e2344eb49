#!/usr/bin/python3
"""Puts op_bench's figures (Google Benchmark JSON) next to op_torch.py's and
checks the targets of the README's "Performance" section: a memory-bound case
within 1.5x of the bandwidth probe, and no case slower than PyTorch with 2
threads.

Given several runs (pairs of files, each pair one op_bench run and the
op_torch.py figures of the same cases, each case's taken right after its
op_bench figures: bench/op_runs.py), each ratio is taken within its run,
where both sides met about the same load of the host, and a target is judged
on the
median of a row's ratios over the runs: on a shared machine one run's ratio
can be off by 2x (the README's "The ops beyond pooling"). The table gives the
medians, each ratio's range over the runs, and in how many runs a row missed.
Prints a Markdown table; exits 1 naming the rows whose median misses a
target, 2 if a figure is missing.

Usage: /usr/bin/python3 bench/op_compare.py NODEFLOW.json TORCH.json [NODEFLOW.json TORCH.json ...]
"""
import json
import os
import statistics
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


def cell(values, digits=2):
    """The median, and the range over the runs when there are several."""
    med = f"{statistics.median(values):.{digits}f}"
    if len(values) == 1:
        return med
    return f"{med} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main():
    files = sys.argv[1:]
    if not files or len(files) % 2:
        sys.exit(__doc__)
    runs = []
    for nf_file, torch_file in zip(files[::2], files[1::2]):
        times = fastest(nf_file)
        times.update(fastest(torch_file))
        runs.append(times)
    first = runs[0]
    rows = sorted({n.split("/")[0] for n in first}, key=lambda c: list(first).index(
        next(n for n in first if n.startswith(c + "/"))))
    print("| case | dir | T | nodeflow ms | PyTorch ms | bound ms | nf/PyTorch | nf/bound | runs missed |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed, missing = [], []
    for case in rows:
        for direction in ("fwd", "bwd"):
            for t in (1, 2):
                key = lambda impl: f"{case}/{direction}/{impl}/threads:{t}"
                nf, pt, bd = ([r.get(key(i)) for r in runs] for i in ("nodeflow", "torch", "bound"))
                absent = [key(i) for i, v in (("nodeflow", nf), ("torch", pt)) if None in v]
                if absent:
                    missing += absent
                    continue
                r_pt = [a / b for a, b in zip(nf, pt)]
                r_bd = [a / b for a, b in zip(nf, bd)] if None not in bd else None
                checks = []  # (ratios, limit, what)
                if t == 2:
                    checks.append((r_pt, TORCH_LIMIT, "PyTorch"))
                if r_bd is not None:
                    checks.append((r_bd, BOUND_LIMIT, "the bound"))
                runs_missed = sum(any(rs[k] > limit for rs, limit, _ in checks) for k in range(len(runs)))
                for rs, limit, what in checks:
                    if statistics.median(rs) > limit:
                        missed.append(f"{key('nodeflow')}: {statistics.median(rs):.2f}x {what} (limit {limit}; "
                                      f"{min(rs):.2f}-{max(rs):.2f} over {len(runs)} run(s))")
                print(f"| {case} | {direction} | {t} | {cell(nf)} | {cell(pt)} | "
                      f"{'' if r_bd is None else cell(bd)} | {cell(r_pt)} | "
                      f"{'' if r_bd is None else cell(r_bd)} | "
                      f"{f'{runs_missed} of {len(runs)}' if checks else ''} |")
    if missing:
        print("missing figures: " + ", ".join(missing), file=sys.stderr)
        sys.exit(2)
    if missed:
        print("targets missed (median of the runs):\n  " + "\n  ".join(missed), file=sys.stderr)
        sys.exit(1)
    print(f"every target met (median of {len(runs)} run(s))", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reads graph_bench's JSON output (--benchmark_out) and prints nodes per
second for every benchmark, topology and size, with the ratio between the
fastest and the slowest size. Linear cost keeps that ratio near 1.

Usage: linearity.py RESULTS.json [--max-ratio R] [--check Load,Forward]
Exits 1 when a checked benchmark's ratio exceeds R (default 1.5). With
repetitions, the best run of each configuration counts: noise from other
processes only ever slows a run down.
"""
import argparse
import json
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--max-ratio", type=float, default=1.5)
    parser.add_argument("--check", default="Load,Forward")
    args = parser.parse_args()

    with open(args.results) as f:
        data = json.load(f)
    best = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or "nodes_per_second" not in b:
            continue
        m = re.match(r"BM_(\w+)/nodes:(\d+)/fanout:(\d)", b["name"])
        if not m:
            continue
        key = (m.group(1), "fanout" if m.group(3) == "1" else "chain", int(m.group(2)))
        best[key] = max(best.get(key, 0.0), b["nodes_per_second"])

    checked = set(args.check.split(",")) if args.check else set()
    sizes = sorted({k[2] for k in best})
    failed = False
    print(f"{'benchmark':<10} {'graph':<7} " + " ".join(f"{n:>12,}" for n in sizes) + "   ratio")
    for bench, topo in sorted({(k[0], k[1]) for k in best}):
        rates = [best.get((bench, topo, n)) for n in sizes]
        present = [r for r in rates if r]
        ratio = max(present) / min(present)
        verdict = ""
        if bench in checked:
            ok = ratio <= args.max_ratio
            failed |= not ok
            verdict = "ok" if ok else f"OVER {args.max_ratio}"
        cells = " ".join(f"{r:>12,.0f}" if r else f"{'-':>12}" for r in rates)
        print(f"{bench:<10} {topo:<7} {cells}   {ratio:5.2f} {verdict}")
    print("(nodes per second, best of the repetitions; ratio = fastest / slowest size)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Runs bench/train_bench and bench/train_torch.py in turn, ROUNDS times (so
that both see the same state of the machine), and prints the README table:
per case and thread count, nodeflow's and PyTorch's time per iteration and
their ratio (medians over the rounds, with the range), and whether the
targets of the 2-thread rows are met (docs: README "Performance"):
  - LeNet-5 training step of 64: at most 0.67x PyTorch's time;
  - LeNet-5 inference of 256, ResNet training step and inference: at most 1.0x.
Exits 1 when a target is missed (on the medians).

Usage: /usr/bin/python3 bench/train_compare.py BUILD/bench/train_bench [--rounds N] [--min-time S]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import TO_MS  # noqa: E402  (bench/bench_common.py)

TARGETS = {"BM_LeNet5TrainStep/2": 0.67, "BM_LeNet5Inference/2": 1.0,
           "BM_ResNetTrainStep/2": 1.0, "BM_ResNetInference/2": 1.0}


def times_of(path):
    """name -> real time in ms of a Google Benchmark-style JSON file."""
    with open(path) as f:
        doc = json.load(f)
    return {b["name"].replace("/real_time", ""): b["real_time"] * TO_MS[b["time_unit"]]
            for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"}


def spread(values, digits=2):
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_bench")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    nf, torch = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            out = os.path.join(tmp, f"nf{r}.json")
            subprocess.run([args.train_bench, f"--benchmark_min_time={args.min_time}", f"--benchmark_out={out}",
                            "--benchmark_out_format=json"], check=True, stdout=subprocess.DEVNULL)
            for name, ms in times_of(out).items():
                nf.setdefault(name, []).append(ms)
            out = os.path.join(tmp, f"torch{r}.json")
            subprocess.run([sys.executable, os.path.join(HERE, "train_torch.py"), out, "--min-time",
                            str(args.min_time)], check=True, stdout=subprocess.DEVNULL)
            for name, ms in times_of(out).items():
                torch.setdefault(name, []).append(ms)
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    print("| case | threads | nodeflow ms | PyTorch ms | nodeflow/PyTorch | target |")
    print("|---|---|---|---|---|---|")
    missed = []
    for name in nf:
        if name not in torch:
            continue
        ratios = [a / b for a, b in zip(nf[name], torch[name])]
        case, threads = name[3:].split("/")
        target = TARGETS.get(name)
        verdict = ""
        if target is not None:
            met = statistics.median(ratios) <= target
            verdict = f"<= {target} {'met' if met else 'MISSED'}"
            if not met:
                missed.append(name)
        print(f"| {case} | {threads} | {spread(nf[name])} | {spread(torch[name])} | {spread(ratios)} | {verdict} |")
    if missed:
        print("targets missed: " + ", ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

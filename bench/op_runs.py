#!/usr/bin/python3
"""Times the cases of bench/op_cases.json in nodeflow (op_bench) and PyTorch
(op_torch.py) case by case, several runs, and compares them (op_compare.py).

Each case's op_bench rows are followed right away by its op_torch.py rows, so
the two libraries' figures of a row are taken seconds apart rather than the
minutes a whole op_bench run takes: on a shared machine the load moves between
minutes, and a ratio of figures taken minutes apart moved by up to 2x
(README, "The ops beyond pooling"). Run r's figures are written to
OUTDIR/nf<r>.json and OUTDIR/torch<r>.json (Google Benchmark JSON, the files
op_compare.py reads), then op_compare.py prints the table of all runs and
gives the exit status: 1 if a row's median misses a target, 2 if a figure is
missing; 3 if op_bench or op_torch.py failed (the runs finished before are
kept).

Usage: /usr/bin/python3 bench/op_runs.py OP_BENCH OUTDIR [--runs N] [--repetitions N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(command, out, what):
    """Runs command, which writes Google Benchmark JSON to out, a fresh path;
    the JSON, which must hold benchmarks. Exits 3 naming `what` otherwise."""
    if os.path.exists(out):
        os.unlink(out)
    try:
        status = subprocess.run(command, stdout=subprocess.DEVNULL).returncode
        problem = f"exit status {status}" if status else None
    except OSError as e:
        problem = str(e)
    if problem is None:
        try:
            with open(out) as f:
                data = json.load(f)
            if not data.get("benchmarks"):
                problem = "no benchmarks in its output"
        except (OSError, ValueError) as e:
            problem = f"unreadable output: {e}"
    if problem:
        print(f"op_runs.py: {what} failed ({problem}): {' '.join(command)}", file=sys.stderr)
        sys.exit(3)
    return data


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op_bench")
    parser.add_argument("outdir")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    if args.runs < 1 or args.repetitions < 1:
        parser.error("--runs and --repetitions must be at least 1")
    with open(os.path.join(HERE, "op_cases.json")) as f:
        names = [c["name"] for c in json.load(f)["cases"]]
    os.makedirs(args.outdir, exist_ok=True)
    files = []
    with tempfile.TemporaryDirectory() as tmp:
        part = os.path.join(tmp, "part.json")
        for run in range(1, args.runs + 1):
            nf, torch = {"benchmarks": []}, {"benchmarks": []}
            for name in names:
                print(f"run {run} of {args.runs}: {name}", file=sys.stderr, flush=True)
                got = timed([args.op_bench, f"--benchmark_filter=^{name}/",
                             f"--benchmark_repetitions={args.repetitions}", "--benchmark_report_aggregates_only=true",
                             f"--benchmark_out={part}", "--benchmark_out_format=json"], part,
                            f"op_bench on case {name}")
                nf["context"] = got["context"]
                nf["benchmarks"] += got["benchmarks"]
                got = timed([sys.executable, os.path.join(HERE, "op_torch.py"), part, "--case", name,
                             "--repetitions", str(args.repetitions)], part, f"op_torch.py on case {name}")
                torch["context"] = got["context"]
                torch["benchmarks"] += got["benchmarks"]
            for prefix, data in (("nf", nf), ("torch", torch)):
                path = os.path.join(args.outdir, f"{prefix}{run}.json")
                with open(path, "w") as f:
                    json.dump(data, f, indent=1)
                files.append(path)
    sys.exit(subprocess.run([sys.executable, os.path.join(HERE, "op_compare.py"), *files]).returncode)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""PyTorch's time for the cases of bench/op_cases.json, the ones op_bench times
in nodeflow: forward (under torch.no_grad, as an inference run) and backward
(torch.autograd.grad of a kept forward graph with the same dY, each gradient
then copied into a buffer allocated once, as AccumulateGrad stores the first
gradient of a tensor and as nodeflow's executor writes it: without the copy
PyTorch would hand back views (dY itself for Add, an expanded dY for
ReduceSum) instead of gradients in memory), float32, 1 and 2 threads. Writes
Google Benchmark-style JSON (names CASE/DIRECTION/torch/threads:T, the fastest
repetition's real time in ms) for bench/op_compare.py.

Usage: /usr/bin/python3 bench/op_torch.py OUT.json [--repetitions N] [--min-time S] [--case NAME ...]
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import fastest, write_benchmarks  # noqa: E402  (bench/bench_common.py)


def attr(case, name, default):
    return case.get("attributes", {}).get(name, default)


def axes_of(case):
    return [v for inp in case["inputs"] if "int64" in inp for v in inp["int64"]]


# One PyTorch expression per op_type of the cases, with ONNX's semantics:
# outputs are materialised (Transpose is contiguous, as ONNX's output is).
def run_op(case, xs):
    op = case["op_type"]
    if op == "Add":
        return xs[0] + xs[1]
    if op == "Mul":
        return xs[0] * xs[1]
    if op == "ReduceSum":
        return xs[0].sum(dim=axes_of(case), keepdim=bool(attr(case, "keepdims", 1)))
    if op == "ReduceMean":
        return xs[0].mean(dim=axes_of(case), keepdim=bool(attr(case, "keepdims", 1)))
    if op == "Transpose":
        return xs[0].permute(*attr(case, "perm", None)).contiguous()
    if op == "Concat":
        return torch.cat(xs, dim=attr(case, "axis", 0))
    if op == "LayerNormalization":
        axis = attr(case, "axis", -1)
        shape = xs[0].shape[axis:]
        return F.layer_norm(xs[0], shape, xs[1], xs[2], attr(case, "epsilon", 1e-5))
    if op == "ConvTranspose":
        pads = attr(case, "pads", [0, 0, 0, 0])
        return F.conv_transpose2d(xs[0], xs[1], xs[2], stride=attr(case, "strides", [1, 1]),
                                  padding=pads[:2], output_padding=attr(case, "output_padding", [0, 0]),
                                  groups=attr(case, "group", 1), dilation=attr(case, "dilations", [1, 1]))
    raise SystemExit(f"op_torch.py: no PyTorch expression for {op}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--case", action="append", help="time only this case (repeatable); default: all")
    args = parser.parse_args()
    with open(os.path.join(HERE, "op_cases.json")) as f:
        cases = json.load(f)["cases"]
    if args.case:
        unknown = set(args.case) - {c["name"] for c in cases}
        if unknown:
            sys.exit(f"op_torch.py: no case named {', '.join(sorted(unknown))} in op_cases.json")
        cases = [c for c in cases if c["name"] in args.case]
    results = []
    for case in cases:
        gen = torch.Generator().manual_seed(1)
        xs = [torch.rand(inp["shape"], generator=gen) * 2 - 1 for inp in case["inputs"]
              if "int64" not in inp]
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with torch.no_grad():
                fwd = fastest(lambda: run_op(case, xs), args.repetitions, args.min_time)
            leaves = [x.clone().requires_grad_(True) for x in xs]
            y = run_op(case, leaves)
            dy = torch.rand(y.shape, generator=gen) * 2 - 1
            buffers = [torch.zeros_like(x) for x in xs]

            def backward():
                grads = torch.autograd.grad(y, leaves, dy, retain_graph=True)
                for buffer, g in zip(buffers, grads):
                    buffer.copy_(g)

            bwd = fastest(backward, args.repetitions, args.min_time)
            for direction, ms in (("fwd", fwd), ("bwd", bwd)):
                name = f"{case['name']}/{direction}/torch/threads:{threads}"
                print(f"{name:40s} {ms:10.3f} ms", flush=True)
                results.append({"name": name, "run_name": name, "run_type": "aggregate", "aggregate_name": "min",
                                "real_time": ms, "time_unit": "ms"})
    write_benchmarks(args.out, {"library": f"torch {torch.__version__}"}, results)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs every model of tests/onnx-opsets/ (README.md), or of the folder given with --cases
(tests/onnx-classic/), with `nodeflow run CASE/model.onnx` and compares each output with
CASE/expected/ (onnxruntime's values, stored) within the case's rtol/atol, by the corpus's
rule. Cases in KNOWN_DIFFERENCES (onnxruntime disagrees with pooling.md) must still differ.
With --node, onnxruntime-node (tests/onnxruntime) also runs every model whose stored values
are its own outputs for that very file (case.json's `onnxruntime_same_model`, or a
`reference` of onnxruntime alone), and must give them again within the case's rtol/atol:
not bit for bit, since onnxruntime's kernels are chosen by CPU (a DenseNet's softmax
came out 1 ulp apart on an AMD EPYC from the values stored on another AVX-512 machine).
Exit status 0 when all agree, else 1."""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "onnxruntime"))
from npy_tolerance import mismatch  # noqa: E402

# Case -> why nodeflow (pooling.md) and the stored onnxruntime values differ.
KNOWN_DIFFERENCES = {
}


def output_file(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) + ".npy"


def check(case_dir, nodeflow, work, node=None):
    spec = json.loads((case_dir / "case.json").read_text())
    out = work / case_dir.name
    cmd = [nodeflow, "run", str(case_dir / "model.onnx"), "-o", str(out)]
    for name, rel in spec["inputs"].items():
        cmd += ["-i", f"{name}={case_dir / rel}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return f"nodeflow run failed: {r.stderr.strip()}"
    problems = []
    # onnxruntime's outputs for this very file (not for the node at another opset)
    same_model = spec.get("onnxruntime_same_model", spec.get("reference") == "onnxruntime-node 1.30.0 (CPU)")
    if node and same_model:
        ort_out = work / (case_dir.name + ".ort")
        feeds = [f"{name}={case_dir / rel}" for name, rel in spec["inputs"].items()]
        r = subprocess.run([node, str(HERE.parent / "onnxruntime" / "run_ort.mjs"), str(case_dir / "model.onnx"),
                            str(ort_out), *feeds], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            problems.append(f"onnxruntime failed: {r.stderr.strip().splitlines()[-1]}")
        for name, rel in spec["expected"].items():
            ort_file = ort_out / output_file(name)
            if not ort_file.exists():
                continue
            drift = mismatch(np.load(ort_file), np.load(case_dir / rel), spec["rtol"], spec["atol"])
            if drift:
                problems.append(f"{name}: onnxruntime no longer gives the stored values ({drift[0]})")
    for name, rel in spec["expected"].items():
        got_file = out / output_file(name)
        if not got_file.exists():
            problems.append(f"{name}: no output file")
            continue
        bad = mismatch(np.load(got_file), np.load(case_dir / rel), spec["rtol"], spec["atol"])
        if bad:
            problems.append(f"{name}: {bad[0]}")
    return "; ".join(problems) or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodeflow", required=True)
    ap.add_argument("--cases", default=str(HERE), help="the folder of CASE/ folders (default: this one)")
    ap.add_argument("--node", help="Node.js, to run onnxruntime-node too (when tests/onnxruntime has it)")
    args = ap.parse_args()
    cases_dir = pathlib.Path(args.cases)
    node = args.node if args.node and shutil.which(args.node) and \
        (HERE.parent / "onnxruntime" / "node_modules" / "onnxruntime-node").is_dir() else None
    cases = sorted(d for d in cases_dir.iterdir() if (d / "case.json").is_file())
    if not cases:
        print("error: no case in", cases_dir)
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix="nodeflow-opsets-") as tmp:
        for case_dir in cases:
            problem = check(case_dir, args.nodeflow, pathlib.Path(tmp), node)
            opset = json.loads((case_dir / "case.json").read_text())["opset"]
            why = KNOWN_DIFFERENCES.get(case_dir.name)
            if why:
                if problem is None:
                    failed += 1
                    print(f"KNOWN DIFFERENCE NOW AGREES {case_dir.name}: remove it ({why})")
                else:
                    print(f"known difference {case_dir.name} (opset {opset}): {why} [{problem}]")
            elif problem:
                failed += 1
                print(f"FAIL {case_dir.name} (opset {opset}): {problem}")
            else:
                print(f"ok {case_dir.name} (opset {opset})")
    print(f"models of {cases_dir.name}: {len(cases)}, {len(cases) - failed} as expected, {failed} fail"
          + ("" if node else " (onnxruntime not run: no --node or no tests/onnxruntime/node_modules)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

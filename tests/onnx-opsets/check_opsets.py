#!/usr/bin/python3
"""Runs every model of tests/onnx-opsets/ (README.md) with `nodeflow run CASE/model.onnx`
and compares each output with CASE/expected/ (onnxruntime's values, stored) within the
case's rtol/atol, by the corpus's rule. Cases in KNOWN_DIFFERENCES (onnxruntime disagrees
with pooling.md) must still differ. Exit status 0 when all agree, else 1."""
import argparse
import json
import pathlib
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


def check(case_dir, nodeflow, work):
    spec = json.loads((case_dir / "case.json").read_text())
    out = work / case_dir.name
    cmd = [nodeflow, "run", str(case_dir / "model.onnx"), "-o", str(out)]
    for name, rel in spec["inputs"].items():
        cmd += ["-i", f"{name}={case_dir / rel}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return f"nodeflow run failed: {r.stderr.strip()}"
    problems = []
    for name, rel in spec["expected"].items():
        got_file = out / (name + ".npy")
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
    args = ap.parse_args()
    cases = sorted(d for d in HERE.iterdir() if (d / "case.json").is_file())
    if not cases:
        print("error: no case in", HERE)
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix="nodeflow-opsets-") as tmp:
        for case_dir in cases:
            problem = check(case_dir, args.nodeflow, pathlib.Path(tmp))
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
    print(f"old-opset models: {len(cases)}, {len(cases) - failed} as expected, {failed} fail")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

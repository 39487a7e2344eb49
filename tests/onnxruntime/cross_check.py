#!/usr/bin/python3
"""Cross-check of nodeflow's ONNX export against onnxruntime (tests/onnxruntime/README.md).

For every case of the conformance corpora given with --corpus whose kind is `forward`
or `backward`, converts CASE/graph.json to .onnx with `nodeflow convert`, runs it in
onnxruntime-node (run_ort.mjs) on CASE/inputs and compares every CASE/expected output
within the case's tolerance (output_tolerances first). Cases where pooling.md and
onnxruntime are known to differ are in EXCEPTIONS with the reason: they must fail
(to load, to run, or to agree); one that passes is an error too, so the table stays true.

Exit status 0 when everything agrees, 1 on any failure, 77 (CTest skip) when the
`nodeflow` under test has no `convert G OUT.onnx` yet."""
import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from npy_tolerance import mismatch  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SKIP = 77

# Where the writer warns that ONNX cannot type a node or onnxruntime cannot run it (a
# `convert` warning ending "written all the same": ONNX's type constraints, onnxruntime's
# missing kernels and its 1 to 3 spatial axes, serialization/onnx/onnx_writer.cpp), the case
# must fail in onnxruntime ('ort'); one that runs fails the test, so the writer's table stays
# true. That table is the one list of onnxruntime's missing kernels.
#
# Case -> (how it fails, why): onnxruntime 1.30 (CPU) does not give pooling.md's values
# without the writer knowing. Each must still fail here, the same way ('ort': onnxruntime
# refuses to load or run it; 'mismatch': it runs and disagrees).
NAN = ("NaN/-inf in MaxPool: onnxruntime's MaxPool starts from the lowest finite float and skips "
       "NaN, pooling.md propagates the first NaN (and its index) and keeps -inf")
EXCEPTIONS = {
    "maxpool_2d_same_upper_dilation_f32": ("mismatch", "SAME padding with dilations: onnxruntime "
                                           "sizes the output from the undilated kernel (6x6, "
                                           "pooling.md 7x7)"),
    "maxpool_1d_nan_propagates_first_nan_index_f32": ("mismatch", NAN),
    "maxpool_2d_nan_backward_f32": ("mismatch", NAN),
    "maxpool_2d_nan_indices_f32": ("mismatch", NAN),
    "initializer_base64_nan_f32": ("mismatch", NAN),
    "initializer_base64_nonfinite_values_exact_f32": ("mismatch", NAN),
    "graph_residual_block_backward_f32": ("mismatch", "a backward case: its expected forward values "
                                          "come from BatchNormalization in training mode (batch "
                                          "statistics, training.md); the exported node, like "
                                          "`nodeflow run`, uses the running statistics"),
}


def file_name(tensor):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in tensor)


def run(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def onnx_convert_exists(nodeflow, case_dir, work):
    """True when `nodeflow convert G OUT.onnx` writes a protobuf model (not JSON)."""
    out = work / "probe.onnx"
    r = run([nodeflow, "convert", str(case_dir / "graph.json"), str(out)])
    if r.returncode == 0 and out.exists():
        head = out.read_bytes()[:1]
        if head and head != b"{":
            return True
    # A convert that claims .onnx support but fails is a failure, not a skip.
    help_text = run([nodeflow, "convert", "--help"])
    if ".onnx" in help_text.stdout + help_text.stderr:
        raise SystemExit(f"nodeflow convert --help names .onnx but the probe failed: {r.stderr.strip()}")
    return False


def check_case(case_dir, nodeflow, node, work):
    """(status, detail, max error, warned): status is 'pass', 'convert', 'ort' or 'mismatch';
    warned: the writer warned that ONNX cannot type a node or onnxruntime cannot run it."""
    spec = json.loads((case_dir / "case.json").read_text())
    out = work / case_dir.parent.name / case_dir.name
    out.mkdir(parents=True, exist_ok=True)
    model = out / "model.onnx"
    r = run([nodeflow, "convert", str(case_dir / "graph.json"), str(model)])
    if r.returncode != 0:
        return "convert", r.stderr.strip(), None, False
    warnings = r.stderr.strip()
    warned = any(line.endswith("written all the same") for line in warnings.splitlines())
    feeds = [f"{name}={case_dir / rel}" for name, rel in spec.get("inputs", {}).items()]
    r = run([node, str(HERE / "run_ort.mjs"), str(model), str(out / "ort"), *feeds])
    if r.returncode != 0:
        detail = r.stderr.strip().splitlines()
        return "ort", (detail[-1] if detail else f"exit {r.returncode}") + (
            f" [writer: {warnings}]" if warnings else ""), None, warned
    problems, worst = [], None
    tolerances = spec.get("output_tolerances", {})
    for name, rel in spec.get("expected", {}).items():
        tol = tolerances.get(name, spec)
        got_file = out / "ort" / (file_name(name) + ".npy")
        if not got_file.exists():
            problems.append(f"{name}: onnxruntime gave no such output")
            continue
        want = np.load(case_dir / rel)
        got = np.load(got_file)
        bad = mismatch(got, want, tol.get("rtol", 0.0), tol.get("atol", 0.0))
        if bad:
            problems.append(f"{name}: {bad[0]}")
            if bad[1] is not None:
                worst = bad[1] if worst is None else max(worst, bad[1])
    if problems:
        return "mismatch", "; ".join(problems), worst, warned
    return "pass", warnings, None, warned


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodeflow", required=True, help="the nodeflow binary under test")
    ap.add_argument("--node", default="node", help="Node.js (onnxruntime-node runs in it)")
    ap.add_argument("--corpus", action="append", required=True, help="a conformance corpus folder")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--only", help="check only cases whose name contains this")
    args = ap.parse_args()

    if not (HERE / "node_modules" / "onnxruntime-node").is_dir():
        print(f"error: onnxruntime-node is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm ci` in {HERE}")
        return 1
    cases = []
    for corpus in args.corpus:
        for case_dir in sorted(pathlib.Path(corpus).iterdir()):
            spec_file = case_dir / "case.json"
            if not spec_file.is_file():
                continue
            if json.loads(spec_file.read_text())["kind"] not in ("forward", "backward"):
                continue
            if args.only and args.only not in case_dir.name:
                continue
            cases.append(case_dir)
    if not cases:
        print("error: no forward or backward case found")
        return 1

    with tempfile.TemporaryDirectory(prefix="nodeflow-ort-") as tmp:
        work = pathlib.Path(args.work) if args.work else pathlib.Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if not onnx_convert_exists(args.nodeflow, cases[0], work):
            print(f"SKIP: {args.nodeflow} has no `convert GRAPH OUT.onnx` yet (it wrote no ONNX model); "
                  "nothing to cross-check")
            return SKIP
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: check_case(c, args.nodeflow, args.node, work), cases))

    passed, excepted, failed, stale = [], [], [], []
    for case_dir, (status, detail, err, warned) in zip(cases, results):
        name = case_dir.name
        if warned and name not in EXCEPTIONS:
            if status == "ort":
                excepted.append(name)
                print(f"exception {name}: the writer warned [{detail}]")
            elif status == "pass":
                stale.append(name)
                print(f"WARNING NOW RUNS {name}: the writer warns, onnxruntime runs it: {detail}")
            else:
                failed.append(name)
                print(f"FAIL {name}: the writer warned, so onnxruntime should refuse it, but [{status}]: {detail}")
        elif name in EXCEPTIONS:
            how, why = EXCEPTIONS[name]
            if status == "pass":
                stale.append(name)
                print(f"EXCEPTION NOW PASSES {name}: remove it from EXCEPTIONS ({why})")
            elif status != how:
                failed.append(name)
                print(f"FAIL {name}: listed as failing by {how} ({why}), fails by {status}: {detail}")
            else:
                excepted.append(name)
                print(f"exception {name}: {why} [{status}: {detail}]")
        elif status == "pass":
            passed.append(name)
            if detail:
                print(f"pass {name} (writer warned: {detail})")
        else:
            failed.append(name)
            print(f"FAIL {name} [{status}{'' if err is None else f', max abs error {err:g}'}]: {detail}")
    unknown = sorted(set(EXCEPTIONS) - {c.name for c in cases})
    if unknown and not args.only:
        print(f"EXCEPTIONS names cases that do not exist: {', '.join(unknown)}")
    print(f"onnxruntime cross-check: {len(cases)} cases, {len(passed)} agree, "
          f"{len(excepted)} known differences, {len(failed)} fail, {len(stale)} exceptions now pass")
    return 1 if failed or stale or (unknown and not args.only) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Turns an imported classifier into a network `nodeflow train` trains (examples/classic/README.md):
the model read from ONNX (`nodeflow convert MODEL.onnx`, its weights not trainable, as every
model of another tool), plus an int64 `label` input, a SoftmaxCrossEntropyLoss node on the
logits named `loss`, and every float initializer but BatchNormalization's running
statistics marked trainable.

Usage: /usr/bin/python3 examples/classic/prepare_training.py --nodeflow build/nodeflow \\
           examples/classic/squeezenet_mnist.onnx OUT.json [--logits logits]"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodeflow", default="nodeflow")
    ap.add_argument("--logits", default="logits", help="the model's [N, classes] output")
    ap.add_argument("model")
    ap.add_argument("out")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        imported = pathlib.Path(tmp) / "imported.json"
        r = subprocess.run([args.nodeflow, "convert", args.model, str(imported)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"nodeflow convert failed: {r.stderr.strip()}")
        doc = json.loads(imported.read_text())
    if args.logits not in doc["outputs"]:
        sys.exit(f"the model has no output {args.logits!r} (outputs: {doc['outputs']})")
    doc["inputs"].append({"name": "label", "dtype": "int64", "shape": [None]})
    doc["nodes"].append({"op_type": "SoftmaxCrossEntropyLoss", "name": "xent", "inputs": [args.logits, "label"],
                         "attributes": {"reduction": "mean"}, "specified_outputs_name": ["loss"]})
    doc["outputs"] = [args.logits, "loss"]
    # BatchNormalization's running mean and variance are statistics, not weights (training-config.md).
    statistics = {n["inputs"][k] for n in doc["nodes"] if n["op_type"] == "BatchNormalization" for k in (3, 4)}
    trained = 0
    for init in doc["initializers"]:
        if init["dtype"] in ("float32", "float64", "float16", "bfloat16") and init["name"] not in statistics:
            init["trainable"] = True
            trained += 1
    pathlib.Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}: {trained} trainable initializers, loss 'loss' on '{args.logits}'")


if __name__ == "__main__":
    main()

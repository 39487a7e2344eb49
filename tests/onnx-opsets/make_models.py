#!/usr/bin/python3
"""Builds the old-opset models of tests/onnx-opsets/ (README.md) with python3-onnx and
stores onnxruntime's outputs for them as the expected values.

Usage: /usr/bin/python3 tests/onnx-opsets/make_models.py [--node node]
Needs python3-onnx and onnxruntime-node (`npm ci` in tests/onnxruntime). Rewrites every
CASE/ folder it makes: model.onnx, inputs/<name>.npy, expected/<name>.npy, case.json.
A model onnxruntime refuses is reported and not written."""
import argparse
import json
import pathlib
import shutil
import subprocess
import tempfile
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
RUN_ORT = HERE.parent / "onnxruntime" / "run_ort.mjs"
NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int64: TensorProto.INT64,
           np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32}
CASES = []


def rand(shape, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100 if dtype == np.int8 else 0, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def case(name, opset, op, inputs, outputs, note, consts=None, rtol=1e-5, atol=1e-6, out_shape=None,
         ort_as=None, before=None, typed=False, **attrs):
    """One node `op` at `opset`; inputs: {name: array} fed as graph inputs; consts:
    {name: array} as initializers (the inputs attributes moved to; name '' leaves an
    optional input out); outputs: names. out_shape: the output's shape where onnx 1.12
    has no shape inference for that version (the checker wants one). ort_as: (opset,
    attributes) of the same node at a later opset with the same meaning, which
    onnxruntime runs for the expected values when it has no kernel for `opset`. before: nodes
    (op, inputs, outputs, attributes) ahead of `op`, which then reads the last one's output
    instead of the graph inputs (an old form that needs the shape of a computed tensor); they
    have no names. typed: float32 consts in float_data rather than raw_data."""
    CASES.append(dict(name=name, opset=opset, op=op, inputs=inputs, consts=consts or {}, out_shape=out_shape, ort_as=ort_as,
                      outputs=outputs, attrs=attrs, note=note, rtol=rtol, atol=atol, before=before or [],
                      typed=typed))


X = rand((1, 2, 6, 7), 1)
X3 = rand((1, 2, 4, 5, 5), 2)
X1 = rand((2, 3, 9), 3)
i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731

# --- AveragePool: 1 / 7 (count_include_pad) / 10 (ceil_mode) / 11 (pads forms) / 19 (dilations)
case("averagepool_1_pads_excludes_pad", 1, "AveragePool", {"x": X}, ["y"],
     "opset 1: no count_include_pad, so padding is never counted (expected: the same node at opset 7)",
     kernel_shape=[3, 3], pads=[1, 1, 1, 1], ort_as=(7, {}))
case("averagepool_1_auto_pad_same_upper", 1, "AveragePool", {"x": X}, ["y"],
     "opset 1 auto_pad SAME_UPPER (expected: the same node at opset 7)", kernel_shape=[3, 2],
     strides=[2, 2], auto_pad="SAME_UPPER", ort_as=(7, {}))
case("averagepool_7_count_include_pad", 7, "AveragePool", {"x": X}, ["y"],
     "opset 7 count_include_pad=1 with asymmetric pads", kernel_shape=[3, 3], pads=[1, 0, 2, 1],
     count_include_pad=1)
case("averagepool_7_default_exclude_pad", 7, "AveragePool", {"x": X}, ["y"],
     "opset 7 count_include_pad absent: 0", kernel_shape=[2, 3], pads=[1, 1, 1, 1], strides=[2, 1])
case("averagepool_10_ceil_mode", 10, "AveragePool", {"x": X}, ["y"],
     "opset 10 ceil_mode=1 (last window starts inside the input)", kernel_shape=[3, 3], strides=[2, 2],
     ceil_mode=1)
case("averagepool_10_ceil_mode_include_pad", 10, "AveragePool", {"x": X}, ["y"],
     "opset 10 ceil_mode=1 with count_include_pad=1 and pads", kernel_shape=[3, 3], strides=[2, 2],
     pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
case("averagepool_11_same_lower", 11, "AveragePool", {"x": X}, ["y"],
     "opset 11 auto_pad SAME_LOWER", kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER")
case("averagepool_11_valid_3d", 11, "AveragePool", {"x": X3}, ["y"],
     "opset 11 auto_pad VALID over 3 spatial axes", kernel_shape=[2, 3, 2], strides=[1, 2, 2],
     auto_pad="VALID")
case("averagepool_19_dilations", 19, "AveragePool", {"x": X}, ["y"],
     "opset 19 dilations=2 with pads", kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 1, 1, 1])
case("averagepool_19_dilations_ceil", 19, "AveragePool", {"x": X}, ["y"],
     "opset 19 dilations with ceil_mode and count_include_pad", kernel_shape=[2, 2], dilations=[2, 1],
     strides=[2, 2], pads=[0, 1, 0, 1], ceil_mode=1, count_include_pad=1)

# --- MaxPool: 1 / 8 (Indices, storage_order) / 10 (ceil_mode, dilations) / 11 / 12 (int8, uint8)
case("maxpool_1_pads", 1, "MaxPool", {"x": X}, ["y"], "opset 1 MaxPool with pads",
     kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
case("maxpool_8_indices", 8, "MaxPool", {"x": X}, ["y", "indices"],
     "opset 8 Indices output (row-major flattened, storage_order 0)", kernel_shape=[2, 2], strides=[2, 2],
     pads=[0, 0, 0, 1])
case("maxpool_8_indices_storage_order_1", 8, "MaxPool", {"x": X}, ["y", "indices"],
     "opset 8 storage_order=1: Indices column-major", kernel_shape=[3, 2], strides=[1, 2], storage_order=1)
case("maxpool_9_indices_3d", 9, "MaxPool", {"x": X3}, ["y", "indices"],
     "opset 9 Indices over 3 spatial axes", kernel_shape=[2, 2, 2], strides=[2, 2, 2])
case("maxpool_10_ceil_mode_dilations", 10, "MaxPool", {"x": X}, ["y", "indices"],
     "opset 10 ceil_mode=1 with dilations", kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 1],
     ceil_mode=1)
case("maxpool_11_same_upper", 11, "MaxPool", {"x": X}, ["y"], "opset 11 auto_pad SAME_UPPER",
     kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
case("maxpool_12_dilations_1d", 12, "MaxPool", {"x": X1}, ["y", "indices"],
     "opset 12 1-d dilations=3 and pads", kernel_shape=[3], dilations=[3], pads=[2, 1])
case("maxpool_12_int8", 12, "MaxPool", {"x": rand((1, 2, 6, 7), 4, np.int8)}, ["y"],
     "opset 12 added int8/uint8", kernel_shape=[2, 2], strides=[2, 2])
case("maxpool_12_uint8_dilations", 12, "MaxPool", {"x": rand((1, 2, 6, 7), 5, np.uint8)}, ["y"],
     "opset 12 uint8 with dilations", kernel_shape=[2, 2], dilations=[2, 2])

# --- LpPool: 1 (float p) / 2 (int p) / 11 (pads forms) / 18 (ceil_mode, dilations)
case("lppool_1_float_p", 1, "LpPool", {"x": X}, ["y"],
     "LpPool-1: p is a float (expected: LpPool-2 with the int p 3)",
     kernel_shape=[2, 2], p=3.0, out_shape=(1, 2, 5, 6), ort_as=(2, {"p": 3}))
case("lppool_1_default_p", 1, "LpPool", {"x": X}, ["y"],
     "LpPool-1: p absent is 2.0 (expected: LpPool-2 without p)",
     kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], out_shape=(1, 2, 3, 4), ort_as=(2, {}))
case("lppool_2_p3", 2, "LpPool", {"x": X}, ["y"], "opset 2: p is an int", kernel_shape=[3, 2],
     strides=[2, 1], pads=[1, 0, 1, 0], p=3)
case("lppool_2_default_p", 2, "LpPool", {"x": X}, ["y"], "opset 2: p absent is 2", kernel_shape=[2, 2])
case("lppool_11_same_lower", 11, "LpPool", {"x": X}, ["y"], "opset 11 auto_pad SAME_LOWER",
     kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER", p=2)
case("lppool_18_ceil_dilations", 18, "LpPool", {"x": X}, ["y"], "opset 18 ceil_mode and dilations",
     kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 2], ceil_mode=1, p=1)
case("globalaveragepool_1", 1, "GlobalAveragePool", {"x": X}, ["y"], "opset 1")
case("globalmaxpool_1", 1, "GlobalMaxPool", {"x": X3}, ["y"], "opset 1, 3 spatial axes")
case("globallppool_2_p3", 2, "GlobalLpPool", {"x": X}, ["y"], "opset 2 int p", p=3)

# --- attributes that became inputs
S = rand((3, 1, 4, 1), 6)
case("squeeze_1_no_axes", 1, "Squeeze", {"x": S}, ["y"], "opset 1, no axes: every 1 removed", out_shape=(3, 4))
case("squeeze_11_axes_attribute", 11, "Squeeze", {"x": S}, ["y"], "axes attribute (input from 13), negative",
     axes=[-1])
case("squeeze_13_axes_input", 13, "Squeeze", {"x": S}, ["y"], "axes input", consts={"axes": i64(1, 3)})
case("unsqueeze_1_axes_attribute", 1, "Unsqueeze", {"x": X1}, ["y"], "opset 1 axes attribute", axes=[0, 3])
case("unsqueeze_11_negative_axes", 11, "Unsqueeze", {"x": X1}, ["y"], "opset 11 negative axes attribute",
     axes=[-1, 1])
R = rand((2, 3, 4), 7)
case("reducesum_1_axes_keepdims0", 1, "ReduceSum", {"x": R}, ["y"], "axes attribute (input from 13)",
     axes=[0, 2], keepdims=0)
case("reducesum_11_default_axes", 11, "ReduceSum", {"x": R}, ["y"], "no axes: all axes, keepdims 1")
case("reducesum_13_axes_input", 13, "ReduceSum", {"x": R}, ["y"], "axes input", consts={"axes": i64(-1)})
case("reducemean_13_axes_attribute", 13, "ReduceMean", {"x": R}, ["y"], "axes attribute (input from 18)",
     axes=[1])
case("reducemax_17_axes_attribute", 17, "ReduceMax", {"x": R}, ["y"], "axes attribute (input from 18)",
     axes=[0, -1], keepdims=0)
case("reducemin_11_axes_attribute", 11, "ReduceMin", {"x": R}, ["y"], "axes attribute", axes=[2])
case("reducemean_18_axes_input", 18, "ReduceMean", {"x": R}, ["y"], "axes input",
     consts={"axes": i64(0, 1)}, keepdims=0)
case("split_2_split_attribute", 2, "Split", {"x": X1}, ["a", "b"], "opset 2 split attribute",
     axis=2, split=[4, 5])
case("split_11_equal_negative_axis", 11, "Split", {"x": X1}, ["a", "b", "c"], "opset 11 no split: equal parts",
     axis=-1)
case("split_13_split_input", 13, "Split", {"x": X1}, ["a", "b"], "split input", consts={"split": i64(1, 2)},
     axis=1)
case("split_18_num_outputs", 18, "Split", {"x": X1}, ["a", "b", "c"], "num_outputs, uneven last part",
     axis=2, num_outputs=3)
case("clip_6_min_max_attributes", 6, "Clip", {"x": R}, ["y"], "min/max attributes (inputs from 11)",
     min=-0.5, max=0.75)
case("clip_6_default_max", 6, "Clip", {"x": R}, ["y"], "opset 6 max absent: +FLT_MAX", min=0.0)
case("clip_11_min_max_inputs", 11, "Clip", {"x": R}, ["y"], "min/max inputs",
     consts={"min": np.array(-0.25, np.float32), "max": np.array(0.5, np.float32)})
P = rand((1, 2, 3, 4), 8)
case("pad_2_constant_value", 2, "Pad", {"x": P}, ["y"], "opset 2 pads/value attributes",
     pads=[0, 0, 1, 2, 0, 0, 2, 1], value=1.5)
case("pad_2_reflect", 2, "Pad", {"x": P}, ["y"], "opset 2 reflect", pads=[0, 0, 1, 2, 0, 0, 2, 1],
     mode="reflect")
case("pad_2_edge", 2, "Pad", {"x": P}, ["y"], "opset 2 edge", pads=[0, 1, 2, 0, 0, 0, 1, 3], mode="edge")
case("pad_11_inputs", 11, "Pad", {"x": P}, ["y"], "pads and constant_value inputs",
     consts={"pads": i64(0, 0, 1, 1, 0, 0, 0, 2), "value": np.array(-2.0, np.float32)})
case("pad_18_axes_input", 18, "Pad", {"x": P}, ["y"], "axes input",
     consts={"pads": i64(2, 1, 0, 3), "value": np.array(0.5, np.float32), "axes": i64(-1, 2)})
case("slice_1_attributes", 1, "Slice", {"x": P}, ["y"], "opset 1 starts/ends/axes attributes",
     starts=[1, -3], ends=[3, 1000], axes=[2, 3])
case("slice_1_no_axes", 1, "Slice", {"x": P}, ["y"], "opset 1 axes absent: the first len(starts)",
     starts=[0, 1], ends=[1, 2])
case("slice_10_steps", 10, "Slice", {"x": P}, ["y"], "starts/ends/axes/steps inputs, negative step",
     consts={"starts": i64(-1, 0), "ends": i64(-1000, 3), "axes": i64(3, 2), "steps": i64(-2, 2)})
U = rand((1, 1, 3, 4), 9)
case("resize_10_nearest_scales", 10, "Resize", {"x": U}, ["y"], "opset 10: X, scales; asymmetric, floor",
     consts={"scales": np.array([1, 1, 2, 1.5], np.float32)}, mode="nearest")
case("resize_10_linear", 10, "Resize", {"x": U}, ["y"], "opset 10 linear (asymmetric coordinates)",
     consts={"scales": np.array([1, 1, 2, 2], np.float32)}, mode="linear")
case("resize_11_sizes_linear_half_pixel", 11, "Resize", {"x": U}, ["y"],
     "opset 11 roi, scales empty, sizes; linear half_pixel",
     consts={"roi": np.array([], np.float32), "scales": np.array([], np.float32), "sizes": i64(1, 1, 5, 7)},
     mode="linear", coordinate_transformation_mode="half_pixel")
case("resize_13_nearest_round_prefer_ceil", 13, "Resize", {"x": U}, ["y"],
     "opset 13 roi omitted, scales; nearest_mode round_prefer_ceil",
     consts={"": None, "scales": np.array([1, 1, 1.7, 2.3], np.float32)}, mode="nearest",
     nearest_mode="round_prefer_ceil")

# --- old forms that need the shape of a computed tensor (the reader infers it)
G = rand((3, 4), 10)
case("softmax_11_after_gemm", 11, "Softmax", {"x": G}, ["y"],
     "Softmax-11 (2-D coercion at axis 1) after Gemm: its input's shape is inferred",
     consts={"w": rand((4, 5), 11), "b": rand((5,), 12)},
     before=[("Gemm", ["x", "w", "b"], ["h"], {})])
case("logsoftmax_9_after_reshape", 9, "LogSoftmax", {"x": rand((2, 3, 4), 13)}, ["y"],
     "LogSoftmax-9 axis 1 after Reshape to [2, 1, 12]: one axis from 1 on is not 1",
     consts={"shape": i64(2, 1, 12)}, before=[("Reshape", ["x", "shape"], ["h"], {})], axis=1)
case("softmax_7_after_matmul_add_relu", 7, "Softmax", {"x": G}, ["y"],
     "Softmax-7 after MatMul, Add (numpy broadcasting from 7) and Relu",
     consts={"w": rand((4, 6), 14), "b": rand((6,), 15)},
     before=[("MatMul", ["x", "w"], ["m"], {}), ("Add", ["m", "b"], ["a"], {}), ("Relu", ["a"], ["h"], {})])

case("logsoftmax_9_after_batchnorm_pool_flatten_gemm_dropout", 9, "LogSoftmax", {"x": rand((1, 2, 4, 4), 16)}, ["y"],
     "LogSoftmax-9 after a chain of opset-9 nodes (BatchNormalization, MaxPool, Flatten, Gemm, Dropout with "
     "the ratio attribute); unnamed nodes, typed float_data",
     consts={"s": rand((2,), 17), "bias": rand((2,), 18), "mean": rand((2,), 19),
             "var": np.abs(rand((2,), 20)) + 0.5, "gw": rand((8, 3), 21), "gb": rand((3,), 22)},
     before=[("BatchNormalization", ["x", "s", "bias", "mean", "var"], ["bn"], {}),
             ("MaxPool", ["bn"], ["p"], {"kernel_shape": [2, 2], "strides": [2, 2]}),
             ("Flatten", ["p"], ["f"], {}), ("Gemm", ["f", "gw", "gb"], ["g"], {}),
             ("Dropout", ["g"], ["h"], {"ratio": 0.3})], typed=True)


def build(c, out, opset=None, attrs=None):
    inputs = [helper.make_tensor_value_info(n, NP2ONNX[a.dtype.type], a.shape) for n, a in c["inputs"].items()]
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.flatten().tolist())
             if c["typed"] and a.dtype == np.float32 else numpy_helper.from_array(a, n)
             for n, a in c["consts"].items() if n]
    names = list(c["inputs"]) + list(c["consts"])
    opset = opset or c["opset"]
    nodes = [helper.make_node(op, ins, outs, **at) for op, ins, outs, at in c["before"]]
    if nodes:
        names = [c["before"][-1][2][0]]
    nodes.append(helper.make_node(c["op"], names, c["outputs"], name=c["op"].lower(),
                                  **{**c["attrs"], **(attrs or {})}))
    x_type = NP2ONNX[next(iter(c["inputs"].values())).dtype.type]
    outs = [helper.make_tensor_value_info(n, TensorProto.INT64 if n == "indices" else x_type, c["out_shape"])
            for n in c["outputs"] if n]
    ir = 4 if opset < 7 else (7 if opset <= 12 else 8)
    graph = helper.make_graph(nodes, c["name"], inputs, outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir,
                              producer_name="tests/onnx-opsets/make_models.py")
    if opset <= 17:  # onnx 1.12 knows opsets up to 17: type the outputs and check
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        if c["out_shape"] is None:
            model.graph.ClearField("output")
            model.graph.output.extend(inferred.graph.output)
        onnx.checker.check_model(model, full_check=True)
    (out / "inputs").mkdir(parents=True)
    onnx.save(model, out / "model.onnx")
    for n, a in c["inputs"].items():
        np.save(out / "inputs" / f"{n}.npy", a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", default="node")
    ap.add_argument("--only", nargs="*", help="make only these cases (default: every case)")
    args = ap.parse_args()
    refused = []
    cases = [c for c in CASES if not args.only or c["name"] in args.only]
    for c in cases:
        out = HERE / c["name"]
        shutil.rmtree(out, ignore_errors=True)
        build(c, out)
        feeds = [f"{n}={out / 'inputs' / (n + '.npy')}" for n in c["inputs"]]
        ort_model = out / "model.onnx"
        if c["ort_as"]:
            ort_model = pathlib.Path(tempfile.mkdtemp()) / "m"
            build(c, ort_model, *c["ort_as"])
            ort_model = ort_model / "model.onnx"
        r = subprocess.run([args.node, str(RUN_ORT), str(ort_model), str(out / "expected"), *feeds],
                           capture_output=True, text=True)
        if c["ort_as"]:
            shutil.rmtree(ort_model.parent.parent)
        if r.returncode != 0:
            refused.append(f"{c['name']}: {r.stderr.strip()}")
            shutil.rmtree(out)
            continue
        spec = {"opset": c["opset"], "op": c["op"], "note": c["note"],
                "reference": "onnxruntime-node 1.30.0 (CPU)" + (
                    f", running the same node at opset {c['ort_as'][0]} with attributes {c['ort_as'][1]}"
                    if c["ort_as"] else ""), "rtol": c["rtol"], "atol": c["atol"],
                "inputs": {n: f"inputs/{n}.npy" for n in c["inputs"]},
                "expected": {n: f"expected/{n}.npy" for n in c["outputs"] if n}}
        (out / "case.json").write_text(json.dumps(spec, indent=1) + "\n")
    print(f"{len(cases) - len(refused)} models written, {len(refused)} refused by onnxruntime")
    for line in refused:
        print("  refused", line)


if __name__ == "__main__":
    sys.exit(main())

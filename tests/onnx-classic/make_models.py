#!/usr/bin/python3
"""Builds the "light" classic CNNs and the LRN, Constant/ConstantOfShape and legacy-broadcasting
models of tests/onnx-classic/ (README.md) with python3-onnx, and stores onnxruntime's outputs
for them as the expected values.

Usage: /usr/bin/python3 tests/onnx-classic/make_models.py [--node node] [--only NAME ...]
Needs python3-onnx and onnxruntime-node (`npm ci` in tests/onnxruntime). Rewrites every CASE/
folder it makes: model.onnx, inputs/<name>.npy, expected/<name>.npy, case.json.

The networks follow the structure of ONNX's model zoo versions (AlexNet, ZFNet, GoogLeNet,
VGG, SqueezeNet, ResNet, DenseNet, ShuffleNet) at the opsets the zoo publishes them in (3, 6,
7, 8, 9), with small shapes; their weights are small seeded random initializers, Constant
nodes (the zoo's older files) or ConstantOfShape stand-ins (ONNX's 'light' models), so the
repository stays small. onnxruntime 1.30 has no kernels for some opset-1..6 versions (Gemm,
Add/Mul/Sub/Div, Dropout, BatchNormalization before 7): for those models the expected values
come from onnxruntime running the same model converted by onnx.version_converter to the
first opset it runs (case.json's `reference` says which); where legacy broadcasting is the
point of a case, numpy's values, computed by hand from ONNX's opset-6 definition, must agree
with them too."""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
RUN_ORT = HERE.parent / "onnxruntime" / "run_ort.mjs"
CASES = {}


class Net:
    """A graph under construction at one opset: nodes, initializers, weights in three forms."""

    def __init__(self, name, opset, seed, weights="init"):
        self.name, self.opset, self.weights = name, opset, weights
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.feeds = [], [], [], {}
        self.count = 0

    def fresh(self, hint):
        self.count += 1
        return f"{hint}{self.count}"

    def input(self, name, shape, dtype=np.float32):
        a = self.rng.standard_normal(shape).astype(dtype)
        self.inputs.append(helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)],
                                                         shape))
        self.feeds[name] = a
        return name

    def const(self, value, hint="c", form=None):
        """A constant tensor: an initializer, a Constant node or (opset >= 9, a value
        repeated) a ConstantOfShape of an int64 shape initializer."""
        name = self.fresh(hint)
        form = form or self.weights
        value = np.asarray(value)
        if form == "constant":
            self.nodes.append(helper.make_node("Constant", [], [name],
                                               value=numpy_helper.from_array(value, name)))
        elif form == "cos":
            assert self.opset >= 9 and np.all(value == value.flat[0])
            shape = self.fresh("shape")
            self.inits.append(numpy_helper.from_array(np.array(value.shape, dtype=np.int64), shape))
            self.nodes.append(helper.make_node("ConstantOfShape", [shape], [name],
                                               value=numpy_helper.from_array(value.flatten()[:1], "v")))
        else:
            self.inits.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, shape, fan_in, form=None):
        form = form or self.weights
        if form == "cos":  # a stand-in: every weight 1/fan_in, as ONNX's 'light' models fill theirs
            return self.const(np.full(shape, 1.0 / fan_in, dtype=np.float32), "w", "cos")
        w = (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        return self.const(w, "w", form)

    def bias(self, n, form=None):
        return self.const((self.rng.standard_normal(n) * 0.1).astype(np.float32), "b", form)

    def op(self, op, inputs, nout=1, **attrs):
        outs = [self.fresh(op.lower()) for _ in range(nout)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs[0] if nout == 1 else outs

    # Layers, as the zoo's files spell them at self.opset.
    def conv(self, x, cin, cout, k, s=1, p=0, g=1, bias=True, form=None, legacy_bias=False):
        w = self.weight((cout, cin // g, k, k), cin // g * k * k, form)
        ins = [x, w] + ([self.bias(cout)] if bias and not legacy_bias else [])
        y = self.op("Conv", ins, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, group=g)
        if legacy_bias:  # Conv without B, then Add(broadcast=1, axis=1) of the [C] bias (opset <= 6)
            b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
            if self.opset < 7:
                y = self.op("Add", [y, self.const(b, "b")], broadcast=1, axis=1)
            else:  # the same at opset 7: the bias as [C, 1, 1]
                y = self.op("Add", [y, self.const(b.reshape(cout, 1, 1), "b")])
        return y

    def relu(self, x):
        return self.op("Relu", [x])

    def lrn(self, x, size=5, alpha=1e-4, beta=0.75, bias=1.0):
        return self.op("LRN", [x], size=size, alpha=alpha, beta=beta, bias=bias)

    def maxpool(self, x, k, s, p=0):
        return self.op("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)

    def avgpool(self, x, k, s, p=0):
        return self.op("AveragePool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)

    def bn(self, x, c):
        scale = (1 + 0.1 * self.rng.standard_normal(c)).astype(np.float32)
        shift = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        mean = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        var = (0.5 + self.rng.random(c)).astype(np.float32)
        attrs = {"epsilon": 1e-5}
        if self.opset < 7:
            attrs["is_test"] = 1
        if self.opset < 9:
            attrs["spatial"] = 1
        return self.op("BatchNormalization", [x] + [self.const(v, "bn") for v in (scale, shift, mean, var)],
                       **attrs)

    def dropout(self, x, mask=False):
        """mask: a second output nothing reads, as Caffe2's exports in the zoo have (`_fc6_mask`)."""
        attrs = {"ratio": 0.5} if self.opset < 12 else {}
        if self.opset < 7:
            attrs["is_test"] = 1
        if mask:
            y, m = self.op("Dropout", [x], nout=2, **attrs)
            return y
        return self.op("Dropout", [x], **attrs)

    def flatten_to(self, x, n):
        if self.opset < 5:  # Reshape-1: the shape is an attribute
            self.fresh("shape")  # the names stay those of the network at a later opset
            return self.op("Reshape", [x], shape=[1, n])
        return self.op("Reshape", [x, self.const(np.array([1, n], dtype=np.int64), "shape", "init")])

    def gemm(self, x, n_in, n_out, form=None):
        attrs = {"transB": 1}
        if self.opset < 7:
            attrs["broadcast"] = 1  # C is a [N] vector
        return self.op("Gemm", [x, self.weight((n_out, n_in), n_in, form), self.bias(n_out)], **attrs)

    def concat(self, xs):
        return self.op("Concat", xs, axis=1)

    def add(self, a, b):
        return self.op("Add", [a, b])

    def model(self, outputs, out_rank=2):
        # Before opset 6 the outputs get symbolic dims of rank out_rank: onnx 1.12 cannot infer them.
        dims = [f"d{k}" for k in range(out_rank)] if self.opset < 6 else None
        # Where onnx 1.12 infers no shape (a Reshape of a Constant-12 shape), the builder states it.
        dims = getattr(self, "out_shape", dims)
        graph = helper.make_graph(self.nodes, self.name, self.inputs,
                                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, dims) for o in outputs],
                                  initializer=self.inits)
        ir = 3 if self.opset < 7 else (4 if self.opset < 9 else 7)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)], ir_version=ir,
                                  producer_name="tests/onnx-classic/make_models.py")
        if ir < 4:  # IR 3 lists every initializer among the graph inputs
            for init in self.inits:
                model.graph.input.append(helper.make_tensor_value_info(init.name, init.data_type, init.dims))
        # onnx 1.12 has no shape inference for some opset-1 versions (Relu-1): the outputs of
        # those models keep their element type only, and the checker skips inference.
        old = self.opset < 6
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=not old, data_prop=True)
        if not old and dims is None:
            model.graph.ClearField("output")
            model.graph.output.extend(inferred.graph.output)
        onnx.checker.check_model(model, full_check=not old)
        return model


def case(name, opset, note, rtol=1e-5, atol=1e-6, ort_opset=None, hand=None, ort=True):
    """Registers build(opset), which makes case `name` (a Net and its output names) at
    `opset`. ort_opset: onnxruntime runs the same network built at that opset (the same
    weights and inputs, each node in that opset's form). hand(net): numpy's values of the
    outputs by ONNX's definition, which must agree with onnxruntime's; ort=False: onnxruntime
    refuses the model, hand's values are the expected ones."""
    def register(build):
        CASES[name] = dict(build=build, opset=opset, note=note, rtol=rtol, atol=atol, ort_opset=ort_opset,
                           hand=hand, ort=ort)
        return build
    return register


# Float32 networks: nodeflow's and onnxruntime's Conv/Gemm sum in different orders (im2col
# and Eigen's GEMM against MLAS), each output of a K-term dot product carrying a rounding
# of about sqrt(K) * 2^-24 relative; over up to 20 layers with K <= 1152 that stays below
# 1e-5 of the values' scale (measured: README.md). rtol 1e-4, atol 1e-5 leaves a factor 10.
NET_TOL = dict(rtol=1e-4, atol=1e-5)


@case("alexnet_3", opset=3, note="AlexNet as the zoo's bvlc_alexnet opset 3: Conv, LRN, grouped Conv, Reshape-1's shape "
      "attribute, Gemm-1 broadcast, Dropout is_test with unread mask outputs (`_fc6_mask`); weights as Constant nodes", ort_opset=7, **NET_TOL)
def alexnet(opset):
    n = Net("alexnet", opset, 1, weights="constant")
    x = n.input("data_0", [1, 3, 35, 35])
    x = n.maxpool(n.lrn(n.relu(n.conv(x, 3, 16, 5, s=2))), 3, 2)
    x = n.maxpool(n.lrn(n.relu(n.conv(x, 16, 32, 3, p=1, g=2))), 3, 2)
    x = n.relu(n.conv(x, 32, 24, 3, p=1))
    x = n.relu(n.conv(x, 24, 24, 3, p=1, g=2))
    x = n.maxpool(n.relu(n.conv(x, 24, 16, 3, p=1, g=2)), 2, 1)
    x = n.flatten_to(x, 16 * 2 * 2)
    x = n.dropout(n.relu(n.gemm(x, 64, 48)), mask=True)
    x = n.dropout(n.relu(n.gemm(x, 48, 48)), mask=True)
    return n, [n.op("Softmax", [n.gemm(x, 48, 10)])]


@case("zfnet_6", opset=6, note="ZFNet as the zoo's zfnet512 opset 6: Conv without B plus Add(broadcast=1, axis=1) of the "
      "bias (legacy broadcasting), LRN, Gemm-6 broadcast, Dropout-6 is_test with an unread mask output", ort_opset=7, **NET_TOL)
def zfnet(opset):
    n = Net("zfnet", opset, 2)
    x = n.input("gpu_0/data_0", [1, 3, 32, 32])
    x = n.maxpool(n.lrn(n.relu(n.conv(x, 3, 12, 5, s=2, p=1, legacy_bias=True)), size=3), 3, 2, p=1)
    x = n.maxpool(n.lrn(n.relu(n.conv(x, 12, 24, 3, p=1, legacy_bias=True)), size=3), 3, 2, p=1)
    x = n.relu(n.conv(x, 24, 24, 3, p=1, legacy_bias=True))
    x = n.maxpool(n.relu(n.conv(x, 24, 16, 3, p=1, legacy_bias=True)), 2, 2)
    x = n.flatten_to(x, 16 * 2 * 2)
    x = n.dropout(n.relu(n.gemm(x, 64, 32)), mask=True)
    return n, [n.op("Softmax", [n.gemm(x, 32, 10)])]


@case("googlenet_7", opset=7, note="GoogLeNet as the zoo's bvlc_googlenet opset 7: LRN, inception modules (four branches, "
      "Concat), AveragePool, Dropout-7 with an unread mask output", **NET_TOL)
def googlenet(opset):
    n = Net("googlenet", opset, 3)
    x = n.input("data_0", [1, 3, 64, 64])
    x = n.lrn(n.maxpool(n.relu(n.conv(x, 3, 16, 7, s=2, p=3)), 3, 2, p=1))
    x = n.relu(n.conv(x, 16, 16, 1))
    x = n.maxpool(n.lrn(n.relu(n.conv(x, 16, 24, 3, p=1))), 3, 2, p=1)

    def inception(x, cin, c1, c3r, c3, c5r, c5, cp):
        b1 = n.relu(n.conv(x, cin, c1, 1))
        b3 = n.relu(n.conv(n.relu(n.conv(x, cin, c3r, 1)), c3r, c3, 3, p=1))
        b5 = n.relu(n.conv(n.relu(n.conv(x, cin, c5r, 1)), c5r, c5, 5, p=2))
        bp = n.relu(n.conv(n.maxpool(x, 3, 1, p=1), cin, cp, 1))
        return n.concat([b1, b3, b5, bp]), c1 + c3 + c5 + cp

    x, c = inception(x, 24, 8, 8, 12, 4, 4, 4)
    x, c = inception(x, c, 12, 8, 16, 4, 8, 8)
    x = n.maxpool(x, 3, 2, p=1)
    x, c = inception(x, c, 16, 12, 16, 4, 8, 8)
    x = n.dropout(n.avgpool(x, 4, 1), mask=True)
    x = n.flatten_to(x, c)
    return n, [n.op("Softmax", [n.gemm(x, c, 10)])]


@case("vgg_8", opset=8, note="VGG-19-like at opset 8 (the zoo's vgg19 opsets 3-9): stacks of 3x3 Conv/Relu, MaxPool, "
      "Flatten, Gemm, Dropout", **NET_TOL)
def vgg(opset):
    n = Net("vgg", opset, 4)
    x = n.input("data_0", [1, 3, 32, 32])
    c = 3
    for width, convs in ((8, 2), (12, 2), (16, 4), (16, 4)):
        for _ in range(convs):
            x, c = n.relu(n.conv(x, c, width, 3, p=1)), width
        x = n.maxpool(x, 2, 2)
    x = n.op("Flatten", [x], axis=1)
    x = n.dropout(n.relu(n.gemm(x, c * 4, 48)))
    x = n.dropout(n.relu(n.gemm(x, 48, 48)))
    return n, [n.op("Softmax", [n.gemm(x, 48, 10)])]


def squeezenet_body(n, x):
    def fire(x, cin, s, e, form=None):
        sq = n.relu(n.conv(x, cin, s, 1, form=form))
        return n.concat([n.relu(n.conv(sq, s, e, 1)), n.relu(n.conv(sq, s, e, 3, p=1))]), 2 * e

    x = n.maxpool(n.relu(n.conv(x, n.channels, 16, 3, s=2)), 3, 2)
    c = 16
    for s, e, form in ((4, 8, n.stand_in), (4, 8, None)):
        x, c = fire(x, c, s, e, form)
    x = n.maxpool(x, 3, 2)
    for s, e in ((8, 16), (8, 16)):
        x, c = fire(x, c, s, e)
    x = n.dropout(x)
    x = n.relu(n.conv(x, c, n.classes, 1))
    return n.op("Flatten", [n.op("GlobalAveragePool", [x])])


@case("squeezenet_9", opset=9, note="SqueezeNet 1.1 as the zoo's squeezenet1.1 (opset 9 form): Fire modules (squeeze 1x1, "
      "expand 1x1 and 3x3, Concat), Dropout-7, GlobalAveragePool, Softmax; the first squeeze weights as "
      "ConstantOfShape",
      **NET_TOL)
def squeezenet(opset):
    n = Net("squeezenet", opset, 5)
    n.channels, n.classes, n.stand_in = 3, 10, "cos"
    x = n.input("data", [1, 3, 48, 48])
    logits = squeezenet_body(n, x)
    return n, [n.op("Softmax", [logits])]


@case("resnet_9", opset=9, note="ResNet-18-like as the zoo's resnet v1 (opsets 7-9): Conv, BatchNormalization, Relu, residual "
      "Add, strided 1x1 projections, GlobalAveragePool, Flatten, Gemm; the stem's weights as ConstantOfShape",
      **NET_TOL)
def resnet(opset):
    n = Net("resnet", opset, 6)
    x = n.input("data", [1, 3, 32, 32])
    x = n.maxpool(n.relu(n.bn(n.conv(x, 3, 8, 7, s=2, p=3, bias=False, form="cos"), 8)), 3, 2, p=1)
    c = 8
    for width, stride in ((8, 1), (8, 1), (16, 2), (16, 1), (24, 2)):
        y = n.relu(n.bn(n.conv(x, c, width, 3, s=stride, p=1, bias=False), width))
        y = n.bn(n.conv(y, width, width, 3, p=1, bias=False), width)
        short = x if stride == 1 and width == c else n.bn(n.conv(x, c, width, 1, s=stride, bias=False), width)
        x, c = n.relu(n.add(y, short)), width
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x])])
    return n, [n.gemm(x, c, 10)]


@case("densenet_9", opset=9, note="DenseNet-121-like as the zoo's densenet121 (opsets 3-9): BatchNormalization-Relu-Conv "
      "dense layers concatenated, transitions with AveragePool, GlobalAveragePool", **NET_TOL)
def densenet(opset):
    n = Net("densenet", opset, 7)
    x = n.input("data_0", [1, 3, 32, 32])
    x = n.maxpool(n.relu(n.bn(n.conv(x, 3, 16, 7, s=2, p=3, bias=False), 16)), 3, 2, p=1)
    c, growth = 16, 8
    for block in range(2):
        for _ in range(3):
            y = n.conv(n.relu(n.bn(x, c)), c, 4 * growth, 1, bias=False)
            y = n.conv(n.relu(n.bn(y, 4 * growth)), 4 * growth, growth, 3, p=1, bias=False)
            x, c = n.concat([x, y]), c + growth
        if block == 0:
            x = n.avgpool(n.conv(n.relu(n.bn(x, c)), c, c // 2, 1, bias=False), 2, 2)
            c //= 2
    x = n.relu(n.bn(x, c))
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x])])
    return n, [n.op("Softmax", [n.gemm(x, c, 10)])]


@case("shufflenet_9", opset=9, note="ShuffleNet-like as the zoo's shufflenet (opsets 3-9): grouped 1x1 Conv, channel shuffle "
      "(Reshape, Transpose, Reshape), depthwise 3x3 Conv, AveragePool shortcut with Concat, residual Add",
      **NET_TOL)
def shufflenet(opset):
    n = Net("shufflenet", opset, 8)
    x = n.input("gpu_0/data_0", [1, 3, 32, 32])
    x = n.maxpool(n.relu(n.conv(x, 3, 12, 3, s=2, p=1)), 3, 2, p=1)
    c, g, hw = 12, 3, 8

    def shuffle(x, c, hw):
        shape = lambda *v: n.const(np.array(v, dtype=np.int64), "shape", "init")  # noqa: E731
        x = n.op("Reshape", [x, shape(1, g, c // g, hw, hw)])
        x = n.op("Transpose", [x], perm=[0, 2, 1, 3, 4])
        return n.op("Reshape", [x, shape(1, c, hw, hw)])

    def unit(x, cin, cout, stride, hw):
        mid = cout // 4 if stride == 1 else (cout - cin) // 4
        mid = (mid + g - 1) // g * g
        y = n.relu(n.bn(n.conv(x, cin, mid, 1, g=g, bias=False), mid))
        y = shuffle(y, mid, hw)
        y = n.bn(n.conv(y, mid, mid, 3, s=stride, p=1, g=mid, bias=False), mid)
        out = cout if stride == 1 else cout - cin
        y = n.bn(n.conv(y, mid, out, 1, g=g, bias=False), out)
        if stride == 1:
            return n.relu(n.add(x, y))
        return n.relu(n.concat([n.avgpool(x, 3, 2, p=1), y]))

    x = unit(x, c, 24, 2, hw)
    x = unit(x, 24, 24, 1, hw // 2)
    x = unit(x, 24, 48, 2, hw // 2)
    x = n.op("GlobalAveragePool", [x])
    x = n.op("Flatten", [x])
    return n, [n.op("Softmax", [n.gemm(x, 48, 10)])]


# --- LRN on its own
@case("lrn_1_alexnet", opset=1, note="LRN-1 with AlexNet's attributes, alpha raised so the normalization shows")
def lrn_1(opset):
    n = Net("lrn", opset, 9)
    n.out_rank = 4
    x = n.input("x", [2, 7, 3, 4])
    n.feeds["x"] *= 4
    return n, [n.lrn(x, size=5, alpha=0.5, beta=0.75, bias=1.0)]


def hand_lrn(x, size, alpha, beta, bias):
    """ONNX LRN-13's definition: channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = x.astype(np.float64)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = np.zeros_like(x)
    for c in range(x.shape[1]):
        sq[:, c] = (x[:, max(0, c - before):min(x.shape[1], c + after + 1)] ** 2).sum(axis=1)
    return (x / (bias + alpha / size * sq) ** beta).astype(np.float32)


@case("lrn_13_even_size", opset=13, note="LRN-13 with an even size (4): the window takes 1 channel before c and 2 after "
      "(PyTorch's local_response_norm takes 2 before; onnxruntime 1.30 refuses even sizes)", ort=False,
      hand=lambda net: [hand_lrn(net.feeds["x"], 4, 0.8, 0.6, 2.0)])
def lrn_13_even(opset):
    n = Net("lrn", opset, 10)
    x = n.input("x", [1, 6, 5])
    n.feeds["x"] *= 3
    return n, [n.lrn(x, size=4, alpha=0.8, beta=0.6, bias=2.0)]


@case("lrn_13_size3_bias", opset=13, note="LRN-13 size 3 with bias and beta away from AlexNet's")
def lrn_13_size3(opset):
    n = Net("lrn", opset, 17)
    x = n.input("x", [2, 5, 4, 3])
    n.feeds["x"] *= 2
    return n, [n.lrn(x, size=3, alpha=0.3, beta=1.3, bias=0.7)]


@case("lrn_13_size1_3d", opset=13, note="LRN-13 size 1 over [N, C, D1, D2, D3] (onnxruntime 1.30 takes 4-D "
      "inputs only)", ort=False, hand=lambda net: [hand_lrn(net.feeds["x"], 1, 2.0, 0.5, 0.5)])
def lrn_13_size1(opset):
    n = Net("lrn", opset, 11)
    x = n.input("x", [1, 3, 2, 3, 2])
    return n, [n.lrn(x, size=1, alpha=2.0, beta=0.5, bias=0.5)]


# --- Legacy broadcasting (opsets 1-6): numpy's values by ONNX's opset-6 definition too
def legacy(a_shape, b_shape, op, axis=None, broadcast=1, seed=12, opset=6):
    """A at input, B an initializer; at opset 6 with broadcast/axis, from 7 (onnxruntime's
    model) B reshaped by hand to line up with numpy broadcasting."""
    n = Net(f"legacy_{op.lower()}", opset, seed)
    a = n.input("a", a_shape)
    b_value = n.rng.standard_normal(b_shape).astype(np.float32) + (3.0 if op == "Div" else 0.0)
    n.b_value, n.axis = b_value, axis
    if opset < 7:
        attrs = {"broadcast": broadcast}
        if axis is not None:
            attrs["axis"] = axis
        return n, [n.op(op, [a, n.const(b_value, "B")], **attrs)]
    return n, [n.op(op, [a, n.const(lined_up(b_value, len(a_shape), axis), "B")])]


def lined_up(b, rank, axis):
    """B of ONNX's legacy broadcasting as numpy broadcasting reads it: trailing 1s after
    the run it fills in A (one element: a scalar)."""
    if b.size == 1:
        return b.reshape(())
    start = rank - b.ndim if axis is None else axis % rank
    return b.reshape(b.shape + (1,) * (rank - start - b.ndim))


def hand_legacy(op, a, b, axis):
    """ONNX Add-6: B's shape is a contiguous run of A's starting at `axis` (suffix matching
    without it), or B has one element; B is repeated over A's other axes."""
    if b.size != 1:  # B's dimensions less leading and trailing 1s (Caffe2 skips them) equal A's there
        start = a.ndim - b.ndim if axis is None else axis % a.ndim
        first, last = 0, b.ndim
        while first < last and b.shape[first] == 1:
            first += 1
        while last > first and b.shape[last - 1] == 1:
            last -= 1
        assert a.shape[start + first:start + last] == b.shape[first:last]
    bb = np.broadcast_to(lined_up(b, a.ndim, axis), a.shape)
    return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](a, bb)


LEGACY = {
    "add_6_axis1_channel_bias": ("Add", [2, 3, 4, 5], [3], 1),
    "mul_6_axis0": ("Mul", [2, 3, 4], [2], 0),
    "sub_6_axis1_inner_run": ("Sub", [2, 3, 4, 5], [3, 4], 1),
    "div_6_suffix_no_axis": ("Div", [2, 3, 4], [3, 4], None),
    "mul_6_one_element_b": ("Mul", [2, 3, 4], [1, 1], 2),
    "add_6_axis1_trailing_one": ("Add", [2, 3, 4, 5], [3, 1], 1),
}
for _name, (_op, _a, _b, _axis) in LEGACY.items():
    def _build(opset, op=_op, a=_a, b=_b, axis=_axis):
        return legacy(a, b, op, axis, opset=opset)

    def _hand(net, op=_op, axis=_axis):
        return [hand_legacy(op, net.feeds["a"], net.b_value, axis)]

    case(_name, 6, f"opset-6 {_op} with broadcast=1, B {_b} at axis {_axis} of A {_a}", ort_opset=7,
         hand=_hand)(_build)


@case("add_6_equal_shapes", opset=6, note="opset-6 Add without broadcast: equal shapes", ort_opset=7,
      hand=lambda net: [net.feeds["a"] + net.b_value])
def add_6_equal(opset):
    return legacy([2, 3], [2, 3], "Add", broadcast=0, opset=opset)


@case("gemm_6_broadcast_c_vector", opset=6, note="Gemm-6 with broadcast=1: C [N] repeated over the rows", ort_opset=7,
      hand=lambda net: [net.feeds["a"] @ net.w.T * 0.5 + 2.0 * net.c])
def gemm_6(opset):
    n = Net("gemm", opset, 13)
    a = n.input("a", [3, 4])
    n.w = n.rng.standard_normal((5, 4)).astype(np.float32)
    n.c = n.rng.standard_normal(5).astype(np.float32)
    attrs = {"broadcast": 1} if opset < 7 else {}
    return n, [n.op("Gemm", [a, n.const(n.w, "B"), n.const(n.c, "C")], transB=1, alpha=0.5, beta=2.0, **attrs)]


# --- Constant and ConstantOfShape folded at load
@case("constant_12_value_floats_ints", opset=12, note="Constant-12's value_floats and value_ints (a Reshape's shape)")
def constant_12(opset):
    n = Net("constant", opset, 14)
    x = n.input("x", [2, 3])
    c = n.fresh("c")
    n.nodes.append(helper.make_node("Constant", [], [c], value_floats=[0.5, -1.0, 2.0]))
    s = n.fresh("s")
    n.nodes.append(helper.make_node("Constant", [], [s], value_ints=[3, 2]))
    n.out_shape = [3, 2]
    return n, [n.op("Reshape", [n.op("Mul", [x, c]), s])]


@case("constant_11_sparse_value", opset=11, note="Constant-11's sparse_value (coordinates [NNZ, rank]) made dense")
def constant_11(opset):
    n = Net("constant", opset, 15)
    x = n.input("x", [2, 3])
    values = numpy_helper.from_array(np.array([1.5, -2.0, 4.0], dtype=np.float32), "values")
    indices = numpy_helper.from_array(np.array([[0, 1], [1, 0], [1, 2]], dtype=np.int64), "indices")
    c = n.fresh("c")
    n.nodes.append(helper.make_node("Constant", [], [c],
                                    sparse_value=helper.make_sparse_tensor(values, indices, [2, 3])))
    n.out_shape = [2, 3]
    return n, [n.op("Add", [x, c])]


@case("constantofshape_9_default_and_int64", opset=9, note="ConstantOfShape-9: the default (float32 0) and an int64 value "
      "(the shape of a Reshape), from a Constant's shape")
def constant_of_shape(opset):
    n = Net("cos", opset, 16)
    x = n.input("x", [2, 3, 2])
    shape = n.fresh("shape")
    n.nodes.append(helper.make_node("Constant", [], [shape], value=numpy_helper.from_array(
        np.array([2, 3, 2], dtype=np.int64), "v")))
    zeros = n.op("ConstantOfShape", [shape])
    two = n.fresh("two")
    n.nodes.append(helper.make_node("Constant", [], [two], value=numpy_helper.from_array(
        np.array([1], dtype=np.int64), "v")))
    six = n.op("ConstantOfShape", [two], value=numpy_helper.from_array(np.array([12], dtype=np.int64), "v"))
    y = n.op("Add", [x, zeros])
    n.out_shape = [12]
    return n, [n.op("Reshape", [y, six])]


def ort_run(node, model, out_dir, feeds):
    r = subprocess.run([node, str(RUN_ORT), str(model), str(out_dir), *feeds], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"onnxruntime refused {model}: {r.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", default="node")
    ap.add_argument("--only", nargs="*", help="make only these cases (default: every case)")
    args = ap.parse_args()
    for name, c in CASES.items():
        if args.only and name not in args.only:
            continue
        net, outputs = c["build"](c["opset"])
        model = net.model(outputs, getattr(net, "out_rank", 2))
        out = HERE / name
        shutil.rmtree(out, ignore_errors=True)
        (out / "inputs").mkdir(parents=True)
        onnx.save(model, out / "model.onnx")
        for k, a in net.feeds.items():
            np.save(out / "inputs" / (k.replace("/", "_") + ".npy"), a)
        feeds = [f"{k}={out / 'inputs' / (k.replace('/', '_') + '.npy')}" for k in net.feeds]
        ort_model = out / "model.onnx"
        with tempfile.TemporaryDirectory() as tmp:
            if c["ort_opset"]:
                ort_net, ort_outputs = c["build"](c["ort_opset"])
                ort_model = pathlib.Path(tmp) / "model.onnx"
                onnx.save(ort_net.model(ort_outputs, getattr(ort_net, "out_rank", 2)), ort_model)
                for o, o_ort in zip(outputs, ort_outputs):
                    assert o == o_ort, f"{name}: output {o} is {o_ort} at opset {c['ort_opset']}"
            if c["ort"]:
                ort_run(args.node, ort_model, out / "expected", feeds)
            else:
                (out / "expected").mkdir()
                for o, want in zip(outputs, c["hand"](net)):
                    np.save(out / "expected" / (o + ".npy"), want)
        if c["hand"] and c["ort"]:
            for o, want in zip(outputs, c["hand"](net)):
                got = np.load(out / "expected" / (o + ".npy"))
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{name}: onnxruntime vs numpy")
        spec = {"opset": net.opset, "note": c["note"],
                "reference": "numpy, by ONNX's definition (make_models.py)" if not c["ort"] else
                "onnxruntime-node 1.30.0 (CPU, optimizations off)" + (
                    f" on the same network built at opset {c['ort_opset']} (make_models.py)"
                    if c["ort_opset"] else "") + ("; numpy by ONNX's opset-6 definition agrees within 1e-6"
                                                  if c["hand"] else ""),
                "onnxruntime_same_model": bool(c["ort"] and not c["ort_opset"]),
                "rtol": c["rtol"], "atol": c["atol"],
                "inputs": {k: f"inputs/{k.replace('/', '_')}.npy" for k in net.feeds},
                "expected": {o: f"expected/{o}.npy" for o in outputs}}
        (out / "case.json").write_text(json.dumps(spec, indent=1) + "\n")
        size = (out / "model.onnx").stat().st_size
        print(f"{name}: opset {net.opset}, {len(model.graph.node)} nodes, {size} bytes")


if __name__ == "__main__":
    sys.exit(main())

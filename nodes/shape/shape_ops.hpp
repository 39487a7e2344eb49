#pragma once
// Registration of the data-movement family (ONNX opset 22): ops that move,
// copy or relabel elements without arithmetic, so each takes every graph
// dtype. Gradients flow to float inputs only and are the exact inverse
// movement (docs/operators.md, "Gradient conventions"); shape-like inputs
// (axes, split, pads, ...) are constant int64 initializers and get none.
// Flatten and Reshape are declared in nodes/layer_ops.hpp.
//
// Each op registers its schema and factory from its own .cpp, next to its
// node class; register_builtin_ops (nodes/builtin_ops.cpp) calls them all.
namespace nodeflow {

class OpRegistry;

}  // namespace nodeflow

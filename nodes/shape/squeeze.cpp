// Squeeze (ONNX Squeeze-21) and Unsqueeze (ONNX Unsqueeze-21): remove or
// insert axes of length 1, named by the constant int64 input `axes`
// (negative values count from the end: of the input's rank for Squeeze, of
// the output's for Unsqueeze; no repeats). Squeeze without axes removes
// every axis of length 1. Like Reshape they only relabel the shape: the
// output shares the input's buffer, any dtype.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/movement.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

// The `axes` input's values: a constant when the graph checked it, else
// (run time, a lone node in a test) the tensor given.
const Tensor* axes_input(const InferContext& ctx) {
  if (ctx.inputs.size() < 2 || ctx.inputs[1] == nullptr) return nullptr;
  if (ctx.constants[1] == nullptr) throw InvalidGraph("input 1 (axes) must be a non-trainable initializer");
  return ctx.constants[1];
}

const Tensor* axes_input(const ForwardContext& ctx) { return present(ctx.inputs, 1); }

Shape squeezed(const Shape& in, const Tensor* axes) {
  Shape out;
  if (axes == nullptr) {
    for (std::size_t a = 0; a < in.size(); ++a) {
      if (in[a] == kDynamicDim)
        throw ShapeMismatch("Squeeze without axes needs the input's dimensions, and dimension " +
                            std::to_string(a) + " of " + to_string(in) + " is known only at run time (give axes)");
      if (in[a] != 1) out.push_back(in[a]);
    }
    return out;
  }
  const auto values = int64_list("Squeeze", 1, "axes", *axes);
  const std::vector<std::int64_t> given(values.begin(), values.end());
  const std::vector<bool> removed = axis_mask(given, in.size(), 1, "axes");
  for (std::size_t a = 0; a < in.size(); ++a) {
    if (!removed[a]) {
      out.push_back(in[a]);
    } else if (in[a] != 1 && in[a] != kDynamicDim) {
      throw ShapeMismatch("input 1 (axes) " + to_string(AttrValue{given}) + ": axis " + std::to_string(a) +
                          " of the input " + to_string(in) + " has length " + std::to_string(in[a]) + ", not 1");
    }
  }
  return out;
}

Shape unsqueezed(const Shape& in, const Tensor& axes) {
  const auto given = int64_list("Unsqueeze", 1, "axes", axes);
  const std::size_t rank = in.size() + given.size();
  const std::vector<bool> inserted = axis_mask(given, rank, 1, "axes", "output");
  Shape out;
  auto next = in.begin();
  for (std::size_t a = 0; a < rank; ++a) out.push_back(inserted[a] ? 1 : *next++);
  return out;
}

class SqueezeNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    return {TensorInfo{ctx.inputs[0]->dtype, squeezed(ctx.inputs[0]->shape, axes_input(ctx))}};
  }
  void forward(const ForwardContext& ctx) const override {
    ctx.outputs[0] = ctx.inputs[0].reshaped(squeezed(ctx.inputs[0].shape(), axes_input(ctx)));
  }
  void backward(const BackwardContext& ctx) const override { relabel_gradient(ctx); }
};

class UnsqueezeNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const Tensor* axes = axes_input(ctx);
    if (axes == nullptr) throw InvalidGraph("input 1 (axes) is required");
    return {TensorInfo{ctx.inputs[0]->dtype, unsqueezed(ctx.inputs[0]->shape, *axes)}};
  }
  void forward(const ForwardContext& ctx) const override {
    ctx.outputs[0] = ctx.inputs[0].reshaped(unsqueezed(ctx.inputs[0].shape(), ctx.inputs[1]));
  }
  void backward(const BackwardContext& ctx) const override { relabel_gradient(ctx); }
};

}  // namespace

void register_squeeze(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Squeeze";
  s.definition = "ONNX Squeeze-21";
  s.doc = "Removes the length-1 axes listed in axes (all of them if absent)";
  s.inputs = {{"data", graph_dtypes(), "any shape"},
              {"axes", int64_dtypes(), "1-D: the axes of length 1 to remove, in [-r, r-1]; absent: all of them",
               /*constant=*/true}};
  s.min_inputs = 1;
  s.outputs = {{"squeezed", graph_dtypes(), "data's elements and dtype, without those axes"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<SqueezeNode>(std::move(c)); };
  registry.add(std::move(s));
}

void register_unsqueeze(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Unsqueeze";
  s.definition = "ONNX Unsqueeze-21";
  s.doc = "Inserts length-1 axes at the output positions listed in axes";
  s.inputs = {{"data", graph_dtypes(), "any shape"},
              {"axes", int64_dtypes(), "1-D: where the output has new axes of length 1, in [-r', r'-1] for the "
                                       "output rank r'", /*constant=*/true}};
  s.min_inputs = 2;
  s.outputs = {{"expanded", graph_dtypes(), "data's elements and dtype, with the new axes"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<UnsqueezeNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow

// Expand (ONNX Expand-13): the numpy broadcast of the input to `shape`
// (bidirectional: a 1 in shape keeps the input's dimension, a shorter shape
// is aligned on the right). Any dtype; the gradient sums over the copies.
#include <algorithm>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/broadcast.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/mapped_copy_node.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

Shape expanded_shape(const Shape& input, const Tensor& shape) {
  const auto dims = int64_list("Expand", 1, "shape", shape);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      throw ShapeMismatch("input 1 (shape): shape[" + std::to_string(i) + "] = " + std::to_string(dims[i]) +
                          ": dimensions must be >= 0");
  try {
    return broadcast_shapes(input, Shape(dims.begin(), dims.end()));
  } catch (const ShapeMismatch& e) {
    throw ShapeMismatch(std::string("input 1 (shape): ") + e.what());
  }
}

class ExpandNode final : public MappedCopyNode {
 public:
  using MappedCopyNode::MappedCopyNode;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& input = *ctx.inputs[0];
    check_int64_list("Expand", 1, "shape", *ctx.inputs[1]);
    if (ctx.constants[1] == nullptr) {  // the graph makes it a constant; a lone node may lack it
      const std::int64_t rank = ctx.inputs[1]->shape[0];
      const auto out_rank =
          std::max(static_cast<std::size_t>(std::max(rank, std::int64_t{0})), input.shape.size());
      return {TensorInfo{input.dtype, Shape(out_rank, kDynamicDim)}};
    }
    return {TensorInfo{input.dtype, expanded_shape(input.shape, *ctx.constants[1])}};
  }

 protected:
  // The sum over the copies is broadcasting's gradient (docs/operators.md,
  // "Broadcasting"), which sums whole runs instead of scattering element by
  // element.
  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_inputs.empty() || ctx.grad_inputs[0].empty() || ctx.grad_outputs[0].empty()) return;
    require_saved("Expand", ctx.saved.size(), 1);
    check_output_gradient("Expand", 0, ctx.grad_outputs[0], expanded_shape(ctx.inputs[0].shape, ctx.saved[0]));
    accumulate_broadcast_gradient(ctx.grad_inputs[0], ctx.grad_outputs[0], ctx.scale_for(0), ctx.threads);
  }

  AxisMaps maps_for(const Shape& input, std::span<const Tensor> args) const override {
    const Shape out = expanded_shape(input, args[0]);
    Shape view(out.size() - input.size(), 1);
    view.insert(view.end(), input.begin(), input.end());
    return make_axis_maps(view, out, [&](std::size_t a, std::int64_t i) { return view[a] == 1 ? 0 : i; });
  }
};

}  // namespace

void register_expand(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Expand";
  s.definition = "ONNX Expand-13";
  s.doc = "Broadcasts input to shape (numpy rules; the result may be larger than shape)";
  s.inputs = {{"input", graph_dtypes(), "any rank"},
              {"shape", int64_dtypes(), "1-D: the shape to broadcast to (numpy rules, both ways)", true}};
  s.min_inputs = 2;
  s.outputs = {{"output", graph_dtypes(), "the broadcast of input's shape and shape; input's dtype"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ExpandNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow

// Tile (ONNX Tile-13): each axis of the input repeated `repeats[a]` times
// (numpy.tile with one repeat per axis). Any dtype; the gradient sums over
// the copies.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/broadcast.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/mapped_copy_node.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

// d * repeat per axis (a dynamic d stays so unless the repeat is 0).
Shape tiled_shape(const Shape& input, const Tensor& repeats) {
  const auto r = int64_list("Tile", 1, "repeats", repeats);
  if (r.size() != input.size())
    throw ShapeMismatch("input 1 (repeats) has " + std::to_string(r.size()) + " values for input of rank " +
                        std::to_string(input.size()) + "; Tile needs one per axis");
  Shape out;
  for (std::size_t a = 0; a < r.size(); ++a) {
    const std::string where =
        "input 1 (repeats): repeats[" + std::to_string(a) + "] = " + std::to_string(r[a]);
    if (r[a] < 0) throw ShapeMismatch(where + ": repeats must be >= 0");
    std::int64_t d = input[a];
    if (r[a] == 0)
      d = 0;
    else if (d != kDynamicDim && __builtin_mul_overflow(d, r[a], &d))
      throw ShapeMismatch(where + " times dimension " + std::to_string(input[a]) + " overflows int64");
    out.push_back(d);
  }
  return out;
}

class TileNode final : public MappedCopyNode {
 public:
  using MappedCopyNode::MappedCopyNode;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& input = *ctx.inputs[0];
    check_int64_list("Tile", 1, "repeats", *ctx.inputs[1]);
    if (ctx.constants[1] == nullptr)  // the graph makes it a constant; a lone node may lack it
      return {TensorInfo{input.dtype, Shape(input.shape.size(), kDynamicDim)}};
    return {TensorInfo{input.dtype, tiled_shape(input.shape, *ctx.constants[1])}};
  }

 protected:
  // The sum over the copies is broadcasting's gradient: the output gradient
  // viewed as [r0, d0, r1, d1, ...] summed to [1, d0, 1, d1, ...].
  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_inputs.empty() || ctx.grad_inputs[0].empty() || ctx.grad_outputs[0].empty()) return;
    require_saved("Tile", ctx.saved.size(), 1);
    const Shape& in = ctx.inputs[0].shape;
    const Shape out = tiled_shape(in, ctx.saved[0]);
    check_output_gradient("Tile", 0, ctx.grad_outputs[0], out);
    if (ctx.grad_outputs[0].numel() == 0) return;
    Shape copies, tiles;
    for (std::size_t a = 0; a < in.size(); ++a) {
      copies.insert(copies.end(), {out[a] / in[a], in[a]});
      tiles.insert(tiles.end(), {std::int64_t{1}, in[a]});
    }
    Tensor dst = ctx.grad_inputs[0].reshaped(tiles);  // shares the buffer: += lands in the gradient
    accumulate_broadcast_gradient(dst, ctx.grad_outputs[0].reshaped(copies), ctx.scale_for(0), ctx.threads);
  }

  AxisMaps maps_for(const Shape& input, std::span<const Tensor> args) const override {
    return make_axis_maps(input, tiled_shape(input, args[0]),
                          [&](std::size_t a, std::int64_t i) { return i % input[a]; });
  }
};

}  // namespace

void register_tile(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Tile";
  s.definition = "ONNX Tile-13";
  s.doc = "Repeats the input repeats[i] times along each axis i";
  s.inputs = {{"input", graph_dtypes(), "any rank"},
              {"repeats", int64_dtypes(), "1-D: one non-negative repeat per input axis", true}};
  s.min_inputs = 2;
  s.outputs = {{"output", graph_dtypes(), "input's rank and dtype, each axis d * repeat long"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<TileNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow

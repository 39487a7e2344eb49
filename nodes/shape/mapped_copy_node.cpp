#include "nodes/shape/mapped_copy_node.hpp"

#include "nodes/common/layer_common.hpp"

namespace nodeflow {

void MappedCopyNode::forward(const ForwardContext& ctx) const {
  const Tensor& data = ctx.inputs[0];
  const std::span<const Tensor> args = ctx.inputs.subspan(1);
  const AxisMaps maps = maps_for(data.shape(), args);
  Tensor out = Tensor::uninitialized(data.dtype(), maps.output);
  copy_mapped(maps, data, fill_value(data, args), out, ctx.threads);
  ctx.outputs[0] = out.reshaped(output_shape(data.shape(), maps, args));
  // Handles, not copies: backward needs the values that made the maps.
  if (ctx.saved != nullptr) ctx.saved->assign(args.begin(), args.end());
}

void MappedCopyNode::backward(const BackwardContext& ctx) const {
  if (ctx.grad_inputs.empty() || ctx.grad_inputs[0].empty() || ctx.grad_outputs[0].empty()) return;
  require_saved(op_type(), ctx.saved.size(), ctx.inputs.size() - 1);
  const AxisMaps maps = maps_for(ctx.inputs[0].shape, ctx.saved);
  check_output_gradient(op_type(), 0, ctx.grad_outputs[0],
                        output_shape(ctx.inputs[0].shape, maps, ctx.saved));
  scatter_add_mapped(maps, ctx.grad_outputs[0], ctx.scale_for(0), ctx.grad_inputs[0], ctx.threads);
}

Shape MappedCopyNode::output_shape(const Shape&, const AxisMaps& maps, std::span<const Tensor>) const {
  return maps.output;
}

const Tensor* MappedCopyNode::fill_value(const Tensor&, std::span<const Tensor>) const { return nullptr; }

}  // namespace nodeflow

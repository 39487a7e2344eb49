#include "nodes/shape/mapped_copy_node.hpp"

#include "core/errors.hpp"
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

const Tensor* present(std::span<const Tensor> args, std::size_t i) {
  return i < args.size() && !args[i].empty() ? &args[i] : nullptr;
}

std::string input_name(std::size_t k, const std::string& name) {
  return "input " + std::to_string(k) + " (" + name + ")";
}

void check_int64_list(const std::string& op, std::size_t k, const std::string& name, const TensorInfo& t) {
  check_int64_input(op, k, name, t.dtype);
  if (t.shape.size() != 1)
    throw ShapeMismatch(input_name(k, name) + " has shape " + to_string(t.shape) + "; " + op +
                        " needs a 1-D int64 tensor");
}

std::span<const std::int64_t> int64_list(const std::string& op, std::size_t k, const std::string& name,
                                         const Tensor& t) {
  check_int64_list(op, k, name, TensorInfo{t.dtype(), t.shape()});
  return t.values<std::int64_t>();
}

std::vector<std::size_t> normalized_axes(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                                         const std::string& name) {
  const auto r = static_cast<std::int64_t>(rank);
  std::vector<std::size_t> out;
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t v = axes[i];
    const std::string where =
        input_name(k, name) + ": " + name + "[" + std::to_string(i) + "] = " + std::to_string(v);
    if (v < -r || v >= r)
      throw ShapeMismatch(where + " is outside [" + std::to_string(-r) + ", " + std::to_string(r - 1) +
                          "] for data of rank " + std::to_string(rank));
    const auto a = static_cast<std::size_t>(v < 0 ? v + r : v);
    if (seen[a]) throw ShapeMismatch(where + " names axis " + std::to_string(a) + " twice");
    seen[a] = true;
    out.push_back(a);
  }
  return out;
}

}  // namespace nodeflow

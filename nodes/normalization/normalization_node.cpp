#include "nodes/normalization/normalization_node.hpp"

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

AttrSpec stash_type_spec(int since_version) {
  AttrSpec s;
  s.name = "stash_type";
  s.kind = AttrKind::Int;
  s.default_value = AttrValue{kStashFloat32};
  s.allowed_ints = {kStashFloat32};
  s.since_version = since_version;
  s.doc = "dtype the statistics are computed in: 1 (float32), the only one taken";
  return s;
}

AttrSpec epsilon_spec() {
  AttrSpec s = float_spec("epsilon", 1e-5, "added to the variance, >= 0");
  s.min_float = FloatBound{0.0, false};
  return s;
}

void check_normalization_input(const std::string& op, std::size_t k, const std::string& name, DType dtype,
                               const std::string& x_name, DType x_dtype) {
  check_float_input(op, k, name, dtype);
  if (k > 0) check_same_dtype(op, k, name, dtype, x_name, x_dtype);
}

void check_channel_parameter(std::size_t k, const std::string& name, const Shape& shape, std::int64_t channels) {
  if (shape.size() != 1 || (shape[0] != channels && shape[0] != kDynamicDim && channels != kDynamicDim))
    throw ShapeMismatch("input " + std::to_string(k) + " (" + name + ") has shape " + to_string(shape) +
                        "; it needs [C] = [" + (channels == kDynamicDim ? "?" : std::to_string(channels)) + "]");
}

RowStatistics normalization_forward(const ForwardContext& ctx, const RowLayout& layout, DType compute,
                                    const Tensor& scale, const Tensor& bias, double epsilon) {
  const Tensor& x_in = ctx.inputs[0];
  const Tensor x = as_dtype(x_in, compute);
  RowStatistics s = normalize_rows(layout, x, scale, bias, epsilon, ctx.threads);
  s.y = as_dtype(s.y, x_in.dtype());
  if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {x, s.mean, s.inv_std, scale});
  return s;
}

ParameterGradients normalization_backward(const BackwardContext& ctx, const std::string& op, const RowLayout& layout,
                                          bool want_scale, bool want_bias, const Shape* statistics_shape) {
  require_saved(op, ctx.saved.size(), 4);
  const Tensor& x = ctx.saved[0];
  const Tensor& mean = ctx.saved[1];
  const DType ct = x.dtype();
  const auto gradient = [&](std::size_t k, const Shape& shape, const Shape& as) {
    if (k >= ctx.grad_outputs.size() || ctx.grad_outputs[k].empty()) return Tensor{};
    check_output_gradient(op, k, ctx.grad_outputs[k], shape);
    return as_dtype(ctx.grad_outputs[k], ct).reshaped(as);
  };
  const Tensor dy = gradient(0, ctx.inputs[0].shape, x.shape());
  const Tensor dmean = statistics_shape ? gradient(1, *statistics_shape, mean.shape()) : Tensor{};
  const Tensor dinv = statistics_shape ? gradient(2, *statistics_shape, mean.shape()) : Tensor{};
  ParameterGradients p;
  if (dy.empty() && dmean.empty() && dinv.empty()) {
    ctx.zero_if_overwritten(0);
    return p;
  }
  const std::int64_t params = layout.params();
  if (want_scale && !dy.empty()) p.scale = Tensor(ct, {params});
  if (want_bias && !dy.empty()) p.bias = Tensor(ct, {params});
  Tensor none;
  Tensor& dx = ctx.grad_inputs.empty() ? none : ctx.grad_inputs[0];
  normalize_rows_backward(layout, x, mean, ctx.saved[2], ctx.saved[3],
                          {&dy, &dmean, &dinv, &dx, ctx.scale_for(0), ctx.overwrites(0), &p.scale, &p.bias}, ctx.threads);
  return p;
}

}  // namespace nodeflow

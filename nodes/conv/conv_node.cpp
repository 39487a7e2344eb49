#include "nodes/conv/conv_node.hpp"

#include <string>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

ConvNodeBase::ConvNodeBase(NodeConfig c, bool transposed)
    : Node(std::move(c)), transposed_(transposed), attrs_(parse_conv_attributes(config().attributes)) {}

std::shared_ptr<const ConvGeometry> ConvNodeBase::geometry(const Shape& x, const Shape& w) const {
  return geometries_.get({x, w}, [&] {
    return transposed_ ? conv_transpose_geometry(attrs_, x, w) : conv_geometry(attrs_, x, w);
  });
}

void ConvNodeBase::check_bias(const Shape& b, const ConvGeometry& g) const {
  const std::int64_t m = bias_length(g);
  if (b.size() != 1 || (b[0] != kDynamicDim && m != kDynamicDim && b[0] != m))
    throw ShapeMismatch("input 2 (B) has shape " + to_string(b) + "; " + op() + " needs [M] = [" +
                        (m == kDynamicDim ? std::string("?") : std::to_string(m)) + "] (" +
                        (transposed_ ? "W's axis 1 times group" : "W's axis 0") + ")");
}

std::vector<TensorInfo> ConvNodeBase::infer(const InferContext& ctx) const {
  const TensorInfo& x = *ctx.inputs[0];
  const TensorInfo& w = *ctx.inputs[1];
  check_float_input(op(), 0, "X", x.dtype);
  check_same_dtype(op(), 1, "W", w.dtype, "X", x.dtype);
  const auto held = geometry(x.shape, w.shape);
  if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
    check_same_dtype(op(), 2, "B", ctx.inputs[2]->dtype, "X", x.dtype);
    check_bias(ctx.inputs[2]->shape, *held);
  }
  return {TensorInfo{x.dtype, y_shape(*held)}};
}

void ConvNodeBase::forward(const ForwardContext& ctx) const {
  const Tensor& x = ctx.inputs[0];
  const Tensor& w = ctx.inputs[1];
  const Tensor b = ctx.inputs.size() > 2 ? ctx.inputs[2] : Tensor{};
  const auto held = geometry(x.shape(), w.shape());
  if (!b.empty()) check_bias(b.shape(), *held);
  const Tensor xc = to_compute(x);
  const Tensor wc = to_compute(w);
  const Tensor bc = to_compute(b);
  // Conv writes Y whole (conv_forward); ConvTranspose adds into zeros.
  Tensor y = transposed_ ? Tensor(xc.dtype(), y_shape(*held)) : Tensor::uninitialized(xc.dtype(), y_shape(*held));
  compute_forward(*held, xc, wc, bc, y, ctx);
  ctx.outputs[0] = as_dtype(y, x.dtype());
  if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {xc, wc});
}

void ConvNodeBase::backward(const BackwardContext& ctx) const {
  const Tensor& dy_in = ctx.grad_outputs[0];
  if (dy_in.empty()) return;
  require_saved(op(), ctx.saved.size(), 2);
  const Tensor& xc = ctx.saved[0];
  const Tensor& wc = ctx.saved[1];
  const auto held = geometry(xc.shape(), wc.shape());
  check_output_gradient(op(), 0, dy_in, y_shape(*held));
  const Tensor dy = to_compute(dy_in);
  auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
  // The kernels add into their gradient buffers (the += contract), so a
  // wanted gradient of the compute dtype and scale 1 is passed as it is;
  // any other gets a zeroed buffer, added with its scale afterwards.
  // ConvTranspose's dX is Conv's forward, which writes its output: never direct.
  auto direct = [&](std::size_t k, std::int64_t count) {
    return !(transposed_ && k == 0) && ctx.scale_for(k) == 1.0 && ctx.grad_inputs[k].dtype() == xc.dtype() &&
           ctx.grad_inputs[k].numel() == count;
  };
  Tensor grads[3];
  const Shape shapes[3] = {xc.shape(), wc.shape(), {bias_length(*held)}};
  for (std::size_t k = 0; k < 3; ++k)
    if (wanted(k))
      grads[k] = direct(k, element_count(shapes[k])) ? ctx.grad_inputs[k] : Tensor(xc.dtype(), shapes[k]);
  compute_backward(*held, xc, wc, dy, grads[0], grads[1], grads[2], ctx);
  for (std::size_t k = 0; k < 3; ++k)
    if (wanted(k) && grads[k].raw() != ctx.grad_inputs[k].raw())
      accumulate_gradient(ctx.grad_inputs[k], grads[k], ctx.scale_for(k));
}

}  // namespace nodeflow

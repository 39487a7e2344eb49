// Conv (ONNX Conv-22), any number of spatial axes >= 1, with groups,
// dilations, strides, pads and auto_pad. Forward and backward are the kernels
// of conv_kernels.hpp.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/conv/conv_geometry.hpp"
#include "nodes/conv/conv_kernels.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

void check_bias(const Shape& b, std::int64_t m) {
  if (b.size() != 1 || (b[0] != kDynamicDim && m != kDynamicDim && b[0] != m))
    throw ShapeMismatch("input 2 (B) has shape " + to_string(b) + "; Conv needs [M] = [" +
                        (m == kDynamicDim ? std::string("?") : std::to_string(m)) +
                        "] (W's axis 0)");
}

class ConvNode final : public Node {
 public:
  explicit ConvNode(NodeConfig c)
      : Node(std::move(c)), attrs_(parse_conv_attributes(config().attributes)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const TensorInfo& w = *ctx.inputs[1];
    check_float_input("Conv", 0, "X", x.dtype);
    check_same_dtype("Conv", 1, "W", w.dtype, "X", x.dtype);
    const auto held = geometry(x.shape, w.shape);
    const ConvGeometry& g = *held;
    if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
      check_same_dtype("Conv", 2, "B", ctx.inputs[2]->dtype, "X", x.dtype);
      check_bias(ctx.inputs[2]->shape, g.out_channels);
    }
    return {TensorInfo{x.dtype, g.output_shape()}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const Tensor& w = ctx.inputs[1];
    const Tensor b = ctx.inputs.size() > 2 ? ctx.inputs[2] : Tensor{};
    const auto held = geometry(x.shape(), w.shape());
    const ConvGeometry& g = *held;
    if (!b.empty()) check_bias(b.shape(), g.out_channels);
    const Tensor xc = to_compute(x);
    const Tensor wc = to_compute(w);
    const Tensor bc = to_compute(b);
    Tensor y(xc.dtype(), g.output_shape());
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      conv_forward<T>(g, xc.data<T>(), wc.data<T>(), bc.empty() ? nullptr : bc.data<T>(), y.data<T>(),
                      ctx.max_tensor_bytes);
    });
    ctx.outputs[0] = as_dtype(y, x.dtype());
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {xc, wc});
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy_in = ctx.grad_outputs[0];
    if (dy_in.empty()) return;
    require_saved("Conv", ctx.saved.size(), 2);
    const Tensor& xc = ctx.saved[0];
    const Tensor& wc = ctx.saved[1];
    const auto held = geometry(xc.shape(), wc.shape());
    const ConvGeometry& g = *held;
    check_output_gradient("Conv", 0, dy_in, g.output_shape());
    const Tensor dy = to_compute(dy_in);
    auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    Tensor dx = wanted(0) ? Tensor(xc.dtype(), xc.shape()) : Tensor{};
    Tensor dw = wanted(1) ? Tensor(wc.dtype(), wc.shape()) : Tensor{};
    Tensor db = wanted(2) ? Tensor(xc.dtype(), {g.out_channels}) : Tensor{};
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      auto ptr = [](Tensor& t) { return t.empty() ? nullptr : t.data<T>(); };
      conv_backward<T>(g, xc.data<T>(), wc.data<T>(), dy.data<T>(), ptr(dx), ptr(dw), ptr(db),
                       ctx.max_tensor_bytes);
    });
    for (std::size_t k = 0; k < 3; ++k)
      if (wanted(k))
        accumulate_gradient(ctx.grad_inputs[k], k == 0 ? dx : k == 1 ? dw : db, ctx.scale_for(k));
  }

 private:
  // conv_geometry() of X's and W's shapes, resolved at the first call with
  // them (infer, forward or backward) and then shared.
  std::shared_ptr<const ConvGeometry> geometry(const Shape& x, const Shape& w) const {
    return geometries_.get({x, w}, [&] { return conv_geometry(attrs_, x, w); });
  }

  ConvAttributes attrs_;
  ShapeCache<std::pair<Shape, Shape>, ConvGeometry> geometries_;
};

}  // namespace

void register_conv(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Conv";
  s.definition = "ONNX Conv-22";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"W", float_dtypes(), "M x C/group x k1..kn; X's dtype"},
              {"B", float_dtypes(), "optional [M] bias; X's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "N x M x O1..On"}};
  s.attributes = conv_attribute_specs();
  s.check_attributes = check_conv_attributes;
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ConvNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow

// ConvTranspose (ONNX ConvTranspose-22), any number of spatial axes >= 1,
// with groups, dilations, strides, pads, output_padding, output_shape and
// auto_pad. It is the adjoint of the Conv that conv_transpose_geometry
// describes (input Y's shape, output X's, weight W), so it runs Conv's
// kernels with the roles exchanged (docs/operators.md, "Gradients"):
//   Y  = Conv's input gradient for the output gradient X (W^T X, col2im);
//   dX = Conv's forward of dY (im2col, product);
//   dW = Conv's weight gradient with input dY and output gradient X.
// The images are split across the executor's threads (Conv's kernels run on
// the geometry of each part's images).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/parallel.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/conv/conv_geometry.hpp"
#include "nodes/conv/conv_kernels.hpp"
#include "nodes/conv/conv_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "ConvTranspose";

void check_bias(const Shape& b, std::int64_t m) {
  if (b.size() != 1 || (b[0] != kDynamicDim && m != kDynamicDim && b[0] != m))
    throw ShapeMismatch("input 2 (B) has shape " + to_string(b) + "; ConvTranspose needs [M] = [" +
                        (m == kDynamicDim ? std::string("?") : std::to_string(m)) +
                        "] (W's axis 1 times group)");
}

// The batch splits into one part per thread, at most one per image.
std::int64_t part_count(int threads, const ConvGeometry& g) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(threads, g.batch));
}

// Calls body(part, first, k) for the parts k = 0..parts-1 of the batch on
// their own threads: `part` is g for the images [first, first + part.batch).
template <typename F>
void for_each_part(std::int64_t parts, const ConvGeometry& g, F&& body) {
  parallel_ranges(static_cast<int>(parts), parts, [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      ConvGeometry part = g;
      const std::int64_t first = g.batch * k / parts;
      part.batch = g.batch * (k + 1) / parts - first;
      body(part, first, k);
    }
  });
}

class ConvTransposeNode final : public Node {
 public:
  explicit ConvTransposeNode(NodeConfig c)
      : Node(std::move(c)), attrs_(parse_conv_attributes(config().attributes)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const TensorInfo& w = *ctx.inputs[1];
    check_float_input(kOp, 0, "X", x.dtype);
    check_same_dtype(kOp, 1, "W", w.dtype, "X", x.dtype);
    const auto held = geometry(x.shape, w.shape);
    const ConvGeometry& g = *held;
    if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
      check_same_dtype(kOp, 2, "B", ctx.inputs[2]->dtype, "X", x.dtype);
      check_bias(ctx.inputs[2]->shape, g.in_channels);
    }
    return {TensorInfo{x.dtype, g.input_shape()}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const Tensor& w = ctx.inputs[1];
    const Tensor b = ctx.inputs.size() > 2 ? ctx.inputs[2] : Tensor{};
    const auto held = geometry(x.shape(), w.shape());
    const ConvGeometry& g = *held;
    if (!b.empty()) check_bias(b.shape(), g.in_channels);
    const Tensor xc = to_compute(x);
    const Tensor wc = to_compute(w);
    const Tensor bc = to_compute(b);
    Tensor y(xc.dtype(), g.input_shape());  // zeros: the adjoint adds into it
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const std::int64_t x_image = g.out_channels * g.output_plane(), y_image = g.in_channels * g.input_plane();
      for_each_part(part_count(ctx.threads, g), g, [&](const ConvGeometry& part, std::int64_t first, std::int64_t) {
        T* yp = y.data<T>() + first * y_image;
        conv_backward<T>(part, nullptr, wc.data<T>(), xc.data<T>() + first * x_image, yp, nullptr, nullptr,
                         ctx.max_tensor_bytes);
        if (!bc.empty()) add_channel_bias(bc.data<T>(), part.batch, g.in_channels, g.input_plane(), yp);
      });
    });
    ctx.outputs[0] = as_dtype(y, x.dtype());
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {xc, wc});
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy_in = ctx.grad_outputs[0];
    if (dy_in.empty()) return;
    require_saved(kOp, ctx.saved.size(), 2);
    const Tensor& xc = ctx.saved[0];
    const Tensor& wc = ctx.saved[1];
    const auto held = geometry(xc.shape(), wc.shape());
    const ConvGeometry& g = *held;
    check_output_gradient(kOp, 0, dy_in, g.input_shape());
    const Tensor dy = to_compute(dy_in);
    auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    Tensor dx = wanted(0) ? Tensor::uninitialized(xc.dtype(), xc.shape()) : Tensor{};
    Tensor dw = wanted(1) ? Tensor(wc.dtype(), wc.shape()) : Tensor{};
    Tensor db = wanted(2) ? Tensor(xc.dtype(), {g.in_channels}) : Tensor{};
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dyp = dy.data<T>();
      const std::int64_t x_image = g.out_channels * g.output_plane(), y_image = g.in_channels * g.input_plane();
      // Part 0 adds into dW, the others into zeroed partial sums added after it in order.
      std::vector<Tensor> partial_dw;
      const std::int64_t parts = part_count(ctx.threads, g);
      for (std::int64_t k = 1; k < parts && !dw.empty(); ++k) partial_dw.emplace_back(wc.dtype(), wc.shape());
      for_each_part(parts, g, [&](const ConvGeometry& part, std::int64_t first, std::int64_t k) {
        if (!dx.empty())
          conv_forward<T>(part, dyp + first * y_image, wc.data<T>(), nullptr, dx.data<T>() + first * x_image,
                          ctx.max_tensor_bytes);
        if (!dw.empty())
          conv_backward<T>(part, dyp + first * y_image, wc.data<T>(), xc.data<T>() + first * x_image, nullptr,
                           k == 0 ? dw.data<T>() : partial_dw[static_cast<std::size_t>(k - 1)].data<T>(), nullptr,
                           ctx.max_tensor_bytes);
      });
      for (const Tensor& p : partial_dw) {
        const T* pp = p.data<T>();
        T* dwp = dw.data<T>();
        for (std::int64_t i = 0; i < dw.numel(); ++i) dwp[i] += pp[i];
      }
      if (!db.empty()) add_channel_sums(dyp, g.batch, g.in_channels, g.input_plane(), db.data<T>());
    });
    for (std::size_t k = 0; k < 3; ++k)
      if (wanted(k))
        accumulate_gradient(ctx.grad_inputs[k], k == 0 ? dx : k == 1 ? dw : db, ctx.scale_for(k));
  }

 private:
  // conv_transpose_geometry() of X's and W's shapes, resolved at the first
  // call with them (infer, forward or backward) and then shared.
  std::shared_ptr<const ConvGeometry> geometry(const Shape& x, const Shape& w) const {
    return geometries_.get({x, w}, [&] { return conv_transpose_geometry(attrs_, x, w); });
  }

  ConvAttributes attrs_;
  ShapeCache<std::pair<Shape, Shape>, ConvGeometry> geometries_;
};

}  // namespace

void register_conv_transpose(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX ConvTranspose-22";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"W", float_dtypes(), "C x M/group x k1..kn; X's dtype"},
              {"B", float_dtypes(), "optional [M] bias; X's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "N x M x O1..On"}};
  s.attributes = conv_transpose_attribute_specs();
  s.check_attributes = check_conv_transpose_attributes;
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<ConvTransposeNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

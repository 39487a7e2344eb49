// ConvTranspose (ONNX ConvTranspose-22), any number of spatial axes >= 1,
// with groups, dilations, strides, pads, output_padding, output_shape and
// auto_pad. It is the adjoint of the Conv that conv_transpose_geometry
// describes (input Y's shape, output X's, weight W), so it runs Conv's
// kernels with the roles exchanged (docs/operators.md, "Gradient conventions"):
//   Y  = Conv's input gradient for the output gradient X (W^T X, col2im);
//   dX = Conv's forward of dY (im2col, product);
//   dW = Conv's weight gradient with input dY and output gradient X.
// Conv's kernels split the images over the executor's threads.
#include <memory>
#include <utility>
#include <vector>

#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/conv/conv_kernels.hpp"
#include "nodes/conv/conv_node.hpp"
#include "nodes/conv/conv_ops.hpp"

namespace nodeflow {
namespace {

class ConvTransposeNode final : public ConvNodeBase {
 public:
  explicit ConvTransposeNode(NodeConfig c) : ConvNodeBase(std::move(c), true) {}

 private:
  void compute_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                       const ForwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* yp = y.data<T>();
      conv_backward<T>(g, nullptr, w.data<T>(), x.data<T>(), yp, nullptr, nullptr, ctx.max_tensor_bytes,
                       ctx.threads);
      if (!b.empty()) add_channel_bias(b.data<T>(), g.batch, g.in_channels, g.input_plane(), yp);
    });
  }

  void compute_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                        Tensor& dw, Tensor& db, const BackwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dyp = dy.data<T>();
      if (!dx.empty())
        conv_forward<T>(g, dyp, w.data<T>(), nullptr, dx.data<T>(), ctx.max_tensor_bytes, ctx.threads);
      if (!dw.empty())
        conv_backward<T>(g, dyp, w.data<T>(), x.data<T>(), nullptr, dw.data<T>(), nullptr, ctx.max_tensor_bytes,
                         ctx.threads);
      if (!db.empty()) add_channel_sums(dyp, g.batch, g.in_channels, g.input_plane(), db.data<T>());
    });
  }
};

}  // namespace

void register_conv_transpose(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "ConvTranspose";
  s.definition = "ONNX ConvTranspose-22";
  s.doc = "Transposed convolution of X with W (+ B): strides, pads, dilations, group, output_padding/output_shape";
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

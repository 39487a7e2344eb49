// Conv (ONNX Conv-22), any number of spatial axes >= 1, with groups,
// dilations, strides, pads and auto_pad. Forward and backward are the kernels
// of conv_kernels.hpp, on the executor's threads.
#include <memory>
#include <utility>

#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/conv/conv_kernels.hpp"
#include "nodes/conv/conv_node.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

class ConvNode final : public ConvNodeBase {
 public:
  explicit ConvNode(NodeConfig c) : ConvNodeBase(std::move(c), false) {}

 private:
  void compute_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                       const ForwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      conv_forward<T>(g, x.data<T>(), w.data<T>(), b.empty() ? nullptr : b.data<T>(), y.data<T>(),
                      ctx.max_tensor_bytes, ctx.threads);
    });
  }

  void compute_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                        Tensor& dw, Tensor& db, const BackwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      auto ptr = [](Tensor& t) { return t.empty() ? nullptr : t.data<T>(); };
      conv_backward<T>(g, x.data<T>(), w.data<T>(), dy.data<T>(), ptr(dx), ptr(dw), ptr(db),
                       ctx.max_tensor_bytes, ctx.threads);
    });
  }
};

}  // namespace

void register_conv(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Conv";
  s.definition = "ONNX Conv-22";
  s.doc = "N-D convolution of X with W (+ B): strides, pads, dilations, group, auto_pad";
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

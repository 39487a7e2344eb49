// AveragePool (ONNX AveragePool-22) and GlobalAveragePool (ONNX
// GlobalAveragePool-22, the same node with one window over all spatial axes).
// Training keeps no state: backward needs only the input's shape.
#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/pool_node.hpp"
#include "nodes/pooling/pool_ops.hpp"

namespace nodeflow {
namespace {

class AveragePoolNode final : public PoolNode {
 public:
  using PoolNode::PoolNode;

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const auto held = geometry(x);
    const PoolGeometry& g = *held;
    Tensor y = Tensor::uninitialized(x.dtype(), g.output_shape());  // the kernel writes it all
    const bool include_pad = attributes().count_include_pad;
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      fast::average_pool_forward<T>(g, include_pad, x.values<T>(), y.values<T>(), ctx.threads);
    });
    ctx.outputs[0] = y;
  }

  void backward(const BackwardContext& ctx) const override {
    if (!has_work(ctx)) return;
    const auto held = backward_geometry(ctx);
    const PoolGeometry& g = *held;
    const bool include_pad = attributes().count_include_pad;
    visit_float_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      fast::average_pool_backward<T>(g, include_pad, ctx.grad_outputs[0].values<T>(),
                                     ctx.scale_for(0), ctx.grad_inputs[0].values<T>(), ctx.threads);
    });
  }
};

void register_average_kind(OpRegistry& registry, PoolKind kind) {
  OpSchema s = pool_schema(kind);
  s.create = [kind](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<AveragePoolNode>(std::move(c), kind);
  };
  registry.add(std::move(s));
}

}  // namespace

void register_average_pool(OpRegistry& registry) {
  register_average_kind(registry, PoolKind::Average);
}

void register_global_average_pool(OpRegistry& registry) {
  register_average_kind(registry, PoolKind::GlobalAverage);
}

}  // namespace nodeflow

// LpPool (ONNX LpPool-22): (sum |x|^p)^(1/p) over each window's input
// elements, and GlobalLpPool (ONNX GlobalLpPool-22, the same node with one
// window over all spatial axes). Training saves x and y (handles, no copies)
// for the backward.
#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/pool_node.hpp"
#include "nodes/pooling/pool_ops.hpp"

namespace nodeflow {
namespace {

class LpPoolNode final : public PoolNode {
 public:
  using PoolNode::PoolNode;

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const auto held = geometry(x);
    const PoolGeometry& g = *held;
    Tensor y = Tensor::uninitialized(x.dtype(), g.output_shape());  // the kernel writes it all
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      fast::lp_pool_forward<T>(g, attributes().p, x.values<T>(), y.values<T>(), ctx.threads);
    });
    ctx.outputs[0] = y;
    if (ctx.saved) {
      ctx.saved->push_back(x);
      ctx.saved->push_back(y);
    }
  }

  void backward(const BackwardContext& ctx) const override {
    if (!has_work(ctx)) return;
    const auto held = backward_geometry(ctx);
    const PoolGeometry& g = *held;
    if (ctx.saved.size() != 2)
      throw RunError(std::string(pool_op_type(attributes().kind)) +
                     " backward needs x and y saved by a training-mode forward");
    visit_float_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      fast::lp_pool_backward<T>(g, attributes().p, ctx.saved[0].values<T>(),
                                ctx.saved[1].values<T>(), ctx.grad_outputs[0].values<T>(),
                                ctx.scale_for(0), ctx.grad_inputs[0].values<T>(), ctx.threads);
    });
  }
};

void register_lp_kind(OpRegistry& registry, PoolKind kind) {
  OpSchema s = pool_schema(kind);
  s.create = [kind](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<LpPoolNode>(std::move(c), kind);
  };
  registry.add(std::move(s));
}

}  // namespace

void register_lp_pool(OpRegistry& registry) { register_lp_kind(registry, PoolKind::Lp); }

void register_global_lp_pool(OpRegistry& registry) {
  register_lp_kind(registry, PoolKind::GlobalLp);
}

}  // namespace nodeflow

// MaxPool (ONNX MaxPool-22, outputs Y and optional Indices) and GlobalMaxPool
// (ONNX GlobalMaxPool-22, the same node with one window over all spatial
// axes). Training saves only the argmax, one per output and no copy of the
// input: int32 offsets within each N,C input plane (half the memory traffic
// of int64), or the int64 flat input indices when Indices is computed anyway
// or a plane has 2^31 elements or more.
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"
#include "nodes/pooling/pool_node.hpp"
#include "nodes/pooling/pool_ops.hpp"

namespace nodeflow {
namespace {

class MaxPoolNode final : public PoolNode {
 public:
  using PoolNode::PoolNode;

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const auto held = geometry(x);
    const PoolGeometry& g = *held;
    const bool want_indices = ctx.outputs.size() >= 2;
    // Integer dtypes have no backward, so they keep no state.
    const bool save = ctx.saved != nullptr && is_float(x.dtype());
    // The kernels write every element: no zero fill.
    Tensor y = Tensor::uninitialized(x.dtype(), g.output_shape());
    const bool offsets = save && !want_indices &&
                         g.input_plane() <= std::numeric_limits<std::int32_t>::max();
    // Up to four times Y's bytes (int64 beside float16): not bounded by the
    // outputs, so checked against the run's cap like one.
    const DType argmax_dtype = offsets ? DType::Int32 : DType::Int64;
    if (want_indices || save)
      check_tensor_bytes(save ? "argmax saved for backward" : "argmax buffer", g.output_shape(),
                         argmax_dtype, ctx.max_tensor_bytes);
    Tensor argmax = want_indices || save ? Tensor::uninitialized(argmax_dtype, g.output_shape())
                                         : Tensor();
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!is_index_type_v<T>) {
        const auto run = [&](auto winners) {
          fast::max_pool_forward<T>(g, x.values<T>(), y.values<T>(), winners, ctx.threads);
        };
        if (offsets)
          run(argmax.values<std::int32_t>());
        else
          run(argmax.empty() ? std::span<std::int64_t>() : argmax.values<std::int64_t>());
      }
    });
    ctx.outputs[0] = y;
    if (want_indices) {
      Tensor indices = Tensor::uninitialized(DType::Int64, g.output_shape());
      max_pool_indices(g, attributes().storage_order, argmax.values<std::int64_t>(),
                       indices.values<std::int64_t>());
      ctx.outputs[1] = indices;
    }
    if (save) ctx.saved->push_back(argmax);
  }

  void backward(const BackwardContext& ctx) const override {
    if (!has_work(ctx)) return;
    const auto held = backward_geometry(ctx);
    const PoolGeometry& g = *held;
    const Tensor* saved = ctx.saved.size() == 1 ? &ctx.saved[0] : nullptr;
    if (saved == nullptr ||
        (saved->dtype() != DType::Int64 && saved->dtype() != DType::Int32) ||
        saved->shape() != g.output_shape())
      throw RunError(std::string(pool_op_type(attributes().kind)) +
                     " backward needs the argmax saved by a training-mode forward");
    visit_float_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto run = [&](auto winners) {
        fast::max_pool_backward<T>(g, winners, ctx.grad_outputs[0].values<T>(), ctx.scale_for(0),
                                   ctx.grad_inputs[0].values<T>(), ctx.threads);
      };
      if (saved->dtype() == DType::Int32)
        run(saved->values<std::int32_t>());
      else
        run(saved->values<std::int64_t>());
    });
  }
};

OpSchema max_schema(PoolKind kind) {
  OpSchema s = pool_schema(kind);
  if (kind == PoolKind::Max)
    s.outputs.push_back({"Indices", {DType::Int64},
                         "Y's shape: flat index of each maximum in X (storage_order)"});
  s.create = [kind](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<MaxPoolNode>(std::move(c), kind);
  };
  return s;
}

}  // namespace

void register_max_pool(OpRegistry& registry) {
  registry.add(max_schema(PoolKind::Max));
}

void register_global_max_pool(OpRegistry& registry) {
  registry.add(max_schema(PoolKind::GlobalMax));
}

}  // namespace nodeflow

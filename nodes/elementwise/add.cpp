// The linear broadcasting ops: Add-14, Sub-14 (every numeric dtype, integers
// wrapping around), Sum-13 and Mean-13 (float dtypes, 1 to n inputs). Each
// input's gradient is the output's, times 1, -1 or 1/n, summed over the axes
// that input was broadcast along.
#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

struct AddOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x + y; }
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(x, y);
    else
      return x + y;
  }
};

struct SubOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x - y; }
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return wrap_sub(x, y);
    else
      return x - y;
  }
};

// d/dx_k of the output is a constant: 1, -1 for Sub's B, 1/n for Mean.
template <bool kSub, bool kMean> void linear_backward(const GradientArgs& args) {
  const BackwardContext& ctx = args.ctx;
  const std::size_t n = ctx.inputs.size();
  for (std::size_t k = 0; k < n; ++k) {
    double factor = kSub && k == 1 ? -1.0 : 1.0;
    if (kMean) factor /= static_cast<double>(n);
    accumulate_broadcast_gradient(ctx.grad_inputs[k], args.dy, ctx.scale_for(k) * factor, ctx.threads);
  }
}

}  // namespace
}  // namespace elementwise

void register_add(OpRegistry& registry) {
  auto op = elementwise::binary_op("Add", 14, "Elementwise A + B with numpy broadcasting",
                                   "A + B, the broadcast shape; integers wrap around", graph_dtypes());
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, false>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_sub(OpRegistry& registry) {
  auto op = elementwise::binary_op("Sub", 14, "Elementwise A - B with numpy broadcasting",
                                   "A - B, the broadcast shape; integers wrap around", graph_dtypes());
  op.apply = elementwise::apply_any<elementwise::SubOp>;
  op.backward = elementwise::linear_backward<true, false>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_sum(OpRegistry& registry) {
  auto op = elementwise::variadic_op("Sum", "Elementwise sum of 1 or more inputs with numpy broadcasting", "sum",
                                     "the sum of the inputs, the broadcast shape", float_dtypes());
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, false>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_mean(OpRegistry& registry) {
  auto op = elementwise::variadic_op("Mean", "Elementwise mean of 1 or more inputs with numpy broadcasting", "mean",
                                     "the mean of the inputs, the broadcast shape", float_dtypes());
  op.mean = true;
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, true>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow

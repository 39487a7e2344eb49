// PRelu-16: Y = X where X >= 0, slope * X where X < 0, with slope broadcast
// unidirectionally to X's shape; float dtypes and int64 (wrapping around).
// At X = 0 the gradient is the X <= 0 branch's (docs/operators.md, "Gradient
// conventions"): dX = slope * dY there, and a trainable slope gets dY * X
// summed over the elements it was broadcast to.
#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

struct PReluOp {
  static constexpr bool kArray = true;
  template <typename X, typename S> static auto array(const X& x, const S& s) {
    using T = typename X::Scalar;
    return (x < T(0)).select(x * s, x);
  }
  template <typename T> static T scalar(T x, T s) {
    if constexpr (std::is_integral_v<T>)
      return x < 0 ? wrap_mul(x, s) : x;
    else
      return x < 0 ? x * s : x;
  }
};

void prelu_backward(const GradientArgs& args) {
  visit_compute_dtype(args.dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = args.dy.data<T>();
    add_input_gradient<T, 2>(args, 0, {&args.x[0], &args.x[1]},
                             [&](std::int64_t i, const std::array<T, 2>& v) { return v[0] > 0 ? g[i] : g[i] * v[1]; });
    add_input_gradient<T, 1>(args, 1, {&args.x[0]},
                             [&](std::int64_t i, const std::array<T, 1>& v) { return v[0] > 0 ? T(0) : g[i] * v[0]; });
  });
}

}  // namespace
}  // namespace elementwise

void register_prelu(OpRegistry& registry) {
  auto op = elementwise::binary_op("PRelu", 16, "X if X >= 0, else slope * X; slope broadcasts to X",
                                   "X's shape and dtype", elementwise::float_and_int64_dtypes(),
                                   {"X", "slope"}, "Y");
  op.unidirectional = true;
  op.saves = true;
  op.apply = elementwise::apply_any<elementwise::PReluOp>;
  op.backward = elementwise::prelu_backward;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow

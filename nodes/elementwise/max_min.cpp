// Max-13 and Min-13: the elementwise extreme of 1 to n broadcast inputs, every
// numeric dtype; a NaN input gives NaN (as numpy.maximum). The gradient goes
// to the inputs that hold the extreme, split equally among tied ones
// (docs/operators.md, "Gradient conventions"), then is summed back to each
// input's shape.
#include <cmath>

#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

template <bool kMax> struct ExtremeOp {
  static constexpr bool kArray = false;
  template <typename T> static T scalar(T x, T y) {
    bool first = kMax ? x > y : x < y;
    if constexpr (std::is_floating_point_v<T>) first = first || std::isnan(x);  // a NaN y falls through to y
    return first ? x : y;
  }
};

void extreme_backward(const GradientArgs& args) {
  const Shape& out = args.dy.shape();
  visit_compute_dtype(args.dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = args.dy.data<T>();
    const T* y = args.y.data<T>();
    // How many inputs hold the extreme at each output element.
    Tensor count(dtype_of_v<T>, out);
    T* c = count.data<T>();
    for (const Tensor& x : args.x) {
      const BroadcastPlan plan = plan_broadcast(out, std::span<const Shape>(&x.shape(), 1));
      const T* xp = x.data<T>();
      const std::int64_t step = plan.step(0);
      parallel_runs<1>(plan, args.ctx.threads, [&](std::int64_t i, const std::array<std::int64_t, 1>& at, std::int64_t n) {
        for (std::int64_t j = 0; j < n; ++j) c[i + j] += xp[at[0] + j * step] == y[i + j] ? T(1) : T(0);
      });
    }
    for (std::size_t k = 0; k < args.x.size(); ++k)
      add_input_gradient<T, 1>(args, k, {&args.x[k]},
                               [&](std::int64_t i, const std::array<T, 1>& v) {
                                 return v[0] == y[i] ? g[i] / c[i] : T(0);
                               });
  });
}

BroadcastOp extreme(const std::string& op_type, const std::string& op_doc, const std::string& output_name,
                    const std::string& doc) {
  auto op = variadic_op(op_type, op_doc, output_name, doc, graph_dtypes());
  op.saves = true;
  op.backward = extreme_backward;
  return op;
}

}  // namespace
}  // namespace elementwise

void register_max(OpRegistry& registry) {
  auto op = elementwise::extreme("Max", "Elementwise maximum of 1 or more inputs with numpy broadcasting", "max",
                                  "the elementwise maximum of the inputs, the broadcast shape");
  op.apply = elementwise::apply_any<elementwise::ExtremeOp<true>>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_min(OpRegistry& registry) {
  auto op = elementwise::extreme("Min", "Elementwise minimum of 1 or more inputs with numpy broadcasting", "min",
                                  "the elementwise minimum of the inputs, the broadcast shape");
  op.apply = elementwise::apply_any<elementwise::ExtremeOp<false>>;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow

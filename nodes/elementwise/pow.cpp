// Pow-15 with broadcasting: X float or int64, Y any numeric dtype, converted
// to X's (for an int64 X a float Y is truncated toward zero; one outside the
// int64 range is refused). Float powers are std::pow's (IEEE results:
// Pow(0, y < 0) is inf). Integer powers wrap around; a negative exponent gives
// the truncated 1 / x^-y (1, -1 or 0), and 0 to a negative power is a RunError.
// Gradients for both X and a float Y (docs/operators.md, "Gradient conventions").
#include <cmath>

#include "core/errors.hpp"
#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

struct PowOp {
  static constexpr bool kArray = false;  // std::pow's results, not Eigen's vectorised approximation
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(x, y);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y < 0) {
          if (x == 0) throw RunError("Pow: 0 to a negative integer power has no integer result");
          if (x == T(-1)) return y % 2 == 0 ? T(1) : T(-1);
          return x == 1 ? T(1) : T(0);
        }
      }
      T result = 1;
      for (T base = x; y > 0; y /= 2) {
        if (y % 2 != 0) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  }
};

// dX = dZ * Y * X^(Y-1), 0 where Y = 0; dY = dZ * Z * log(X), 0 where Z = 0 (PyTorch's rules).
void pow_backward(const GradientArgs& args) {
  visit_compute_dtype(args.dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = args.dy.data<T>();
    const T* z = args.y.data<T>();
    add_input_gradient<T, 2>(args, 0, {&args.x[0], &args.x[1]},
                             [&](std::int64_t i, const std::array<T, 2>& v) {
                               return v[1] == 0 ? T(0) : g[i] * v[1] * std::pow(v[0], v[1] - 1);
                             });
    add_input_gradient<T, 1>(args, 1, {&args.x[0]},
                             [&](std::int64_t i, const std::array<T, 1>& v) {
                               return z[i] == 0 ? T(0) : g[i] * z[i] * std::log(v[0]);
                             });
  });
}

}  // namespace
}  // namespace elementwise

void register_pow(OpRegistry& registry) {
  auto op = elementwise::binary_op("Pow", 15, "Elementwise X ^ Y with numpy broadcasting",
                                   "X ^ Y, the broadcast shape, X's dtype",
                                   elementwise::float_and_int64_dtypes(), {"X", "Y"}, "Z");
  op.exponent_dtypes = graph_dtypes();
  op.saves = true;
  op.apply = elementwise::apply_any<elementwise::PowOp>;
  op.backward = elementwise::pow_backward;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow

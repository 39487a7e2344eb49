// Mul-14 and Div-14 with broadcasting, every numeric dtype. Integers wrap
// around; integer Div truncates toward zero, and a zero divisor is refused
// at run time (RunError) since it has no integer result. Float division by
// zero gives IEEE inf/nan (docs/operators.md, "Gradient conventions").
#include <algorithm>
#include <span>

#include "core/errors.hpp"
#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"
#include "nodes/elementwise/gradient_lanes.hpp"
#include "nodes/reduction/reduce_lines.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

struct MulOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x * y; }
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(x, y);
    else
      return x * y;
  }
};

struct DivOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x / y; }
  // Integer divisors were checked for zero (div_apply); the one quotient
  // that overflows, lowest / -1, wraps around to lowest.
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      if (std::is_signed_v<T> && y == T(-1)) return wrap_sub(T(0), x);
      return static_cast<T>(x / y);
    } else {
      return x / y;
    }
  }
};

void div_apply(const Tensor& a, const Tensor& b, Tensor& c, int threads) {
  visit_kernel_dtype(b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const auto values = b.values<T>();
      if (std::find(values.begin(), values.end(), T(0)) != values.end())
        throw RunError("Div: integer division by zero (input 1 (B) holds a 0)");
    }
  });
  apply_any<DivOp>(a, b, c, threads);
}

// d = value where the gradient buffer is overwritten, else d += value.
template <typename D, typename V> void write_gradient(bool assign, D&& d, const V& value) {
  if (assign)
    d = value;
  else
    d += value;
}

// dA += sA * dC * B and dB += sB * dC * A in one pass over dC, A and B when
// all five have one shape and dtype: 7 arrays moved instead of 8 (5 where
// both gradients are overwritten: = instead of +=), at the CPU's vector
// width (gradient_lanes::write_products). The same products as
// add_gradient's, so the same bits.
template <typename T> bool mul_backward_same_shape(const GradientArgs& args) {
  const Tensor& g = args.dy;
  const BackwardContext& ctx = args.ctx;
  for (std::size_t k = 0; k < 2; ++k) {
    const Tensor& d = ctx.grad_inputs[k];
    if (d.empty() || d.dtype() != g.dtype() || d.shape() != g.shape() || args.x[k].shape() != g.shape() ||
        args.x[k].dtype() != g.dtype())
      return false;
  }
  const T* gp = g.data<T>();
  // Input k's gradient is dC times the other input.
  const auto product = [&](std::size_t k) {
    return gradient_lanes::Product<T>{ctx.grad_inputs[k].data<T>(), static_cast<T>(ctx.scale_for(k)),
                                      args.x[1 - k].data<T>(), ctx.overwrites(k)};
  };
  const gradient_lanes::Product<T> pa = product(0), pb = product(1);
  constexpr std::int64_t kBlock = 4096;
  parallel_ranges(g.numel() < kParallelElements ? 1 : ctx.threads, g.numel(), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; i += kBlock) {
      const auto at = [i](gradient_lanes::Product<T> p) {
        p.d += i;
        p.x += i;
        return p;
      };
      gradient_lanes::write_products(at(pa), at(pb), gp + i, std::min(kBlock, hi - i));
    }
  });
  return true;
}

// One input of dC's shape and dtype (a feature map) and one broadcast to it
// (a per-channel scale [C, 1, 1]), both gradients wanted: one pass over dC,
// run by run, instead of one per input. The broadcast input's products are
// summed with reduce_lines::dot's order (scale_and_dot, which writes the
// feature map's gradient from the same loads of the run, at the CPU's vector
// width: Eigen's baseline packets here are SSE2), add_gradient's products in
// its order, and in reduce_into's parts: the same bits as the two passes.
template <typename T> bool mul_backward_broadcast(const GradientArgs& args) {
  const Tensor& g = args.dy;
  const BackwardContext& ctx = args.ctx;
  const std::size_t full = args.x[0].shape() == g.shape() ? 0 : 1, part = 1 - full;
  const Tensor &x = args.x[full], &b = args.x[part];
  Tensor &dx = ctx.grad_inputs[full], &db = ctx.grad_inputs[part];
  if (g.dtype() != dtype_of_v<T> || x.shape() != g.shape() || x.dtype() != g.dtype() || b.dtype() != g.dtype() ||
      b.shape() == g.shape() || dx.empty() || dx.dtype() != g.dtype() || dx.shape() != g.shape() || db.empty())
    return false;
  const Shape shape = b.shape();
  const BroadcastPlan plan = plan_broadcast(g.shape(), std::span<const Shape>(&shape, 1));
  if (!fuse_broadcast_sum(plan, db.numel(), ctx.threads)) return false;
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  using In = Eigen::Map<const Array>;
  const bool along = plan.step(0) != 0;
  const T *gp = g.data<T>(), *xp = x.data<T>(), *bp = b.data<T>();
  T* dxp = dx.data<T>();
  const auto sx = static_cast<T>(ctx.scale_for(full));
  const bool assign = ctx.overwrites(full);
  const Tensor sum = reduce_into<T>(shape, plan.total, ctx.threads, [&](std::int64_t begin, std::int64_t end, T* acc) {
    for_each_run<1>(plan, begin, end, [&](std::int64_t i, const std::array<std::int64_t, 1>& at, std::int64_t n) {
      if (along) {
        const In gi(gp + i, n);
        write_gradient(assign, Eigen::Map<Array>(dxp + i, n), sx * (gi * In(bp + at[0], n)));
        Eigen::Map<Array>(acc + at[0], n) += gi * In(xp + i, n);
      } else {
        acc[at[0]] += reduce_lines::scale_and_dot(dxp + i, assign, sx, bp[at[0]], gp + i, xp + i, n);
      }
    });
  });
  ctx.zero_if_overwritten(part);
  accumulate_gradient(db, sum, ctx.scale_for(part));
  return true;
}

void mul_backward(const GradientArgs& args) {
  visit_compute_dtype(args.dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (mul_backward_same_shape<T>(args) || mul_backward_broadcast<T>(args)) return;
    const T* g = args.dy.data<T>();
    for (std::size_t k = 0; k < 2; ++k) args.ctx.zero_if_overwritten(k);
    for (std::size_t k = 0; k < 2; ++k)
      add_input_gradient<T, 1>(args, k, {&args.x[1 - k]},
                               [&](std::int64_t i, const std::array<T, 1>& v) { return g[i] * v[0]; });
  });
}

// dA = dC / B, dB = -dC * A / B^2 (PyTorch's form, not -dC * C / B).
void div_backward(const GradientArgs& args) {
  visit_compute_dtype(args.dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = args.dy.data<T>();
    add_input_gradient<T, 1>(args, 0, {&args.x[1]},
                             [&](std::int64_t i, const std::array<T, 1>& v) { return g[i] / v[0]; });
    add_input_gradient<T, 2>(args, 1, {&args.x[0], &args.x[1]},
                             [&](std::int64_t i, const std::array<T, 2>& v) { return -g[i] * v[0] / (v[1] * v[1]); });
  });
}

}  // namespace
}  // namespace elementwise

void register_mul(OpRegistry& registry) {
  auto op = elementwise::binary_op("Mul", 14, "Elementwise A * B with numpy broadcasting",
                                   "A * B, the broadcast shape; integers wrap around", graph_dtypes());
  op.saves = true;
  op.apply = elementwise::apply_any<elementwise::MulOp>;
  op.backward = elementwise::mul_backward;
  op.overwrites = true;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_div(OpRegistry& registry) {
  auto op = elementwise::binary_op(
      "Div", 14, "Elementwise A / B with numpy broadcasting",
      "A / B, the broadcast shape; integers truncate, an integer 0 divisor is a RunError",
      graph_dtypes());
  op.saves = true;
  op.apply = elementwise::div_apply;
  op.backward = elementwise::div_backward;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow

#pragma once
// The kernels of the broadcasting elementwise ops (Add ... Mean, PRelu) over
// the one traversal of nodes/common/broadcast.hpp: a forward that hands each
// run to an Eigen array expression (float types) or a scalar loop (integer
// types, with wrap-around arithmetic defined without undefined behaviour),
// and the accumulation of a local gradient summed back to an input's shape.
//
// Instantiated for float, double (float16 and bfloat16 are computed in
// float32), int8, uint8 and int64, from the ops' own translation units.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/tensor.hpp"
#include "nodes/common/broadcast.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/reduction/reduce_lines.hpp"

namespace nodeflow::elementwise {

/// Integer arithmetic modulo 2^bits (two's complement), as ONNX runtimes give
/// it: done in the unsigned type, where overflow is defined.
template <typename T> T wrap_add(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename T> T wrap_sub(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
}
template <typename T> T wrap_mul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  // uint8 * uint8 promotes to int, where 255 * 255 fits.
  return static_cast<T>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
}

/// c = Op(a, b) with a, b broadcast to c's shape; all three of type T, c
/// allocated by the caller (it may be a itself when a has c's shape). Op has
/// `static T scalar(T, T)` and, for float types, `array(x, y)` over Eigen
/// array expressions of one length.
template <typename T, typename Op>
void broadcast_apply(const Tensor& a, const Tensor& b, Tensor& c, int threads) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  using Map = Eigen::Map<const Array>;
  const Shape shapes[] = {a.shape(), b.shape()};
  const BroadcastPlan plan = plan_broadcast(c.shape(), shapes);
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* cp = c.data<T>();
  const bool step_a = plan.step(0) != 0, step_b = plan.step(1) != 0;
  parallel_runs<2>(plan, threads, [&](std::int64_t i, const std::array<std::int64_t, 2>& at, std::int64_t n) {
    const T* x = ap + at[0];
    const T* y = bp + at[1];
    T* z = cp + i;
    if constexpr (std::is_floating_point_v<T> && Op::kArray) {
      Eigen::Map<Array> out(z, n);
      if (step_a && step_b)
        out = Op::array(Map(x, n), Map(y, n));
      else if (step_a)
        out = Op::array(Map(x, n), Array::Constant(n, *y));
      else if (step_b)
        out = Op::array(Array::Constant(n, *x), Map(y, n));
      else
        out.setConstant(Op::scalar(*x, *y));
    } else if (step_a && step_b) {
      for (std::int64_t j = 0; j < n; ++j) z[j] = Op::scalar(x[j], y[j]);
    } else if (step_a) {
      const T v = *y;
      for (std::int64_t j = 0; j < n; ++j) z[j] = Op::scalar(x[j], v);
    } else if (step_b) {
      const T v = *x;
      for (std::int64_t j = 0; j < n; ++j) z[j] = Op::scalar(v, y[j]);
    } else {
      std::fill(z, z + n, Op::scalar(*x, *y));
    }
  });
}

/// Calls body(std::integral_constant<unsigned, mask>{}): a kernel whose
/// operands' steps inside a run (bit k: operand k moves) are compile-time
/// constants, so that the compiler vectorises its loops.
template <std::size_t N, typename Body> void with_step_mask(unsigned mask, Body&& body) {
  [&]<unsigned... M>(std::integer_sequence<unsigned, M...>) {
    static_cast<void>(((mask == M ? (body(std::integral_constant<unsigned, M>{}), true) : false) || ...));
  }(std::make_integer_sequence<unsigned, (1u << N)>{});
}

/// dst += scale * (the local gradient f summed back to dst's shape), where
/// f(i, v) is the gradient at output element i of an output of shape `out`,
/// v holding the operands' elements read there (operands broadcast to `out`,
/// in the compute type T). A dst of out's shape is written on every thread,
/// straight into it when it has dtype T; a broadcast dst gets the sums
/// without an out-sized buffer (reduce_into).
template <typename T, std::size_t N, typename F>
void add_gradient(Tensor& dst, const Shape& out, const std::array<const Tensor*, N>& operands, double scale,
                  int threads, F&& f) {
  if (dst.empty()) return;
  // The last operand of the plan is dst itself, for its offsets.
  std::array<Shape, N + 1> shapes;
  std::array<const T*, N> data;
  for (std::size_t k = 0; k < N; ++k) {
    shapes[k] = operands[k]->shape();
    data[k] = operands[k]->template data<T>();
  }
  shapes[N] = dst.shape();
  const BroadcastPlan plan = plan_broadcast(out, shapes);
  unsigned mask = 0;
  for (std::size_t k = 0; k < N; ++k) mask |= plan.step(k) != 0 ? 1u << k : 0u;
  using At = std::array<std::int64_t, N + 1>;
  with_step_mask<N>(mask, [&](auto mask_c) {
    constexpr unsigned kMask = decltype(mask_c)::value;
    // add(j, value) for elements j in [first, last) of the run at output element i.
    auto run = [&](std::int64_t i, const At& at, std::int64_t first, std::int64_t last, auto&& add) {
      std::array<const T*, N> p;
      for (std::size_t k = 0; k < N; ++k) p[k] = data[k] + at[k];
      for (std::int64_t j = first; j < last; ++j) {
        std::array<T, N> v;
        for (std::size_t k = 0; k < N; ++k) v[k] = (kMask >> k & 1u) != 0 ? p[k][j] : p[k][0];
        add(j, f(i + j, v));
      }
    };
    if (dst.shape() == out) {
      const bool direct = dst.dtype() == dtype_of_v<T>;
      Tensor local = direct ? dst : Tensor::uninitialized(dtype_of_v<T>, out);
      T* lp = local.data<T>();
      const auto k_scale = static_cast<T>(direct ? scale : 1.0);
      parallel_runs<N + 1>(plan, threads, [&](std::int64_t i, const At& at, std::int64_t n) {
        T* d = lp + i;
        if (direct)
          run(i, at, 0, n, [&](std::int64_t j, T value) { d[j] += k_scale * value; });
        else
          run(i, at, 0, n, [&](std::int64_t j, T value) { d[j] = value; });
      });
      if (!direct) accumulate_gradient(dst, local, scale);
      return;
    }
    const Tensor sum = reduce_into<T>(dst.shape(), plan.total, threads, [&](std::int64_t begin, std::int64_t end, T* acc) {
      for_each_run<N + 1>(plan, begin, end, [&](std::int64_t i, const At& at, std::int64_t n) {
        T* d = acc + at[N];
        if (plan.step(N) != 0) {
          run(i, at, 0, n, [&](std::int64_t j, T value) { d[j] += value; });
          return;
        }
        // A sum along the run, its values made a block at a time: the order
        // of reduce_lines::sum over the whole run, so the bits of a node
        // that sums its products in one pass (Mul, reduce_lines::dot).
        constexpr std::int64_t kBlock = reduce_lines::kSumBlock;
        std::array<T, kBlock> block;
        T total = 0;
        for (std::int64_t first = 0; first < n; first += kBlock) {
          const std::int64_t last = std::min(n, first + kBlock);
          run(i, at, first, last, [&](std::int64_t j, T value) { block[static_cast<std::size_t>(j - first)] = value; });
          total += reduce_lines::sum(block.data(), last - first);
        }
        *d += total;
      });
    });
    accumulate_gradient(dst, sum, scale);
  });
}

}  // namespace nodeflow::elementwise

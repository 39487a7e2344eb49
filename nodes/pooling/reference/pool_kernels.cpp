#include "nodes/pooling/reference/pool_kernels.hpp"

#include <cmath>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "nodes/pooling/pool_math.hpp"
#include "nodes/pooling/pool_window.hpp"

namespace nodeflow {
namespace {

using pool_math::beats;
using pool_math::GradSum;

// Whether the gradient sums stay in the accumulator's range (else the
// kernels sum in GradSum's float64 form).
template <typename T>
bool gradient_fits(const PoolGeometry& g, std::span<const T> dy, double scale) {
  return pool_math::gradient_fits(dy, most_windows_per_input(g), scale);
}

template <typename T, bool kWide>
void average_backward_sums(const PoolGeometry& g, bool count_include_pad, std::span<const T> dy,
                           double scale, std::span<T> dx) {
  using S = typename GradSum<T, kWide>::S;
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  GradSum<T, kWide> sum(dx.size(), most_windows_per_input(g), scale);
  for_each_window(g, [&](const PoolWindow& w) {
    const auto divisor = static_cast<S>(
        count_include_pad ? w.padded_count : static_cast<std::int64_t>(w.inputs.size()));
    for (std::int64_t plane = 0; plane < g.planes(); ++plane) {
      const S share =
          static_cast<S>(dy[static_cast<std::size_t>(plane * out_plane + w.output)]) / divisor;
      for (std::int64_t i : w.inputs) sum.add(plane * in_plane + i, share);
    }
  });
  sum.add_into(dx, scale);
}

template <typename T, bool kWide>
void lp_backward_sums(const PoolGeometry& g, std::int64_t p, std::span<const T> x,
                      std::span<const T> y, std::span<const T> dy, double scale,
                      std::span<T> dx) {
  using A = accumulator_t<T>;
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  GradSum<T, kWide> sum(dx.size(), most_windows_per_input(g), scale);
  for_each_window(g, [&](const PoolWindow& w) {
    for (std::int64_t plane = 0; plane < g.planes(); ++plane) {
      const auto o = static_cast<std::size_t>(plane * out_plane + w.output);
      const T* xp = x.data() + plane * in_plane;
      const pool_math::LpWindowGradient<T> grad(y[o], xp, w.inputs, p);
      const auto g_out = static_cast<A>(dy[o]);
      for (std::int64_t i : w.inputs) {
        const auto xi = static_cast<A>(xp[i]);
        if (grad.zero(xi)) continue;
        sum.add(plane * in_plane + i, grad.term(xi, g_out));
      }
    }
  });
  sum.add_into(dx, scale);
}

}  // namespace

template <typename T>
void average_pool_forward(const PoolGeometry& g, bool count_include_pad, std::span<const T> x,
                          std::span<T> y) {
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  for_each_window(g, [&](const PoolWindow& w) {
    const std::int64_t divisor =
        count_include_pad ? w.padded_count : static_cast<std::int64_t>(w.inputs.size());
    for (std::int64_t plane = 0; plane < g.planes(); ++plane)
      y[static_cast<std::size_t>(plane * out_plane + w.output)] =
          pool_math::window_average(x.data() + plane * in_plane, w.inputs, divisor);
  });
}

template <typename T>
void average_pool_backward(const PoolGeometry& g, bool count_include_pad, std::span<const T> dy,
                           double scale, std::span<T> dx) {
  // A share dy / divisor is at most |dy|.
  if (gradient_fits(g, dy, scale))
    average_backward_sums<T, false>(g, count_include_pad, dy, scale, dx);
  else
    average_backward_sums<T, true>(g, count_include_pad, dy, scale, dx);
}

template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int64_t> argmax) {
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  for_each_window(g, [&](const PoolWindow& w) {
    for (std::int64_t plane = 0; plane < g.planes(); ++plane) {
      const T* xp = x.data() + plane * in_plane;
      // Geometry validation guarantees every window holds an input element.
      std::int64_t best = w.inputs.front();
      for (std::int64_t i : w.inputs.subspan(1))
        if (beats(xp[i], xp[best])) best = i;
      const auto o = static_cast<std::size_t>(plane * out_plane + w.output);
      y[o] = xp[best];
      if (!argmax.empty()) argmax[o] = plane * in_plane + best;
    }
  });
}

void max_pool_indices(const PoolGeometry& g, StorageOrder order,
                      std::span<const std::int64_t> argmax, std::span<std::int64_t> indices) {
  const std::int64_t in_plane = g.input_plane();
  for (std::size_t o = 0; o < argmax.size(); ++o) {
    if (order == StorageOrder::RowMajor) {
      indices[o] = argmax[o];
      continue;
    }
    const std::int64_t plane = argmax[o] / in_plane;
    std::int64_t rest = argmax[o] % in_plane;
    // Peel row-major coordinates off the last axis; rebuild with D1 fastest.
    std::int64_t column_major = 0;
    std::int64_t stride = in_plane;
    for (std::size_t i = g.axes.size(); i-- > 0;) {
      const std::int64_t coord = rest % g.axes[i].in;
      rest /= g.axes[i].in;
      stride /= g.axes[i].in;
      column_major += coord * stride;
    }
    indices[o] = plane * in_plane + column_major;
  }
}

template <typename T>
void max_pool_backward(std::span<const std::int64_t> argmax, std::span<const T> dy, double scale,
                       std::span<T> dx) {
  using A = accumulator_t<T>;
  GradSum<T, false> sum(dx.size(), 1, scale);
  for (std::size_t o = 0; o < argmax.size(); ++o) sum.add(argmax[o], static_cast<A>(dy[o]));
  sum.add_into(dx, scale);
}

template <typename T>
void lp_pool_forward(const PoolGeometry& g, std::int64_t p, std::span<const T> x, std::span<T> y) {
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  for_each_window(g, [&](const PoolWindow& w) {
    for (std::int64_t plane = 0; plane < g.planes(); ++plane)
      y[static_cast<std::size_t>(plane * out_plane + w.output)] =
          pool_math::window_lp(x.data() + plane * in_plane, w.inputs, p);
  });
}

template <typename T>
void lp_pool_backward(const PoolGeometry& g, std::int64_t p, std::span<const T> x,
                      std::span<const T> y, std::span<const T> dy, double scale, std::span<T> dx) {
  // A term dy * sign(x) * (|x| / y)^(p-1) is at most |dy|.
  if (gradient_fits(g, dy, scale))
    lp_backward_sums<T, false>(g, p, x, y, dy, scale, dx);
  else
    lp_backward_sums<T, true>(g, p, x, y, dy, scale, dx);
}

template <typename T>
void max_unpool_forward(std::span<const T> x, std::span<const std::int64_t> indices,
                        std::span<T> y) {
  const auto size = static_cast<std::int64_t>(y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t at = indices[i];
    if (at < 0 || at >= size)
      throw RunError("input 1 (I): index " + std::to_string(at) + " at flat position " +
                     std::to_string(i) + " is outside the output of " + std::to_string(size) +
                     " elements");
    y[static_cast<std::size_t>(at)] = x[i];
  }
}

template <typename T>
void max_unpool_backward(std::span<const std::int64_t> indices, std::span<const T> dy, double scale,
                         std::span<T> dx) {
  using A = accumulator_t<T>;
  for (std::size_t i = 0; i < dx.size(); ++i)
    dx[i] = static_cast<T>(static_cast<A>(dx[i]) +
                           static_cast<A>(scale) *
                               static_cast<A>(dy[static_cast<std::size_t>(indices[i])]));
}

#define NODEFLOW_POOL_FLOAT_KERNELS(T)                                                             \
  template void average_pool_forward<T>(const PoolGeometry&, bool, std::span<const T>,             \
                                        std::span<T>);                                             \
  template void average_pool_backward<T>(const PoolGeometry&, bool, std::span<const T>, double,    \
                                         std::span<T>);                                            \
  template void max_pool_backward<T>(std::span<const std::int64_t>, std::span<const T>, double,    \
                                     std::span<T>);                                                \
  template void lp_pool_forward<T>(const PoolGeometry&, std::int64_t, std::span<const T>,          \
                                   std::span<T>);                                                  \
  template void lp_pool_backward<T>(const PoolGeometry&, std::int64_t, std::span<const T>,         \
                                    std::span<const T>, std::span<const T>, double, std::span<T>); \
  template void max_unpool_backward<T>(std::span<const std::int64_t>, std::span<const T>, double,  \
                                       std::span<T>);
#define NODEFLOW_POOL_ALL_KERNELS(T)                                                       \
  template void max_pool_forward<T>(const PoolGeometry&, std::span<const T>, std::span<T>, \
                                    std::span<std::int64_t>);                              \
  template void max_unpool_forward<T>(std::span<const T>, std::span<const std::int64_t>,   \
                                      std::span<T>);

NODEFLOW_POOL_FLOAT_KERNELS(float)
NODEFLOW_POOL_FLOAT_KERNELS(double)
NODEFLOW_POOL_FLOAT_KERNELS(half)
NODEFLOW_POOL_FLOAT_KERNELS(bfloat16)
NODEFLOW_POOL_ALL_KERNELS(float)
NODEFLOW_POOL_ALL_KERNELS(double)
NODEFLOW_POOL_ALL_KERNELS(half)
NODEFLOW_POOL_ALL_KERNELS(bfloat16)
NODEFLOW_POOL_ALL_KERNELS(std::int8_t)
NODEFLOW_POOL_ALL_KERNELS(std::uint8_t)

}  // namespace nodeflow

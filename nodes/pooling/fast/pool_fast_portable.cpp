// The fast pooling kernels in plain C++ (one lane) for every pooling dtype:
// float64, float16, bfloat16, int8, uint8, and float32 on CPUs without AVX2.
// Both compute in accumulator_t (float32 for float16 and bfloat16), as the
// reference kernels' sums do.
#include "nodes/pooling/fast/kernels/dependencies.hpp"
#include "nodes/pooling/fast/pool_fast_kernels.hpp"
#include "nodes/pooling/fast/pool_fast_simd_portable.hpp"
#include "nodes/pooling/fast/pool_fast_table.hpp"
#include "nodes/pooling/pool_math.hpp"

namespace nodeflow::fast {
namespace {

// MaxPool compares in float32 for float16 and bfloat16 too: each element is
// converted once where it is loaded, not at every comparison, and the
// maximum converts back exactly (MaxPool 2x2 in float16: 0.4x-0.6x).
template <typename T>
using Kernels = PoolKernels<PortableLanes<T, accumulator_t<T>>>;

// Row-major offsets (in the plane) of window `o`'s valid taps, in row-major tap order.
void window_offsets(const Plan& plan, const std::vector<std::int64_t>& o,
                    std::vector<std::int64_t>& offsets, std::vector<std::int64_t>& next) {
  offsets.assign(1, 0);
  for (std::size_t k = 0; k < plan.axes.size(); ++k) {
    const AxisPlan& a = plan.axes[k];
    const auto ok = static_cast<std::size_t>(o[k]);
    next.clear();
    for (std::int64_t base : offsets)
      for (std::int64_t t = a.tap_lo[ok]; t < a.tap_hi[ok]; ++t)
        next.push_back(base * a.in + a.position(o[k], t));
    offsets.swap(next);
  }
}

}  // namespace

template <typename T>
const KernelTable<T>& portable_kernels() {
  static constexpr KernelTable<T> table = kernel_table<Kernels<T>>();
  return table;
}

namespace {

// The per-axis output position of output w of a plane (row-major).
void output_position(const Plan& plan, std::int64_t w, std::vector<std::int64_t>& o) {
  for (std::size_t k = plan.axes.size(); k-- > 0;) {
    o[k] = w % plan.axes[k].out;
    w /= plan.axes[k].out;
  }
}

template <typename T, bool kWide>
void lp_backward_sums(const Plan& plan, const T* x, const T* y, const T* dy, double scale, T* dx,
                      std::int64_t begin, std::int64_t end) {
  using A = accumulator_t<T>;
  using S = std::conditional_t<kWide, double, A>;
  const std::size_t rank = plan.axes.size();
  const pool_math::WideGradient wide(plan.overlap, scale);
  std::vector<S> sums(static_cast<std::size_t>(plan.in_plane));
  std::vector<std::int64_t> o(rank), offsets, next;
  for (std::int64_t plane = begin; plane < end; ++plane) {
    std::fill(sums.begin(), sums.end(), S(0));
    const T* xp = x + plane * plan.in_plane;
    std::fill(o.begin(), o.end(), 0);
    for (std::int64_t w = 0; w < plan.out_plane; ++w) {
      const auto at = static_cast<std::size_t>(plane * plan.out_plane + w);
      const auto yo = static_cast<A>(y[at]);
      if (yo != A(0)) {
        const auto g = static_cast<A>(dy[at]);
        window_offsets(plan, o, offsets, next);
        const pool_math::LpWindowGradient<T> grad(y[at], xp, offsets, plan.p);
        for (std::int64_t i : offsets) {
          const auto xi = static_cast<A>(xp[i]);
          if (grad.zero(xi)) continue;
          const A term = grad.term(xi, g);
          if constexpr (kWide)
            sums[static_cast<std::size_t>(i)] += wide.term(term);
          else
            sums[static_cast<std::size_t>(i)] += term;
        }
      }
      for (std::size_t k = rank; k-- > 0;) {
        if (++o[k] < plan.axes[k].out) break;
        o[k] = 0;
      }
    }
    T* dxp = dx + plane * plan.in_plane;
    for (std::int64_t i = 0; i < plan.in_plane; ++i) {
      const S sum = sums[static_cast<std::size_t>(i)];
      if constexpr (kWide)
        dxp[i] = wide.add_into(dxp[i], sum);
      else
        dxp[i] = static_cast<T>(static_cast<A>(dxp[i]) + static_cast<A>(scale) * sum);
    }
  }
}

}  // namespace

template <typename T>
void lp_backward_planes(const Plan& plan, const T* x, const T* y, const T* dy, double scale, T* dx,
                        std::int64_t begin, std::int64_t end, bool wide) {
  if (wide)
    lp_backward_sums<T, true>(plan, x, y, dy, scale, dx, begin, end);
  else
    lp_backward_sums<T, false>(plan, x, y, dy, scale, dx, begin, end);
}

template <typename T>
void redo_windows(const Plan& plan, const T* x, T* y, std::int64_t begin, std::int64_t end) {
  // Forward items are consecutive runs of outputs: a plane each when whole,
  // else (plane, chunk of axis-0 outputs).
  std::int64_t first = begin, last = end;
  if (!plan.whole_plane) {
    const std::int64_t inner = plan.inner_out(), out0 = plan.axes[0].out;
    first = begin / plan.chunks * plan.out_plane + begin % plan.chunks * plan.chunk * inner;
    const std::int64_t final_item = end - 1;
    last = final_item / plan.chunks * plan.out_plane +
           std::min(out0, (final_item % plan.chunks + 1) * plan.chunk) * inner;
  }
  const std::size_t rank = plan.axes.size();
  std::vector<std::int64_t> o(rank), offsets, next;
  for (std::int64_t at = first; at < last; ++at) {
    const double v = std::abs(static_cast<double>(y[at]));
    const bool exact = v <= static_cast<double>(std::numeric_limits<T>::max()) &&
                       !(v < plan.value_floor);
    if (exact) continue;
    const std::int64_t plane = at / plan.out_plane;
    output_position(plan, at % plan.out_plane, o);
    window_offsets(plan, o, offsets, next);
    const T* xp = x + plane * plan.in_plane;
    if (plan.reduce == Reduce::Average) {
      std::int64_t divisor = 1;
      for (std::size_t k = 0; k < rank; ++k)
        divisor *= plan.axes[k].divisor[static_cast<std::size_t>(o[k])];
      y[at] = pool_math::window_average(xp, offsets, divisor);
    } else {
      y[at] = pool_math::window_lp(xp, offsets, plan.p);
    }
  }
}

template <typename T>
void average_backward_wide(const Plan& plan, const T* dy, double scale, T* dx,
                           const GradientRedo& redo) {
  const std::size_t rank = plan.axes.size();
  const pool_math::WideGradient wide(plan.overlap, scale);
  const T* dyp = dy + redo.plane * plan.out_plane;
  T* dxp = dx + redo.plane * plan.in_plane;
  std::vector<std::int64_t> pos(rank), lo(rank), hi(rank), pick(rank);
  for (std::int64_t at = redo.begin; at < redo.end; ++at) {
    // The element's position per axis, and the windows holding it per axis.
    bool held = true;
    for (std::size_t k = rank, rest = static_cast<std::size_t>(at); k-- > 0;) {
      const AxisPlan& a = plan.axes[k];
      pos[k] = static_cast<std::int64_t>(rest) % a.in;
      rest /= static_cast<std::size_t>(a.in);
      lo[k] = a.window_begin[static_cast<std::size_t>(pos[k])];
      hi[k] = a.window_begin[static_cast<std::size_t>(pos[k]) + 1];
      held = held && lo[k] < hi[k];
    }
    double sum = 0;
    // Every combination of one window per axis, last axis fastest.
    pick = lo;
    while (held) {
      std::int64_t w = 0, divisor = 1;
      for (std::size_t k = 0; k < rank; ++k) {
        const auto o = plan.axes[k].windows[static_cast<std::size_t>(pick[k])];
        w = w * plan.axes[k].out + o;
        divisor *= plan.axes[k].divisor[static_cast<std::size_t>(o)];
      }
      sum += wide.term(static_cast<double>(dyp[w]) / static_cast<double>(divisor));
      std::size_t k = rank;
      while (k-- > 0 && ++pick[k] == hi[k]) pick[k] = lo[k];
      if (k == static_cast<std::size_t>(-1)) break;
    }
    dxp[at] = wide.add_into(dxp[at], sum);
  }
}

#define NODEFLOW_POOL_FAST_FLOAT(T)                                                            \
  template const KernelTable<T>& portable_kernels<T>();                                        \
  template void lp_backward_planes<T>(const Plan&, const T*, const T*, const T*, double, T*, \
                                      std::int64_t, std::int64_t, bool);                       \
  template void redo_windows<T>(const Plan&, const T*, T*, std::int64_t, std::int64_t);       \
  template void average_backward_wide<T>(const Plan&, const T*, double, T*, const GradientRedo&);
NODEFLOW_POOL_FAST_FLOAT(float)
NODEFLOW_POOL_FAST_FLOAT(double)
NODEFLOW_POOL_FAST_FLOAT(half)
NODEFLOW_POOL_FAST_FLOAT(bfloat16)
template const KernelTable<std::int8_t>& portable_kernels<std::int8_t>();
template const KernelTable<std::uint8_t>& portable_kernels<std::uint8_t>();

}  // namespace nodeflow::fast

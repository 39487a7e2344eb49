// The fast pooling kernels in plain C++ (one lane) for every pooling dtype:
// float64, float16, bfloat16, int8, uint8, and float32 on CPUs without AVX2.
// Both compute in accumulator_t (float32 for float16 and bfloat16), as the
// reference kernels' sums do.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "nodes/pool_fast_plan.hpp"
#include "nodes/pool_math.hpp"
#include "nodes/pool_fast_simd_portable.hpp"
#include "nodes/pool_fast_table.hpp"

namespace nodeflow::fast {
namespace portable {
#include "nodes/pool_fast_kernels.hpp"
}  // namespace portable

namespace {

// MaxPool compares in float32 for float16 and bfloat16 too: each element is
// converted once where it is loaded, not at every comparison, and the
// maximum converts back exactly (MaxPool 2x2 in float16: 0.4x-0.6x).
template <typename T>
using Kernels = portable::PoolKernels<PortableLanes<T, accumulator_t<T>>>;

// The reference's exponent helpers, so LpPool's gradient comes out bitwise
// the same.
using pool_math::abs_value;
using pool_math::pow_p;

// -v when `negate`, else v, bit for bit as the expression -v (the sign bit
// flipped, NaN included), computed without a branch.
template <typename A>
A negated_if(bool negate, A v) {
  using Bits = std::conditional_t<sizeof(A) == 8, std::uint64_t, std::uint32_t>;
  const Bits sign = Bits{negate} << (8 * sizeof(A) - 1);
  return std::bit_cast<A>(static_cast<Bits>(std::bit_cast<Bits>(v) ^ sign));
}

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
  static const KernelTable<T> table = [] {
    KernelTable<T> t;
    t.forward = &Kernels<T>::forward;
    if constexpr (!std::is_integral_v<T>) {
      t.average_backward = &Kernels<T>::average_backward;
      t.max_backward = &Kernels<T>::max_backward;
    }
    return t;
  }();
  return table;
}

template <typename T>
void lp_backward_planes(const Plan& plan, const T* x, const T* y, const T* dy, double scale, T* dx,
                        std::int64_t begin, std::int64_t end) {
  using A = accumulator_t<T>;
  const std::size_t rank = plan.axes.size();
  std::vector<A> sums(static_cast<std::size_t>(plan.in_plane));
  std::vector<std::int64_t> o(rank), offsets, next;
  for (std::int64_t plane = begin; plane < end; ++plane) {
    std::fill(sums.begin(), sums.end(), A(0));
    const T* xp = x + plane * plan.in_plane;
    std::fill(o.begin(), o.end(), 0);
    for (std::int64_t w = 0; w < plan.out_plane; ++w) {
      const auto at = static_cast<std::size_t>(plane * plan.out_plane + w);
      const auto yo = static_cast<A>(y[at]);
      if (yo != A(0)) {
        const auto g = static_cast<A>(dy[at]);
        window_offsets(plan, o, offsets, next);
        for (std::int64_t i : offsets) {
          const auto xi = static_cast<A>(xp[i]);
          if (xi == A(0)) continue;
          const A ratio = pow_p(abs_value(xi) / yo, plan.p - 1);
          // (xi < 0 ? -g : g) without a branch: the signs of random inputs
          // mispredicted half the time (LpPool p=2 backward: 0.95x-1.06x
          // the reference's time with the branch).
          sums[static_cast<std::size_t>(i)] += negated_if(xi < A(0), g) * ratio;
        }
      }
      for (std::size_t k = rank; k-- > 0;) {
        if (++o[k] < plan.axes[k].out) break;
        o[k] = 0;
      }
    }
    T* dxp = dx + plane * plan.in_plane;
    for (std::int64_t i = 0; i < plan.in_plane; ++i)
      dxp[i] = static_cast<T>(static_cast<A>(dxp[i]) +
                              static_cast<A>(scale) * sums[static_cast<std::size_t>(i)]);
  }
}

#define NODEFLOW_POOL_FAST_FLOAT(T)                                                            \
  template const KernelTable<T>& portable_kernels<T>();                                        \
  template void lp_backward_planes<T>(const Plan&, const T*, const T*, const T*, double, T*, \
                                      std::int64_t, std::int64_t);
NODEFLOW_POOL_FAST_FLOAT(float)
NODEFLOW_POOL_FAST_FLOAT(double)
NODEFLOW_POOL_FAST_FLOAT(half)
NODEFLOW_POOL_FAST_FLOAT(bfloat16)
template const KernelTable<std::int8_t>& portable_kernels<std::int8_t>();
template const KernelTable<std::uint8_t>& portable_kernels<std::uint8_t>();

}  // namespace nodeflow::fast

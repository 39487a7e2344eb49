#pragma once
// Helpers of the fast-kernel tests (test_pool_fast*.cpp): the kernel levels
// to check, a guard that restores the process-wide level, bitwise and
// ulp-level comparisons against the reference kernels, and seeded inputs
// rich in ties, signed zeros, NaN and infinities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/attributes.hpp"
#include "core/tensor.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"

namespace nodeflow::testing::pool_fast {

/// A pooling window's attributes: kernel_shape, strides, pads and, if given,
/// dilations.
inline Attributes window_attrs(std::vector<std::int64_t> kernel, std::vector<std::int64_t> strides,
                               std::vector<std::int64_t> pads,
                               std::vector<std::int64_t> dilations = {}) {
  Attributes a;
  a["kernel_shape"] = kernel;
  a["strides"] = strides;
  a["pads"] = pads;
  if (!dilations.empty()) a["dilations"] = dilations;
  return a;
}

/// Every fast level this CPU supports (the reference is the oracle).
inline std::vector<PoolImpl> fast_impls() {
  std::vector<PoolImpl> impls;
  for (PoolImpl impl : {PoolImpl::Portable, PoolImpl::Avx2, PoolImpl::Avx512})
    if (impl <= pool_impl_supported()) impls.push_back(impl);
  return impls;
}

/// Sets the kernel level for a scope.
class ImplScope {
 public:
  explicit ImplScope(PoolImpl impl) : saved_(pool_impl()) { set_pool_impl(impl); }
  ~ImplScope() { set_pool_impl(saved_); }
  ImplScope(const ImplScope&) = delete;
  ImplScope& operator=(const ImplScope&) = delete;

 private:
  PoolImpl saved_;
};

/// Same dtype, shape and bits, except that any NaN equals any NaN: IEEE 754
/// leaves the sign and payload of a computed NaN (inf/inf, NaN + NaN)
/// unspecified, and x86 takes them from whichever operand the compiler
/// happened to put first, so they differ between optimization levels.
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0) return true;
  return visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto x = a.values<T>(), y = b.values<T>();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::memcmp(&x[i], &y[i], sizeof(T)) == 0) continue;
      if constexpr (std::is_integral_v<T>) return false;
      else if (!std::isnan(static_cast<double>(x[i])) || !std::isnan(static_cast<double>(y[i])))
        return false;
    }
    return true;
  });
}

/// Machine epsilon of T and of the type its sums accumulate in.
template <typename T>
double eps_of() {
  if constexpr (std::is_same_v<T, half>)
    return 0x1p-10;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-7;
  else
    return std::numeric_limits<T>::epsilon();
}
template <typename T>
double tiniest() {  // smallest positive subnormal: the ulp of numbers near 0
  if constexpr (std::is_same_v<T, half>)
    return 0x1p-24;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-133;
  else
    return std::numeric_limits<T>::denorm_min();
}

/// Largest |got - want| over the elements, in units of
/// eps(accumulator) * magnitude + eps(T) * |want| (the sum's rounding plus
/// the result's own last place); infinity when a NaN or an infinity differs.
/// `magnitude` holds the same sum over absolute values (the reference kernel
/// run on |x|), so cancellation cannot make the bound meaningless.
template <typename T>
double error_in_ulps(std::span<const T> got, std::span<const T> want,
                     std::span<const double> magnitude) {
  using A = accumulator_t<T>;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      const bool same = (std::isnan(w) && std::isnan(g)) || g == w;
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double unit = eps_of<A>() * magnitude[i] + eps_of<T>() * std::abs(w) + tiniest<T>();
    worst = std::max(worst, std::abs(g - w) / unit);
  }
  return worst;
}

/// How inputs are drawn: spread values, or few distinct ones (ties, signed
/// zeros, NaN, infinities) so every tie and NaN rule is exercised.
enum class Draw { Spread, Ties };

template <typename T>
void fill_random(std::span<T> values, std::mt19937_64& rng, Draw draw, bool specials) {
  std::uniform_real_distribution<double> spread(-4.0, 4.0);
  std::uniform_int_distribution<int> pick(0, 99);
  for (T& v : values) {
    if constexpr (std::is_integral_v<T>) {
      std::uniform_int_distribution<int> any(std::numeric_limits<T>::min(),
                                             std::numeric_limits<T>::max());
      const T few[] = {std::numeric_limits<T>::min(), T(0), T(1), std::numeric_limits<T>::max()};
      v = draw == Draw::Spread ? static_cast<T>(any(rng)) : few[pick(rng) % 4];
    } else {
      const int roll = pick(rng);
      double x = draw == Draw::Spread ? spread(rng) : static_cast<double>(roll % 5 - 2);
      if (draw == Draw::Ties && roll % 5 == 2) x = roll % 2 ? -0.0 : 0.0;
      if (specials && roll < 3) x = std::numeric_limits<double>::quiet_NaN();
      if (specials && roll >= 97) x = roll == 99 ? INFINITY : -INFINITY;
      v = static_cast<T>(x);
    }
  }
}

/// |t| elementwise, in t's dtype T: the magnitude the order tolerance scales.
template <typename T>
Tensor absolute(const Tensor& t) {
  Tensor out = t.clone();
  for (T& v : out.values<T>()) v = v < T(0) ? T(-v) : v;
  return out;
}

// The fast sums add the same terms as the reference in another (separable)
// order. Two orders of an n-term float sum can differ by up to n - 1 units of
// eps * magnitude (each rounds n - 1 times, by at most half an eps of the
// magnitude), and n is at most the window's taps, both for a window's sum and
// for the windows an input's gradient collects. Typical differences stay
// below 2 units (the sweeps print their worst); a missing or wrong term is
// off by a good fraction of the magnitude, far beyond either.
constexpr double kUlps = 2.0;
inline double sum_tolerance(const PoolGeometry& g) {
  double taps = 1;
  for (const WindowAxis& a : g.axes) taps *= static_cast<double>(a.kernel);
  return std::max(kUlps, taps - 1);
}

}  // namespace nodeflow::testing::pool_fast

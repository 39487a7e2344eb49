#pragma once
// The numerics of pooling that the reference kernels and the fast kernels
// share, so both compute the same values: LpPool's exponent helpers, one
// window's AveragePool and LpPool free of intermediate overflow and
// underflow, and gradient sums kept in range (the pooling semantics' rule
// "No intermediate overflow or underflow": a result the output dtype can
// hold is returned, forward and backward).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"

namespace nodeflow::pool_math {

/// v^e for an integer exponent e >= 0; the small exponents exactly as products.
template <typename A>
A pow_p(A v, std::int64_t e) {
  if (e == 0) return A(1);
  if (e == 1) return v;
  if (e == 2) return v * v;
  return static_cast<A>(std::pow(v, static_cast<A>(e)));
}

/// The p-th root (p >= 1): sqrt for p = 2, as LpPool's reference takes it.
template <typename A>
A root_p(A v, std::int64_t p) {
  if (p == 1) return v;
  if (p == 2) return std::sqrt(v);
  return static_cast<A>(std::pow(v, A(1) / static_cast<A>(p)));
}

/// NaN test for every pooling dtype (integers are never NaN).
template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return Eigen::numext::isnan(v);
}

/// MaxPool's order (also MaxRoiPool's): NaN above every number, and an
/// element replaces the current best only when strictly greater, so the
/// first maximum (or first NaN) in scan order stays.
template <typename T>
bool beats(T candidate, T best) {
  if (is_nan(best)) return false;
  return is_nan(candidate) || candidate > best;
}

/// |v| without a library call (also for half and bfloat16, through A).
template <typename A>
A abs_value(A v) {
  return v < A(0) ? A(-v) : v;
}

/// e with 2^(e-1) < v <= 2^e for v >= 1 (0 for v <= 1).
inline int ceil_log2(double v) {
  if (!(v > 1)) return 0;
  int e = 0;
  const double f = std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1)
  return f == 0.5 ? e - 1 : e;
}

/// AveragePool of one window: the sum of x[i] over i in `inputs`, divided by
/// `divisor`, summed in accumulator_t<T>. Where that sum overflows although
/// every element is finite, it is redone in float64 with the elements
/// scaled by 2^-k (k bits of the element count: no float64 sum of them can
/// overflow, and the scaling is exact down to float64's subnormals), so a
/// mean that T can hold is returned. NaN and infinities propagate as IEEE
/// addition says.
template <typename T>
T window_average(const T* x, std::span<const std::int64_t> inputs, std::int64_t divisor) {
  using A = accumulator_t<T>;
  A sum(0);
  for (std::int64_t i : inputs) sum += static_cast<A>(x[i]);
  const A mean = sum / static_cast<A>(divisor);
  if (std::isfinite(static_cast<double>(mean))) return static_cast<T>(mean);
  for (std::int64_t i : inputs)
    if (!std::isfinite(static_cast<double>(x[i]))) return static_cast<T>(mean);
  const int k = ceil_log2(static_cast<double>(inputs.size())) + 1;
  double wide = 0;
  for (std::int64_t i : inputs) wide += std::ldexp(static_cast<double>(x[i]), -k);
  return static_cast<T>(std::ldexp(wide / static_cast<double>(divisor), k));
}

/// LpPool of one window, computed as m * (sum (|x| / m)^p)^(1/p) with m the
/// window's largest |x|, in accumulator_t<T>: every term is at most 1, so
/// nothing overflows or underflows on the way to a value T can hold (p = 3
/// over [1e13, 1e13] is 1.26e13; p = 2 over [1e-30, -1e-30] is 1.41e-30; a
/// huge p tends to m). IEEE propagation, the same for every p: a NaN in the
/// window makes the value NaN; otherwise an infinity makes it +infinity; a
/// window of zeros gives 0.
template <typename T>
T window_lp(const T* x, std::span<const std::int64_t> inputs, std::int64_t p) {
  using A = accumulator_t<T>;
  A m(0);
  for (std::int64_t i : inputs) {
    const A a = abs_value(static_cast<A>(x[i]));
    if (a != a) return static_cast<T>(a);
    m = std::max(m, a);
  }
  if (m == A(0) || m == std::numeric_limits<A>::infinity()) return static_cast<T>(m);
  A sum(0);
  for (std::int64_t i : inputs) sum += pow_p(abs_value(static_cast<A>(x[i])) / m, p);
  return static_cast<T>(m * root_p(sum, p));
}

/// The smallest LpPool value that a plain sum of |x|^p in A (what the fast
/// kernels' separable sums add) computes accurately: below it a term may
/// have lost bits to underflow, and the window must be computed as
/// window_lp does. 0 for p = 1 (no powers). Above A's largest value, or NaN,
/// a term may have overflowed.
template <typename A>
double lp_plain_floor(std::int64_t p) {
  if (p == 1) return 0;
  const double floor = std::ldexp(static_cast<double>(std::numeric_limits<A>::min()),
                                  std::numeric_limits<A>::digits);
  return std::pow(floor, 1.0 / static_cast<double>(p));
}

/// The type LpPool's gradient terms are computed in: wider than the
/// accumulator (float64; long double for float64), so that a factor
/// (|x| / y)^(p-1) below A's range does not take a product with a large dy
/// that A can hold down to 0.
template <typename A>
using lp_wide_t = std::conditional_t<std::is_same_v<A, double>, long double, double>;

/// One term of LpPool's gradient, dy * sign(x) * ratio^(p-1), ratio being
/// |x| / y: at most |dy|, since y >= |x|. NaN where the ratio is NaN for
/// every p, p = 1 included, so a NaN in a window makes every gradient of
/// that window NaN whatever p is.
template <typename A>
A lp_gradient_from_ratio(A x, lp_wide_t<A> ratio, A dy, std::int64_t p) {
  using W = lp_wide_t<A>;
  const W factor = ratio != ratio ? ratio : pow_p(ratio, p - 1);
  // sign(x) as a factor of +-1, not a branch: the signs of random inputs
  // mispredicted half the time (LpPool p=2 backward: 0.95x-1.06x the
  // reference's time with a branch).
  const W sign = std::copysign(W(1), static_cast<W>(x));
  return static_cast<A>(static_cast<W>(dy) * factor * sign);
}

/// LpPool's gradient term from the window's value y, for an element x != 0
/// of a window whose y != 0 (NaN where |x| / y is: y NaN, or x and y
/// infinite).
template <typename A>
A lp_gradient_term(A x, A y, A dy, std::int64_t p) {
  using W = lp_wide_t<A>;
  return lp_gradient_from_ratio(x, static_cast<W>(abs_value(x)) / static_cast<W>(y), dy, p);
}

/// Whether LpPool's gradient term at x is 0 without computing it: y == 0
/// (the gradient there is defined as 0), or x == 0 with y not NaN.
template <typename A>
bool lp_gradient_is_zero(A x, A y) {
  return y == A(0) || (x == A(0) && y == y);
}

/// LpPool's gradient terms of one window, whose value (from the forward,
/// rounded to T) is y. The ratio |x| / y is taken from y where y is a
/// normal finite T: there y carries T's full precision, and the common path
/// stays one division per element. Where y overflowed to infinity or is
/// subnormal although the window is finite, y has lost the ratio (x / inf
/// is 0; a subnormal y has few bits), so the ratio is computed as window_lp
/// computes y, from the window's largest |x| m and S = sum (|x| / m)^p:
/// |x| / y = (|x| / m) / S^(1/p), in lp_wide_t<A>, whatever y rounded to.
/// y == 0 needs no such route: y >= m, so y is 0 only when every x is 0.
/// A window holding an infinity (y = +inf, m = inf) keeps y's ratio, the
/// same rule for every p: an infinite x gets NaN (inf / inf), a finite x
/// dy * sign(x) * 0^(p-1) (dy * sign(x) for p = 1, 0 above); a NaN in the
/// window (y NaN) makes every term NaN.
template <typename T>
class LpWindowGradient {
 public:
  using A = accumulator_t<T>;
  using W = lp_wide_t<A>;

  /// x[i] for i in `inputs` are the window's elements.
  LpWindowGradient(T y, const T* x, std::span<const std::int64_t> inputs, std::int64_t p)
      : y_(static_cast<A>(y)), p_(p) {
    const A a = abs_value(y_);
    const auto smallest = static_cast<A>(std::numeric_limits<T>::min());
    const auto largest = static_cast<A>(std::numeric_limits<T>::max());
    if (a == A(0) || a != a || (a >= smallest && a <= largest)) return;
    for (std::int64_t i : inputs) {
      const W v = abs_value(static_cast<W>(static_cast<A>(x[i])));
      if (!(v <= std::numeric_limits<W>::max())) return;  // an infinity or NaN: y's rule
      m_ = std::max(m_, v);
    }
    if (m_ == W(0)) return;
    W sum(0);
    for (std::int64_t i : inputs)
      sum += pow_p(abs_value(static_cast<W>(static_cast<A>(x[i]))) / m_, p);
    root_ = root_p(sum, p);
    scaled_ = true;
  }

  /// Whether the term at x is 0 without computing it (lp_gradient_is_zero).
  bool zero(A x) const { return lp_gradient_is_zero(x, y_); }

  /// The term at x (not zero(x)) for the window's dy.
  A term(A x, A dy) const {
    if (!scaled_) return lp_gradient_term(x, y_, dy, p_);
    return lp_gradient_from_ratio(x, (static_cast<W>(abs_value(x)) / m_) / root_, dy, p_);
  }

 private:
  A y_;
  std::int64_t p_;
  bool scaled_ = false;
  W m_ = W(0), root_ = W(1);
};

/// The largest |v| of `values` as a double; NaN if one is NaN.
template <typename T>
double largest_magnitude(std::span<const T> values) {
  double largest = 0;
  for (const T& v : values) {
    const double a = std::abs(static_cast<double>(v));
    if (a != a) return a;
    largest = std::max(largest, a);
  }
  return largest;
}

/// The largest |term| for which gradient sums in A stay in range: dx +
/// scale * (a sum of at most `terms` terms) with no intermediate overflow,
/// and scale converted to A without underflow or overflow. -1 when scale
/// itself does not fit A (every gradient then sums in WideGradient).
template <typename A>
double gradient_term_limit(double terms, double scale) {
  const double s = std::abs(scale);
  const auto largest = static_cast<double>(std::numeric_limits<A>::max());
  if (s != 0 && (s < static_cast<double>(std::numeric_limits<A>::min()) || s > largest / 4))
    return -1;
  return largest / 4 / (std::max(1.0, terms) * std::max(1.0, s));
}

/// Whether the gradient sums of a pooling backward whose terms are each at
/// most |dy| (AveragePool's shares, LpPool's terms), at most `terms` of them
/// per element, can run in accumulator_t<T> (else in WideGradient).
template <typename T>
bool gradient_fits(std::span<const T> dy, double terms, double scale) {
  return largest_magnitude(dy) <= gradient_term_limit<accumulator_t<T>>(terms, scale);
}

/// Gradient sums too large (or a scale too small) for the accumulator: in
/// float64, every term scaled by 2^-shift, the shift chosen so that no sum of
/// `terms` finite float64 terms, times scale, plus dx, can overflow; the
/// result is scaled back once, so it overflows only where the true result
/// does. (The scaling is exact except below 2^(shift-1074), far below any
/// value where it is needed.)
class WideGradient {
 public:
  WideGradient(double terms, double scale)
      : shift_(2 + ceil_log2(terms) + ceil_log2(std::abs(scale))), scale_(scale) {}
  /// What a term adds to a sum.
  double term(double v) const { return std::ldexp(v, -shift_); }
  /// dx + scale * (the sum of terms), rounded once to T.
  template <typename T>
  T add_into(T dx, double sum) const {
    return static_cast<T>(
        std::ldexp(std::ldexp(static_cast<double>(dx), -shift_) + scale_ * sum, shift_));
  }

 private:
  int shift_;
  double scale_;
};

/// Gradient sums per input element, added to dx once at the end, so
/// float16/bfloat16 round once per element however many windows overlap it:
/// in accumulator_t<T> (kWide false), or in float64 through WideGradient.
template <typename T, bool kWide>
class GradSum {
 public:
  using S = std::conditional_t<kWide, double, accumulator_t<T>>;
  GradSum(std::size_t n, double terms, double scale) : sum_(n, S(0)), wide_(terms, scale) {}
  void add(std::int64_t i, S v) {
    if constexpr (kWide)
      sum_[static_cast<std::size_t>(i)] += wide_.term(v);
    else
      sum_[static_cast<std::size_t>(i)] += v;
  }
  void add_into(std::span<T> dx, double scale) const {
    using A = accumulator_t<T>;
    for (std::size_t i = 0; i < dx.size(); ++i)
      if constexpr (kWide)
        dx[i] = wide_.add_into(dx[i], sum_[i]);
      else
        dx[i] = static_cast<T>(static_cast<A>(dx[i]) + static_cast<A>(scale) * sum_[i]);
  }

 private:
  std::vector<S> sum_;
  WideGradient wide_;
};

}  // namespace nodeflow::pool_math

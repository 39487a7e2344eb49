#pragma once
// LpPool's exponent helpers, shared by the reference kernels and the fast
// kernels' LpPool backward so that both compute bitwise the same gradient.
#include <cmath>
#include <cstdint>

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

/// |v| without a library call (also for half and bfloat16, through A).
template <typename A>
A abs_value(A v) {
  return v < A(0) ? A(-v) : v;
}

}  // namespace nodeflow::pool_math

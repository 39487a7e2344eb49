#pragma once
// One-lane backend of the fast pooling kernels (the LaneBackend of
// pool_fast_simd.hpp): plain C++ for every dtype, and the fallback for
// float32 on CPUs without AVX2. Masks are bools, lane indexes int32.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/dtype.hpp"

namespace nodeflow::fast {

template <typename T_, typename C_>
struct PortableLanes {
  using T = T_;
  using C = C_;
  using V = C;
  using M = bool;
  using I = std::int32_t;
  static constexpr std::int64_t N = 1;
  static constexpr bool kHasPow = true;

  static M none() { return false; }
  static M first_n(std::int64_t n) { return n > 0; }
  static M lanes(std::int64_t lo, std::int64_t hi) { return lo <= 0 && hi > 0; }
  static M mand(M a, M b) { return a && b; }
  static M mor(M a, M b) { return a || b; }
  static M mnot(M a) { return !a; }
  static bool any(M m) { return m; }

  static M from_bits(unsigned bits) { return (bits & 1u) != 0; }
  static V zero() { return C(0); }
  static V broadcast(C v) { return v; }
  template <typename U>
  static V load(const U* p) {
    return static_cast<C>(*p);
  }
  template <typename U>
  static V load(const U* p, M m) {
    return m ? static_cast<C>(*p) : C(0);
  }
  template <typename U>
  static void store(U* p, V v) {
    *p = static_cast<U>(v);
  }
  template <typename U>
  static void store(U* p, V v, M m) {
    if (m) *p = static_cast<U>(v);
  }
  /// x[off] when m, else 0 (x + off is not formed when it is outside x).
  template <typename U>
  static V load_at(const U* x, std::int64_t off, M m) {
    return m ? static_cast<C>(x[off]) : C(0);
  }
  static V load_strided(const T* x, std::int64_t off, std::int64_t, M m) {
    return load_at(x, off, m);
  }

  template <typename U>
  static V load_or(const U* p, M m, V fill) {
    return m ? static_cast<C>(*p) : fill;
  }
  static V shift_in(V, V prev) { return prev; }
  static void deinterleave(V a, V b, V& even, V& odd) {
    even = a;
    odd = b;
  }
  static M equal(M where, V a, V b) { return where && a == b; }
  static M unordered(V a, V b) { return is_nan(a) || is_nan(b); }

  static V add(V a, V b) { return a + b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  // Like the reference's abs_value: -0 stays -0 (it adds as 0 either way).
  static V abs(V a) { return a < C(0) ? V(-a) : a; }
  static V sqrt(V a) { return std::sqrt(a); }
  static V pow(V a, std::int64_t e) { return static_cast<V>(std::pow(a, static_cast<C>(e))); }
  static V root(V a, std::int64_t p) { return static_cast<V>(std::pow(a, C(1) / static_cast<C>(p))); }

  static bool is_nan(V v) {
    if constexpr (std::is_integral_v<V>)
      return false;
    else
      return Eigen::numext::isnan(v);
  }
  static M beats(V candidate, V best) {
    if (is_nan(best)) return false;
    return is_nan(candidate) || candidate > best;
  }
  static V select(M m, V a, V b) { return m ? a : b; }
  static M greater(V candidate, V best) { return candidate > best; }
  static M greater(M where, V candidate, V best) { return where && candidate > best; }
  static M unordered(V v) { return is_nan(v); }
  static M equal(V a, V b) { return a == b; }
  static V max(V candidate, V best) { return candidate > best ? candidate : best; }

  static I iota(std::int64_t base, std::int64_t) { return static_cast<I>(base); }
  static I add_i(I a, std::int64_t b) { return static_cast<I>(a + b); }
  static I select_i(M m, I a, I b) { return m ? a : b; }
  static M equal_i(M where, I a, I b) { return where && a == b; }
  static I load_i(const std::int32_t* p, M m) { return m ? *p : 0; }
  static void store_i(std::int32_t* p, I v, M m) {
    if (m) *p = v;
  }
  static void store_index64(std::int64_t* p, I idx, std::int64_t base, M m) {
    if (m) *p = base + idx;
  }
  static C reduce_add(V v) { return v; }
};

}  // namespace nodeflow::fast

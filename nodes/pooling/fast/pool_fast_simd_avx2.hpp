#pragma once
// AVX2 backend (8 float32 lanes; masks are all-ones/all-zeros lanes) of the
// fast pooling kernels: the LaneBackend of pool_fast_simd.hpp. Only pool_fast_avx2.cpp includes it, after switching
// the compiler's target to AVX2; the CPU is checked before any of it runs.
#include <immintrin.h>

#include <cstdint>

#include "nodes/pooling/fast/pool_fast_simd.hpp"

namespace nodeflow::fast::avx2 {

struct Lanes : Float32Lanes {
  using V = __m256;
  using M = __m256;
  using I = __m256i;
  static constexpr std::int64_t N = 8;

  static __m256i iota8() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
  static __m256i clamp8(std::int64_t n) {
    return _mm256_set1_epi32(static_cast<std::int32_t>(n < 0 ? 0 : n > 8 ? 8 : n));
  }
  static M none() { return _mm256_setzero_ps(); }
  static M first_n(std::int64_t n) {
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(clamp8(n), iota8()));
  }
  static M lanes(std::int64_t lo, std::int64_t hi) {
    return _mm256_andnot_ps(first_n(lo), first_n(hi));
  }
  static M mand(M a, M b) { return _mm256_and_ps(a, b); }
  static M mor(M a, M b) { return _mm256_or_ps(a, b); }
  static M mnot(M a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }

  static M from_bits(unsigned bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i set = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(set, bit));
  }
  static V zero() { return _mm256_setzero_ps(); }
  static V broadcast(float v) { return _mm256_set1_ps(v); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load(const float* p, M m) { return _mm256_maskload_ps(p, _mm256_castps_si256(m)); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store(float* p, V v, M m) { _mm256_maskstore_ps(p, _mm256_castps_si256(m), v); }
  static V load_at(const float* x, std::int64_t off, M m) { return load(x + off, m); }
  static V load_even(const float* p, M m0, M m1) {
    const V a = load(p, m0);
    const V b = load(p + 8, m1);
    // a0 a2 b0 b2 | a4 a6 b4 b6, then the middle 64-bit pairs swapped.
    const V pairs = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), 0xD8));
  }
  static V load_strided(const float* x, std::int64_t off, std::int64_t stride, M m) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, iota(off, stride), m, 4);
  }
  static void deinterleave(V a, V b, V& even, V& odd) {
    // a0 a2 b0 b2 | a4 a6 b4 b6 (and the odd ones), then the middle 64-bit pairs swapped.
    const V e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xDD);
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
  }
  static void interleave(V even, V odd, V& lo, V& hi) {
    const V a = _mm256_unpacklo_ps(even, odd);  // e0 o0 e1 o1 | e4 o4 e5 o5
    const V b = _mm256_unpackhi_ps(even, odd);  // e2 o2 e3 o3 | e6 o6 e7 o7
    lo = _mm256_permute2f128_ps(a, b, 0x20);
    hi = _mm256_permute2f128_ps(a, b, 0x31);
  }

  static V load_or(const float* p, M m, V fill) { return _mm256_blendv_ps(fill, load(p, m), m); }
  static V shift_in(V cur, V prev) {
    const __m256i rotate = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
    return _mm256_blend_ps(_mm256_permutevar8x32_ps(cur, rotate),
                           _mm256_permutevar8x32_ps(prev, rotate), 1);
  }
  static M equal(M where, V a, V b) { return _mm256_and_ps(where, equal(a, b)); }
  static M unordered(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }

  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }

  // An unordered compare, then best ordered.
  static M beats(V candidate, V best) {
    return _mm256_and_ps(_mm256_cmp_ps(candidate, best, _CMP_NLE_UQ),
                         _mm256_cmp_ps(best, best, _CMP_ORD_Q));
  }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static M greater(V candidate, V best) { return _mm256_cmp_ps(candidate, best, _CMP_GT_OQ); }
  static M greater(M where, V candidate, V best) {
    return _mm256_and_ps(where, _mm256_cmp_ps(candidate, best, _CMP_GT_OQ));
  }
  static M unordered(V v) { return _mm256_cmp_ps(v, v, _CMP_UNORD_Q); }
  static M equal(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  // MAXPS returns its second operand for equal values, signed zeros and NaN.
  static V max(V candidate, V best) { return _mm256_max_ps(candidate, best); }

  static I iota(std::int64_t base, std::int64_t step) {
    return _mm256_add_epi32(
        _mm256_set1_epi32(static_cast<std::int32_t>(base)),
        _mm256_mullo_epi32(iota8(), _mm256_set1_epi32(static_cast<std::int32_t>(step))));
  }
  static I add_i(I a, std::int64_t b) {
    return _mm256_add_epi32(a, _mm256_set1_epi32(static_cast<std::int32_t>(b)));
  }
  static I select_i(M m, I a, I b) {
    return _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m));
  }
  static M equal_i(M where, I a, I b) {
    return _mm256_and_ps(where, _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)));
  }
  static I load_i(const std::int32_t* p, M m) {
    return _mm256_maskload_epi32(p, _mm256_castps_si256(m));
  }
  static void store_i(std::int32_t* p, I v, M m) {
    _mm256_maskstore_epi32(p, _mm256_castps_si256(m), v);
  }
  static void store_index64(std::int64_t* p, I idx, std::int64_t base, M m) {
    const __m256i b = _mm256_set1_epi64x(base);
    const __m256i mi = _mm256_castps_si256(m);
    const __m256i lo = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(idx)), b);
    const __m256i hi = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(idx, 1)), b);
    _mm256_maskstore_epi64(reinterpret_cast<long long*>(p),
                           _mm256_cvtepi32_epi64(_mm256_castsi256_si128(mi)), lo);
    _mm256_maskstore_epi64(reinterpret_cast<long long*>(p + 4),
                           _mm256_cvtepi32_epi64(_mm256_extracti128_si256(mi, 1)), hi);
  }
  static float reduce_add(V v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
  }
};

}  // namespace nodeflow::fast::avx2

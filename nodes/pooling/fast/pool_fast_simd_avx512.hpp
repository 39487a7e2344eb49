#pragma once
// AVX-512 backend (16 float32 lanes, __mmask16 masks) of the fast pooling
// kernels: the LaneBackend of pool_fast_simd.hpp. Only pool_fast_avx512.cpp includes it, after switching the
// compiler's target to AVX-512; the CPU is checked before any of it runs.
#include <immintrin.h>

#include <cstdint>

#include "nodes/pooling/fast/pool_fast_simd.hpp"

namespace nodeflow::fast::avx512 {

struct Lanes : Float32Lanes {
  using V = __m512;
  using M = __mmask16;
  using I = __m512i;
  static constexpr std::int64_t N = 16;

  static M none() { return 0; }
  static M first_n(std::int64_t n) {
    return n >= 16 ? M(0xFFFF) : n <= 0 ? M(0) : M((1u << n) - 1u);
  }
  static M lanes(std::int64_t lo, std::int64_t hi) { return M(first_n(hi) & ~first_n(lo)); }
  // Mask arithmetic through the mask-register intrinsics, so the compiler
  // keeps masks in k registers instead of round trips through integer ones.
  static M mand(M a, M b) { return _kand_mask16(a, b); }
  static M mor(M a, M b) { return _kor_mask16(a, b); }
  static M mnot(M a) { return _knot_mask16(a); }
  static bool any(M m) { return m != 0; }

  static M from_bits(unsigned bits) { return static_cast<M>(bits); }
  static V zero() { return _mm512_setzero_ps(); }
  static V broadcast(float v) { return _mm512_set1_ps(v); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load(const float* p, M m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, V v, M m) { _mm512_mask_storeu_ps(p, m, v); }
  static V load_at(const float* x, std::int64_t off, M m) {
    return _mm512_maskz_loadu_ps(m, x + off);
  }
  static V load_even(const float* p, M m0, M m1) {
    const V a = _mm512_maskz_loadu_ps(m0, p);
    const V b = _mm512_maskz_loadu_ps(m1, p + 16);
    return _mm512_permutex2var_ps(
        a, _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), b);
  }
  static V load_strided(const float* x, std::int64_t off, std::int64_t stride, M m) {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, iota(off, stride), x, 4);
  }
  static void deinterleave(V a, V b, V& even, V& odd) {
    even = _mm512_permutex2var_ps(
        a, _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), b);
    odd = _mm512_permutex2var_ps(
        a, _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1), b);
  }
  static void interleave(V even, V odd, V& lo, V& hi) {
    lo = _mm512_permutex2var_ps(
        even, _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0), odd);
    hi = _mm512_permutex2var_ps(
        even, _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8), odd);
  }

  static V load_or(const float* p, M m, V fill) { return _mm512_mask_loadu_ps(fill, m, p); }
  static V shift_in(V cur, V prev) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(cur), _mm512_castps_si512(prev), 15));
  }
  static M equal(M where, V a, V b) { return _mm512_mask_cmp_ps_mask(where, a, b, _CMP_EQ_OQ); }
  static M unordered(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }

  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }

  // An unordered compare, then best ordered.
  static M beats(V candidate, V best) {
    return _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(best, best, _CMP_ORD_Q), candidate, best,
                                   _CMP_NLE_UQ);
  }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static M greater(V candidate, V best) { return _mm512_cmp_ps_mask(candidate, best, _CMP_GT_OQ); }
  static M greater(M where, V candidate, V best) {
    return _mm512_mask_cmp_ps_mask(where, candidate, best, _CMP_GT_OQ);
  }
  static M unordered(V v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q); }
  static M equal(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  // MAXPS returns its second operand for equal values, signed zeros and NaN.
  static V max(V candidate, V best) { return _mm512_max_ps(candidate, best); }

  static __m512i iota16() {
    return _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  }
  static I iota(std::int64_t base, std::int64_t step) {
    return _mm512_add_epi32(_mm512_set1_epi32(static_cast<std::int32_t>(base)),
                            _mm512_mullo_epi32(iota16(), _mm512_set1_epi32(static_cast<std::int32_t>(step))));
  }
  static I add_i(I a, std::int64_t b) {
    return _mm512_add_epi32(a, _mm512_set1_epi32(static_cast<std::int32_t>(b)));
  }
  static I select_i(M m, I a, I b) { return _mm512_mask_blend_epi32(m, b, a); }
  static M equal_i(M where, I a, I b) { return _mm512_mask_cmpeq_epi32_mask(where, a, b); }
  static I load_i(const std::int32_t* p, M m) { return _mm512_maskz_loadu_epi32(m, p); }
  static void store_i(std::int32_t* p, I v, M m) { _mm512_mask_storeu_epi32(p, m, v); }
  static void store_index64(std::int64_t* p, I idx, std::int64_t base, M m) {
    const __m512i b = _mm512_set1_epi64(base);
    const __m512i lo = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(idx)), b);
    const __m512i hi =
        _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(idx, 1)), b);
    _mm512_mask_storeu_epi64(p, static_cast<__mmask8>(m & 0xFF), lo);
    _mm512_mask_storeu_epi64(p + 8, static_cast<__mmask8>(m >> 8), hi);
  }
  static float reduce_add(V v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace nodeflow::fast::avx512

// The AVX-512 tiles of Transpose (nodes/shape/transpose_tiles.hpp), compiled
// for that instruction set by function attribute and chosen at run time; the
// ragged edges of a block (fewer than 16 rows or columns) go element by element.
#include "nodes/shape/transpose_tiles.hpp"

#include <cstddef>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nodeflow::transpose_tiles {

#if defined(__x86_64__)
namespace {

constexpr std::int64_t kTile = 16;
// Source rows the gradient's tile loop prefetches ahead: two tiles' worth
// covers the memory latency of its strided reads.
constexpr std::int64_t kPrefetchRows = 2 * kTile;

#define NODEFLOW_AVX512 __attribute__((target("avx512f")))
// GCC 12's AVX-512 headers start some intrinsics from a self-initialised
// variable and warn about it once inlined (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// r[k] holds 16 consecutive elements of source row k; afterwards r[i] holds
// element i of every row (the standard unpack / shuffle / 128-bit lane
// shuffle sequence, four rounds of 16 two-input shuffles).
NODEFLOW_AVX512 inline void transpose16(__m512 r[kTile]) {
  __m512 t[kTile];
  for (int k = 0; k < kTile; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < kTile; k += 4) {
    r[k] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < kTile; k += 8)
    for (int q = 0; q < 4; ++q) {
      t[k + q] = _mm512_shuffle_f32x4(r[k + q], r[k + q + 4], 0x88);
      t[k + q + 4] = _mm512_shuffle_f32x4(r[k + q], r[k + q + 4], 0xdd);
    }
  for (int q = 0; q < 8; ++q) {
    r[q] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0x88);
    r[q + 8] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0xdd);
  }
}

template <bool Stream>
NODEFLOW_AVX512 void copy_tiles(const float* src, std::int64_t src_ld, float* dst, std::int64_t dst_ld,
                                std::int64_t rows, std::int64_t cols) {
  for (std::int64_t j = 0; j < cols; j += kTile)
    for (std::int64_t i = 0; i < rows; i += kTile) {
      __m512 r[kTile];
      for (int k = 0; k < kTile; ++k) r[k] = _mm512_loadu_ps(src + (j + k) * src_ld + i);
      transpose16(r);
      for (int k = 0; k < kTile; ++k) {
        float* d = dst + (i + k) * dst_ld + j;
        // A streaming store needs a 64-byte aligned line; others fall back.
        if (Stream && reinterpret_cast<std::uintptr_t>(d) % 64 == 0)
          _mm512_stream_ps(d, r[k]);
        else
          _mm512_storeu_ps(d, r[k]);
      }
    }
  if (Stream) _mm_sfence();
}

NODEFLOW_AVX512 void add_tiles(const float* src, std::int64_t src_ld, float* dst, std::int64_t dst_ld,
                               std::int64_t rows, std::int64_t cols, float scale) {
  const __m512 k_scale = _mm512_set1_ps(scale);
  for (std::int64_t i = 0; i < rows; i += kTile)
    for (std::int64_t j = 0; j < cols; j += kTile) {
      __m512 r[kTile];
      for (int k = 0; k < kTile; ++k) {
        if (j + k + kPrefetchRows < cols)
          _mm_prefetch(reinterpret_cast<const char*>(src + (j + k + kPrefetchRows) * src_ld + i), _MM_HINT_T0);
        r[k] = _mm512_loadu_ps(src + (j + k) * src_ld + i);
      }
      transpose16(r);
      for (int k = 0; k < kTile; ++k) {
        float* d = dst + (i + k) * dst_ld + j;
        // mul then add as two instructions (their built-ins are not contracted).
        const __m512 product = _mm512_mul_round_ps(r[k], k_scale, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm512_storeu_ps(d, _mm512_add_round_ps(_mm512_loadu_ps(d), product,
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
    }
}

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef NODEFLOW_AVX512

// The part of [0, rows) x [0, cols) outside the whole tiles, element by element.
template <typename T, typename Op>
void edges(const T* src, std::int64_t src_ld, T* dst, std::int64_t dst_ld, std::int64_t rows, std::int64_t cols,
           Op op) {
  const std::int64_t full_rows = rows / kTile * kTile, full_cols = cols / kTile * kTile;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = i < full_rows ? full_cols : 0; j < cols; ++j) op(dst[i * dst_ld + j], src[j * src_ld + i]);
}

}  // namespace

bool available() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

void copy(const std::uint32_t* src, std::int64_t src_ld, std::uint32_t* dst, std::int64_t dst_ld,
          std::int64_t rows, std::int64_t cols, bool stream) {
  // 4-byte elements travel as float lanes: loads, shuffles and stores move bits unchanged.
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  const std::int64_t full_rows = rows / kTile * kTile, full_cols = cols / kTile * kTile;
  if (stream)
    copy_tiles<true>(s, src_ld, d, dst_ld, full_rows, full_cols);
  else
    copy_tiles<false>(s, src_ld, d, dst_ld, full_rows, full_cols);
  edges(src, src_ld, dst, dst_ld, rows, cols, [](std::uint32_t& o, std::uint32_t v) { o = v; });
}

void add(const float* src, std::int64_t src_ld, float* dst, std::int64_t dst_ld, std::int64_t rows,
         std::int64_t cols, float scale) {
  add_tiles(src, src_ld, dst, dst_ld, rows / kTile * kTile, cols / kTile * kTile, scale);
  edges(src, src_ld, dst, dst_ld, rows, cols, [scale](float& o, float v) { o = o + scale * v; });
}

#else

bool available() { return false; }
void copy(const std::uint32_t*, std::int64_t, std::uint32_t*, std::int64_t, std::int64_t, std::int64_t, bool) {}
void add(const float*, std::int64_t, float*, std::int64_t, std::int64_t, std::int64_t, float) {}

#endif

}  // namespace nodeflow::transpose_tiles

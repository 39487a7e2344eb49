// The loops of nodes/common/stream_lines.hpp: plain stores up to the first
// 16-byte boundary of dst, then non-temporal SSE2 stores (x86-64's baseline:
// the CPU's write-combining buffers join four of them into one 64-byte line,
// and the loop is bound by memory, not by the width of its stores), then
// plain stores for the tail.
#include "nodes/common/stream_lines.hpp"

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nodeflow::stream_lines {

#if defined(__x86_64__)
namespace {

// Elements before dst + i is 16-byte aligned (n if it never is).
template <typename T> std::int64_t head_of(const T* dst, std::int64_t n) {
  const auto misaligned = reinterpret_cast<std::uintptr_t>(dst) % 16;
  if (misaligned % sizeof(T) != 0) return n;
  const auto head = static_cast<std::int64_t>(misaligned == 0 ? 0 : (16 - misaligned) / sizeof(T));
  return head < n ? head : n;
}

}  // namespace

void write_scaled(float* dst, const float* src, float k, std::int64_t n) {
  std::int64_t i = 0;
  for (const std::int64_t head = head_of(dst, n); i < head; ++i) dst[i] = k * src[i];
  const __m128 kv = _mm_set1_ps(k);
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_mul_ps(kv, _mm_loadu_ps(src + i)));
  for (; i < n; ++i) dst[i] = k * src[i];
  _mm_sfence();
}

void write_scaled(double* dst, const double* src, double k, std::int64_t n) {
  std::int64_t i = 0;
  for (const std::int64_t head = head_of(dst, n); i < head; ++i) dst[i] = k * src[i];
  const __m128d kv = _mm_set1_pd(k);
  for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_mul_pd(kv, _mm_loadu_pd(src + i)));
  for (; i < n; ++i) dst[i] = k * src[i];
  _mm_sfence();
}

void write_fill(float* dst, float v, std::int64_t n) {
  std::int64_t i = 0;
  for (const std::int64_t head = head_of(dst, n); i < head; ++i) dst[i] = v;
  const __m128 vv = _mm_set1_ps(v);
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, vv);
  for (; i < n; ++i) dst[i] = v;
  _mm_sfence();
}

void write_fill(double* dst, double v, std::int64_t n) {
  std::int64_t i = 0;
  for (const std::int64_t head = head_of(dst, n); i < head; ++i) dst[i] = v;
  const __m128d vv = _mm_set1_pd(v);
  for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, vv);
  for (; i < n; ++i) dst[i] = v;
  _mm_sfence();
}
#else
void write_scaled(float* dst, const float* src, float k, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = k * src[i];
}
void write_scaled(double* dst, const double* src, double k, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = k * src[i];
}
void write_fill(float* dst, float v, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = v;
}
void write_fill(double* dst, double v, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = v;
}
#endif

}  // namespace nodeflow::stream_lines

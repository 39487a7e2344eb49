// The loops of nodes/common/stream_lines.hpp: plain stores up to the first
// 16-byte boundary of dst, then non-temporal SSE2 stores (x86-64's baseline:
// the CPU's write-combining buffers join four of them into one 64-byte line,
// and the loop is bound by memory, not by the width of its stores), then
// plain stores for the tail.
#include "nodes/common/stream_lines.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nodeflow::stream_lines {
namespace {

#if defined(__x86_64__)
// The SSE2 register of T and its operations.
template <typename T> struct Sse;
template <> struct Sse<float> {
  using V = __m128;
  static constexpr std::int64_t kLanes = 4;
  static V set1(float v) { return _mm_set1_ps(v); }
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  static void stream(float* p, V v) { _mm_stream_ps(p, v); }
};
template <> struct Sse<double> {
  using V = __m128d;
  static constexpr std::int64_t kLanes = 2;
  static V set1(double v) { return _mm_set1_pd(v); }
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static V mul(V a, V b) { return _mm_mul_pd(a, b); }
  static void stream(double* p, V v) { _mm_stream_pd(p, v); }
};

// dst[i] = one(i) for i < n, lanes(i) giving dst[i, i + kLanes) where dst + i
// is 16-byte aligned (never, if dst is not aligned to T).
template <typename T, typename One, typename Lanes> void write(T* dst, std::int64_t n, One one, Lanes lanes) {
  using S = Sse<T>;
  const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(dst) % 16);
  constexpr auto kSize = static_cast<std::int64_t>(sizeof(T));
  const std::int64_t head = misaligned % kSize != 0 ? n : std::min(n, (16 - misaligned) % 16 / kSize);
  std::int64_t i = 0;
  for (; i < head; ++i) dst[i] = one(i);
  for (; i + S::kLanes <= n; i += S::kLanes) S::stream(dst + i, lanes(i));
  for (; i < n; ++i) dst[i] = one(i);
  _mm_sfence();
}

template <typename T> void scaled(T* dst, const T* src, T k, std::int64_t n) {
  const auto kv = Sse<T>::set1(k);
  write(dst, n, [&](std::int64_t i) { return k * src[i]; },
        [&](std::int64_t i) { return Sse<T>::mul(kv, Sse<T>::load(src + i)); });
}

template <typename T> void fill(T* dst, T v, std::int64_t n) {
  const auto vv = Sse<T>::set1(v);
  write(dst, n, [&](std::int64_t) { return v; }, [&](std::int64_t) { return vv; });
}
#else
template <typename T> void scaled(T* dst, const T* src, T k, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = k * src[i];
}
template <typename T> void fill(T* dst, T v, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = v;
}
#endif

std::size_t machine_stream_bytes() {
  constexpr std::size_t kFallback = std::size_t{16} << 20;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc > 0) return std::max(kFallback, static_cast<std::size_t>(llc) / 2);
#endif
  return kFallback;
}

std::atomic<std::size_t> chosen_stream_bytes{0};

}  // namespace

std::size_t stream_bytes() {
  static const std::size_t machine = machine_stream_bytes();
  const std::size_t chosen = chosen_stream_bytes.load(std::memory_order_relaxed);
  return chosen != 0 ? chosen : machine;
}

void set_stream_bytes(std::size_t bytes) { chosen_stream_bytes.store(bytes, std::memory_order_relaxed); }

void write_scaled(float* dst, const float* src, float k, std::int64_t n) { scaled(dst, src, k, n); }
void write_scaled(double* dst, const double* src, double k, std::int64_t n) { scaled(dst, src, k, n); }
void write_fill(float* dst, float v, std::int64_t n) { fill(dst, v, n); }
void write_fill(double* dst, double v, std::int64_t n) { fill(dst, v, n); }

}  // namespace nodeflow::stream_lines

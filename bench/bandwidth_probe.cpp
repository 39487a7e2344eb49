// The bandwidth probe (bench/bandwidth_probe.hpp), built with OpenMP.
#include "bench/bandwidth_probe.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nodeflow::bench {

void AlignedFree::operator()(float* p) const { std::free(p); }

Buffer allocate(std::size_t bytes) {
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, rounded));
  std::memset(p, 0, rounded);
  return Buffer(p);
}

std::size_t Traffic::bytes() const {
  std::size_t n = 0;
  for (auto v : reads) n += v;
  for (auto v : writes) n += v;
  for (auto v : updates) n += 2 * v;
  return 4 * n;
}

namespace {

volatile float probe_sink;

// [begin, end) of `n` for thread t of T, in whole 64-byte lines.
void share(std::size_t n, int t, int threads, std::size_t& begin, std::size_t& end) {
  const std::size_t lines = (n + 15) / 16;
  begin = std::min(n, lines * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads) * 16);
  end = std::min(n, lines * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads) * 16);
}

#if defined(__x86_64__)
// GCC 12's AVX-512 headers start some intrinsics from a self-initialised
// variable and warn about it once inlined (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f"))) void probe_avx512(const Probe& p, int t, int threads) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t b = 0, e = 0;
  for (std::size_t k = 0; k < p.reads.size(); ++k) {
    share(p.read_n[k], t, threads, b, e);
    const float* r = p.reads[k].get();
    std::size_t i = b;
    for (; i + 64 <= e; i += 64) {
      a0 = _mm512_or_si512(a0, _mm512_load_si512(r + i));
      a1 = _mm512_or_si512(a1, _mm512_load_si512(r + i + 16));
      a2 = _mm512_or_si512(a2, _mm512_load_si512(r + i + 32));
      a3 = _mm512_or_si512(a3, _mm512_load_si512(r + i + 48));
    }
    for (; i < e; i += 16)
      a0 = _mm512_or_si512(a0, _mm512_maskz_loadu_epi32(
                                   static_cast<__mmask16>((1u << std::min<std::size_t>(16, e - i)) - 1u), r + i));
  }
  const __m512 one = _mm512_set1_ps(1.0f);
  for (std::size_t k = 0; k < p.writes.size(); ++k) {
    share(p.write_n[k], t, threads, b, e);
    float* w = p.writes[k].get();
    for (std::size_t i = b; i < e; i += 16) _mm512_store_ps(w + i, one);
  }
  for (std::size_t k = 0; k < p.updates.size(); ++k) {
    share(p.update_n[k], t, threads, b, e);
    float* u = p.updates[k].get();
    for (std::size_t i = b; i < e; i += 16)
      _mm512_store_ps(u + i, _mm512_add_ps(_mm512_load_ps(u + i), one));
  }
  const __m512i all = _mm512_or_si512(_mm512_or_si512(a0, a1), _mm512_or_si512(a2, a3));
  probe_sink = static_cast<float>(_mm512_reduce_or_epi32(all));
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

void probe_portable(const Probe& p, int t, int threads) {
  std::uint32_t acc = 0;
  std::size_t b = 0, e = 0;
  for (std::size_t k = 0; k < p.reads.size(); ++k) {
    share(p.read_n[k], t, threads, b, e);
    const auto* r = reinterpret_cast<const std::uint32_t*>(p.reads[k].get());
    for (std::size_t i = b; i < e; ++i) acc |= r[i];
  }
  for (std::size_t k = 0; k < p.writes.size(); ++k) {
    share(p.write_n[k], t, threads, b, e);
    std::fill(p.writes[k].get() + b, p.writes[k].get() + e, 1.0f);
  }
  for (std::size_t k = 0; k < p.updates.size(); ++k) {
    share(p.update_n[k], t, threads, b, e);
    for (std::size_t i = b; i < e; ++i) p.updates[k][i] += 1.0f;
  }
  probe_sink = static_cast<float>(acc);
}

}  // namespace

void run_probe(const Probe& p, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f"))
      probe_avx512(p, t, n);
    else
#endif
      probe_portable(p, t, n);
  }
}

Probe make_probe(const Traffic& t) {
  Probe p;
  for (auto n : t.reads) {
    p.reads.push_back(allocate(4 * n));
    p.read_n.push_back(n);
  }
  for (auto n : t.writes) {
    p.writes.push_back(allocate(4 * n));
    p.write_n.push_back(n);
  }
  for (auto n : t.updates) {
    p.updates.push_back(allocate(4 * n));
    p.update_n.push_back(n);
  }
  return p;
}
}  // namespace nodeflow::bench

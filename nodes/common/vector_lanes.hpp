#pragma once
// Sixteen lanes of T as one GCC vector (one AVX-512 register of floats, two
// AVX2 ones): the fixed-order partial sums and row loops of
// BatchNormalization, the normalize_rows loops, the reduction line loops and
// the elementwise gradients' loops (gradient_lanes.hpp).
// The order of every float sum is fixed by the source that uses them,
// whatever width the compiler maps the lanes to.
//
// The helpers taking and giving such vectors are always inlined, so the ABI of
// passing them, which GCC and clang warn would differ between instruction
// sets, never comes into play. GCC reports that warning where the templates
// are instantiated, often at the end of the including file, so it is turned
// off for the rest of any file that includes this header (only the .cpp files
// named above do).
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#pragma GCC diagnostic ignored "-Wpsabi"

namespace nodeflow::lanes {

constexpr std::int64_t kLanes = 16;
template <typename T> struct LanesOf {
  typedef T type __attribute__((vector_size(kLanes * sizeof(T))));
};
template <typename T> using Lanes = typename LanesOf<T>::type;

template <typename T> [[gnu::always_inline]] inline Lanes<T> load_lanes(const T* p) {
  Lanes<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T> [[gnu::always_inline]] inline void store_lanes(T* p, const Lanes<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

// Stores v at p, 16-byte aligned, with non-temporal stores where the target
// has them (x86-64's SSE2 ones: the write-combining buffers join four into
// one 64-byte line), plain ones elsewhere; store_fence() orders them before
// the thread's later stores.
template <typename T> [[gnu::always_inline]] inline void stream_lanes(T* p, const Lanes<T>& v) {
#if defined(__x86_64__)
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr std::int64_t kPerStore = 16 / sizeof(T);
  for (std::int64_t q = 0; q < kLanes; q += kPerStore) {
    if constexpr (std::is_same_v<T, float>) {
      __m128 w;
      std::memcpy(&w, reinterpret_cast<const char*>(&v) + q * sizeof(T), sizeof w);
      _mm_stream_ps(p + q, w);
    } else {
      __m128d w;
      std::memcpy(&w, reinterpret_cast<const char*>(&v) + q * sizeof(T), sizeof w);
      _mm_stream_pd(p + q, w);
    }
  }
#else
  store_lanes(p, v);
#endif
}
inline void store_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// 2: AVX-512F, 1: AVX2, 0: the baseline: the widest of the lane loops'
// clones (NODEFLOW_LANES_CLONES) this CPU runs.
inline int clone_isa() {
#if defined(__x86_64__)
  static const int isa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return isa;
#else
  return 0;
#endif
}

}  // namespace nodeflow::lanes

// A file's lane loops compiled for the baseline, AVX2 and AVX-512F, and the
// pick of the widest the CPU runs at run time (an explicit choice rather than
// target_clones: an ifunc resolver runs before the sanitizers' runtime is up).
// DEFINE(T, SUFFIX, ATTRIBUTES) defines the functions NAME_T##SUFFIX for float
// and double; NODEFLOW_LANES_PICK(NAME_T) names the one to call. A file using
// them is compiled with -ffp-contract=off (CMakeLists.txt): AVX-512F and AVX2
// have fused multiply-adds, and without them every clone gives the same bits.
#if defined(__x86_64__)
#define NODEFLOW_LANES_CLONES(DEFINE)                                                            \
  DEFINE(float, _base, ) DEFINE(double, _base, ) DEFINE(float, _avx2, __attribute__((target("avx2")))) \
  DEFINE(double, _avx2, __attribute__((target("avx2"))))                                         \
  DEFINE(float, _avx512, __attribute__((target("avx512f"))))                                    \
  DEFINE(double, _avx512, __attribute__((target("avx512f"))))
#define NODEFLOW_LANES_PICK(name)                                                  \
  (::nodeflow::lanes::clone_isa() == 2   ? name##_avx512                           \
   : ::nodeflow::lanes::clone_isa() == 1 ? name##_avx2                             \
                                         : name##_base)
#else
#define NODEFLOW_LANES_CLONES(DEFINE) DEFINE(float, _base, ) DEFINE(double, _base, )
#define NODEFLOW_LANES_PICK(name) name##_base
#endif

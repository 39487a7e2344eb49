#pragma once
// Sixteen lanes of T as one GCC vector (one AVX-512 register of floats, two
// AVX2 ones): the fixed-order partial sums and row loops of
// BatchNormalization, the normalize_rows loops and the reduction line loops.
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

}  // namespace nodeflow::lanes

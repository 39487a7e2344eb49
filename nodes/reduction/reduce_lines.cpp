// The line loops of nodes/reduction/reduce_lines.hpp: one template over GCC
// vectors of 16 lanes (one AVX-512 register of floats), instantiated once per
// instruction set by function attribute, chosen at run time (an explicit
// choice rather than target_clones: an ifunc resolver runs before the
// sanitizers' runtime is up).
#include "nodes/reduction/reduce_lines.hpp"

#include <algorithm>
#include <cstring>

#include "nodes/common/vector_lanes.hpp"

namespace nodeflow::reduce_lines {
namespace {

using lanes::kLanes;
using lanes::Lanes;
using lanes::load_lanes;
using lanes::store_lanes;

#pragma GCC diagnostic push
// Half a vector, for the tails: a row of 56 (the last axis of a 56x56 image)
// is three whole vectors and one half.
constexpr std::int64_t kHalf = kLanes / 2;
template <typename T> struct HalfOf {
  typedef T type __attribute__((vector_size(kHalf * sizeof(T))));
};
template <typename T> using Half = typename HalfOf<T>::type;
template <typename T> [[gnu::always_inline]] inline Half<T> load_half(const T* p) {
  Half<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T> [[gnu::always_inline]] inline void store_half(T* p, const Half<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

template <typename T> [[gnu::always_inline]] inline void add_lines(T* acc, const T* x, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) store_lanes(acc + j, load_lanes(acc + j) + load_lanes(x + j));
  if (j + kHalf <= n) {
    store_half(acc + j, load_half(acc + j) + load_half(x + j));
    j += kHalf;
  }
  for (; j < n; ++j) acc[j] = acc[j] + x[j];
}

// `Count` lines into acc, a compile-time count so that the sum stays in
// registers (with a run-time count GCC kept it on the stack).
template <std::int64_t Count, typename T>
[[gnu::always_inline]] inline void add_counted_lines(T* acc, const T* x, std::int64_t stride, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Lanes<T> a = load_lanes(acc + j);
    for (std::int64_t c = 0; c < Count; ++c) a += load_lanes(x + c * stride + j);
    store_lanes(acc + j, a);
  }
  if (j + kHalf <= n) {
    Half<T> a = load_half(acc + j);
    for (std::int64_t c = 0; c < Count; ++c) a += load_half(x + c * stride + j);
    store_half(acc + j, a);
    j += kHalf;
  }
  for (; j < n; ++j) {
    T a = acc[j];
    for (std::int64_t c = 0; c < Count; ++c) a = a + x[c * stride + j];
    acc[j] = a;
  }
}

template <typename T>
[[gnu::always_inline]] inline void add_strided_lines(T* acc, const T* x, std::int64_t stride, std::int64_t count,
                                                     std::int64_t n) {
  for (; count >= 4; count -= 4, x += 4 * stride) add_counted_lines<4>(acc, x, stride, n);
  switch (count) {
    case 3: add_counted_lines<3>(acc, x, stride, n); break;
    case 2: add_counted_lines<2>(acc, x, stride, n); break;
    case 1: add_counted_lines<1>(acc, x, stride, n); break;
    default: break;
  }
}

template <typename T> [[gnu::always_inline]] inline void add_scalar_lines(T* acc, T v, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) store_lanes(acc + j, load_lanes(acc + j) + v);
  if (j + kHalf <= n) {
    store_half(acc + j, load_half(acc + j) + v);
    j += kHalf;
  }
  for (; j < n; ++j) acc[j] = acc[j] + v;
}

template <typename T> [[gnu::always_inline]] inline void divide_lines(T* y, T d, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) store_lanes(y + j, load_lanes(y + j) / d);
  for (; j < n; ++j) y[j] = y[j] / d;
}

// Eight lanes of T: sum_rows's order, whatever the vector width.
template <typename T> struct EightOf {
  typedef T type __attribute__((vector_size(8 * sizeof(T))));
};
template <typename T> using Eight = typename EightOf<T>::type;
template <typename T> struct FourOf {
  typedef T type __attribute__((vector_size(4 * sizeof(T))));
};
template <typename T> using Four = typename FourOf<T>::type;

template <typename T> [[gnu::always_inline]] inline Eight<T> load_eight(const T* p) {
  Eight<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
template <typename T> [[gnu::always_inline]] inline T join_lanes(const Eight<T>& lanes) {
  Four<T> lo, hi;
  std::memcpy(&lo, &lanes, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&lanes) + sizeof lo, sizeof hi);
  const Four<T> h = lo + hi;
  return (h[0] + h[2]) + (h[1] + h[3]);
}

// join_lanes of eight rows' lanes at once, lane r of the result row r's:
// the same adds, the lanes of two, four, then eight rows side by side in one
// vector, rather than each row's through the stack.
template <typename T> [[gnu::always_inline]] inline Eight<T> join_eight_rows(const Eight<T> (&lanes)[8]) {
  // Lane l + 4 to lane l, rows 2k and 2k + 1 side by side: [h(2k), h(2k + 1)].
  Eight<T> h[4];
  for (int k = 0; k < 4; ++k)
    h[k] = __builtin_shufflevector(lanes[2 * k], lanes[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(lanes[2 * k], lanes[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  // h0 + h2 and h1 + h3 of rows 4k .. 4k + 3.
  Eight<T> q[2];
  for (int k = 0; k < 2; ++k)
    q[k] = __builtin_shufflevector(h[2 * k], h[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13) +
           __builtin_shufflevector(h[2 * k], h[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15);
  return __builtin_shufflevector(q[0], q[1], 0, 2, 4, 6, 8, 10, 12, 14) +
         __builtin_shufflevector(q[0], q[1], 1, 3, 5, 7, 9, 11, 13, 15);
}

// `Count` rows at once, their lanes in registers, their sums joined by
// join_eight_rows when there are eight. The loads go through the rows two at
// a time: on this project's AVX-512 machine (one core, rows of 56 of a
// 16x256x56x56 map), loads interleaved over four rows took 1.3-1.9x a pair's
// time from memory and 1.05-1.15x from cache.
template <std::int64_t Count, typename T>
[[gnu::always_inline]] inline void sum_counted_rows(const T* x, T* y, std::int64_t n) {
  static_assert(Count == 1 || Count % 2 == 0);
  Eight<T> lanes[Count] = {};
  const std::int64_t whole = n - n % 8;
  for (std::int64_t r = 0; r < Count; r += 2)
    for (std::int64_t j = 0; j < whole; j += 8) {
      lanes[r] += load_eight(x + r * n + j);
      if constexpr (Count > 1) lanes[r + 1] += load_eight(x + (r + 1) * n + j);
    }
  T sums[Count];
  if constexpr (Count == 8) {
    const Eight<T> joined = join_eight_rows<T>(lanes);
    std::memcpy(sums, &joined, sizeof sums);
  } else {
    for (std::int64_t r = 0; r < Count; ++r) sums[r] = join_lanes<T>(lanes[r]);
  }
  if (whole == n) {
    std::memcpy(y, sums, sizeof sums);
    return;
  }
  for (std::int64_t r = 0; r < Count; ++r) {
    T sum = sums[r];
    for (std::int64_t k = whole; k < n; ++k) sum += x[r * n + k];
    y[r] = sum;
  }
}

// reduce_lines::sum's order over the n elements that eights(j) gives eight
// at a time from j and one(j) one at a time: blocks of kSumBlock, each in
// eight sets of eight lanes.
template <typename T, typename Eights, typename One>
[[gnu::always_inline]] inline T sum_blocks(std::int64_t n, Eights&& eights, One&& one) {
  constexpr int kSets = 8;
  T total = 0;
  for (std::int64_t b = 0; b < n; b += kSumBlock) {
    const std::int64_t end = std::min(n, b + kSumBlock);
    Eight<T> sets[kSets] = {};
    std::int64_t j = b;
    for (; j + 8 * kSets <= end; j += 8 * kSets)
      for (int s = 0; s < kSets; ++s) sets[s] += eights(j + 8 * s);
    for (int s = 0; j + 8 <= end; j += 8, ++s) sets[s] += eights(j);
    const Eight<T> joined =
        ((sets[0] + sets[1]) + (sets[2] + sets[3])) + ((sets[4] + sets[5]) + (sets[6] + sets[7]));
    T block = join_lanes<T>(joined);
    for (; j < end; ++j) block += one(j);
    total += block;
  }
  return total;
}

template <typename T> [[gnu::always_inline]] inline T sum_line(const T* x, std::int64_t n) {
  return sum_blocks<T>(n, [x](std::int64_t j) { return load_eight(x + j); }, [x](std::int64_t j) { return x[j]; });
}

// Each product rounded, then summed: the bits of sum_line over the products.
template <typename T> [[gnu::always_inline]] inline T dot_line(const T* x, const T* y, std::int64_t n) {
  return sum_blocks<T>(
      n, [x, y](std::int64_t j) { return load_eight(x + j) * load_eight(y + j); },
      [x, y](std::int64_t j) { return x[j] * y[j]; });
}

template <typename T> [[gnu::always_inline]] inline void store_eight(T* p, const Eight<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

// dot_line's sum, and d written from the same loads of g.
template <bool kAssign, typename T>
[[gnu::always_inline]] inline T scaled_dot_line(T* d, T k, T b, const T* g, const T* x, std::int64_t n) {
  return sum_blocks<T>(
      n,
      [=](std::int64_t j) {
        const Eight<T> gj = load_eight(g + j);
        if constexpr (kAssign)
          store_eight(d + j, k * (gj * b));
        else
          store_eight(d + j, load_eight(d + j) + k * (gj * b));
        return gj * load_eight(x + j);
      },
      [=](std::int64_t j) {
        d[j] = kAssign ? k * (g[j] * b) : d[j] + k * (g[j] * b);
        return g[j] * x[j];
      });
}

template <typename T>
[[gnu::always_inline]] inline void sum_row_block(const T* x, T* y, std::int64_t rows, std::int64_t n) {
  std::int64_t r = 0;
  for (; r + 8 <= rows; r += 8) sum_counted_rows<8>(x + r * n, y + r, n);
  for (; r + 2 <= rows; r += 2) sum_counted_rows<2>(x + r * n, y + r, n);
  for (; r < rows; ++r) sum_counted_rows<1>(x + r * n, y + r, n);
}

template <typename T>
[[gnu::always_inline]] inline void fill_row_block(T* x, const T* v, std::int64_t rows, std::int64_t n) {
  for (std::int64_t r = 0; r < rows; ++r, x += n) {
    const T value = v[r];
    // value - 0 is value, -0 included (value + 0 would turn -0 into +0).
    const Lanes<T> all = value - Lanes<T>{};
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) store_lanes(x + j, all);
    if (j + kHalf <= n) {
      store_half(x + j, value - Half<T>{});
      j += kHalf;
    }
    for (; j < n; ++j) x[j] = value;
  }
}

#define NODEFLOW_LINES(T, SUFFIX, ...)                                                                         \
  __VA_ARGS__ void add_##T##SUFFIX(T* acc, const T* x, std::int64_t n) { add_lines(acc, x, n); }              \
  __VA_ARGS__ void add_lines_##T##SUFFIX(T* acc, const T* x, std::int64_t stride, std::int64_t count,         \
                                         std::int64_t n) {                                                    \
    add_strided_lines(acc, x, stride, count, n);                                                              \
  }                                                                                                            \
  __VA_ARGS__ void add_scalar_##T##SUFFIX(T* acc, T v, std::int64_t n) { add_scalar_lines(acc, v, n); }      \
  __VA_ARGS__ void divide_##T##SUFFIX(T* y, T d, std::int64_t n) { divide_lines(y, d, n); }                   \
  __VA_ARGS__ void sum_rows_##T##SUFFIX(const T* x, T* y, std::int64_t rows, std::int64_t n) {               \
    sum_row_block(x, y, rows, n);                                                                              \
  }                                                                                                            \
  __VA_ARGS__ T sum_##T##SUFFIX(const T* x, std::int64_t n) { return sum_line(x, n); }                         \
  __VA_ARGS__ T dot_##T##SUFFIX(const T* x, const T* y, std::int64_t n) { return dot_line(x, y, n); }          \
  __VA_ARGS__ T scale_and_dot_##T##SUFFIX(T* d, bool assign, T k, T b, const T* g, const T* x, std::int64_t n) { \
    return assign ? scaled_dot_line<true>(d, k, b, g, x, n) : scaled_dot_line<false>(d, k, b, g, x, n);        \
  }                                                                                                            \
  __VA_ARGS__ void fill_rows_##T##SUFFIX(T* x, const T* v, std::int64_t rows, std::int64_t n) {              \
    fill_row_block(x, v, rows, n);                                                                             \
  }
NODEFLOW_LANES_CLONES(NODEFLOW_LINES)
#pragma GCC diagnostic pop

}  // namespace

void add(float* acc, const float* x, std::int64_t n) { NODEFLOW_LANES_PICK(add_float)(acc, x, n); }
void add(double* acc, const double* x, std::int64_t n) { NODEFLOW_LANES_PICK(add_double)(acc, x, n); }
void add_lines(float* acc, const float* x, std::int64_t stride, std::int64_t count, std::int64_t n) {
  NODEFLOW_LANES_PICK(add_lines_float)(acc, x, stride, count, n);
}
void add_lines(double* acc, const double* x, std::int64_t stride, std::int64_t count, std::int64_t n) {
  NODEFLOW_LANES_PICK(add_lines_double)(acc, x, stride, count, n);
}
void add_scalar(float* acc, float v, std::int64_t n) { NODEFLOW_LANES_PICK(add_scalar_float)(acc, v, n); }
void add_scalar(double* acc, double v, std::int64_t n) { NODEFLOW_LANES_PICK(add_scalar_double)(acc, v, n); }
void divide(float* y, float d, std::int64_t n) { NODEFLOW_LANES_PICK(divide_float)(y, d, n); }
void divide(double* y, double d, std::int64_t n) { NODEFLOW_LANES_PICK(divide_double)(y, d, n); }

float sum(const float* x, std::int64_t n) { return NODEFLOW_LANES_PICK(sum_float)(x, n); }
double sum(const double* x, std::int64_t n) { return NODEFLOW_LANES_PICK(sum_double)(x, n); }
float dot(const float* x, const float* y, std::int64_t n) { return NODEFLOW_LANES_PICK(dot_float)(x, y, n); }
double dot(const double* x, const double* y, std::int64_t n) { return NODEFLOW_LANES_PICK(dot_double)(x, y, n); }
float scale_and_dot(float* d, bool assign, float k, float b, const float* g, const float* x, std::int64_t n) {
  return NODEFLOW_LANES_PICK(scale_and_dot_float)(d, assign, k, b, g, x, n);
}
double scale_and_dot(double* d, bool assign, double k, double b, const double* g, const double* x, std::int64_t n) {
  return NODEFLOW_LANES_PICK(scale_and_dot_double)(d, assign, k, b, g, x, n);
}
void sum_rows(const float* x, float* y, std::int64_t rows, std::int64_t n) {
  NODEFLOW_LANES_PICK(sum_rows_float)(x, y, rows, n);
}
void sum_rows(const double* x, double* y, std::int64_t rows, std::int64_t n) {
  NODEFLOW_LANES_PICK(sum_rows_double)(x, y, rows, n);
}
void fill_rows(float* x, const float* v, std::int64_t rows, std::int64_t n) {
  NODEFLOW_LANES_PICK(fill_rows_float)(x, v, rows, n);
}
void fill_rows(double* x, const double* v, std::int64_t rows, std::int64_t n) {
  NODEFLOW_LANES_PICK(fill_rows_double)(x, v, rows, n);
}

#undef NODEFLOW_LINES

}  // namespace nodeflow::reduce_lines

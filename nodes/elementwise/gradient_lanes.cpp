#include "nodes/elementwise/gradient_lanes.hpp"

#include "nodes/common/vector_lanes.hpp"

namespace nodeflow::gradient_lanes {
namespace {

template <typename T> [[gnu::always_inline]] inline void copy_lanes_to_two(T* d0, T* d1, const T* s, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + lanes::kLanes <= n; j += lanes::kLanes) {
    const lanes::Lanes<T> v = lanes::load_lanes(s + j);
    lanes::store_lanes(d0 + j, v);
    lanes::store_lanes(d1 + j, v);
  }
  for (; j < n; ++j) d0[j] = d1[j] = s[j];
}

// One gradient's vector or element is stored before the other's is loaded:
// both are one buffer for Mul(t, t), and then each adds its product in turn.
template <bool kAssign0, bool kAssign1, typename T>
[[gnu::always_inline]] inline void product_lanes(const Product<T>& p0, const Product<T>& p1, const T* g,
                                                 std::int64_t n) {
  std::int64_t j = 0;
  for (; j + lanes::kLanes <= n; j += lanes::kLanes) {
    const lanes::Lanes<T> v = lanes::load_lanes(g + j);
    const lanes::Lanes<T> v0 = p0.k * (v * lanes::load_lanes(p0.x + j));
    lanes::store_lanes(p0.d + j, kAssign0 ? v0 : lanes::load_lanes(p0.d + j) + v0);
    const lanes::Lanes<T> v1 = p1.k * (v * lanes::load_lanes(p1.x + j));
    lanes::store_lanes(p1.d + j, kAssign1 ? v1 : lanes::load_lanes(p1.d + j) + v1);
  }
  for (; j < n; ++j) {
    const T v0 = p0.k * (g[j] * p0.x[j]);
    p0.d[j] = kAssign0 ? v0 : p0.d[j] + v0;
    const T v1 = p1.k * (g[j] * p1.x[j]);
    p1.d[j] = kAssign1 ? v1 : p1.d[j] + v1;
  }
}

template <typename T> [[gnu::always_inline]] inline void products(const Product<T>& p0, const Product<T>& p1,
                                                                  const T* g, std::int64_t n) {
  if (p0.assign)
    p1.assign ? product_lanes<true, true>(p0, p1, g, n) : product_lanes<true, false>(p0, p1, g, n);
  else
    p1.assign ? product_lanes<false, true>(p0, p1, g, n) : product_lanes<false, false>(p0, p1, g, n);
}

#define NODEFLOW_GRADIENT_LANES(T, SUFFIX, ...)                                                        \
  __VA_ARGS__ void copy_to_two_##T##SUFFIX(T* d0, T* d1, const T* s, std::int64_t n) {               \
    copy_lanes_to_two(d0, d1, s, n);                                                                   \
  }                                                                                                    \
  __VA_ARGS__ void write_products_##T##SUFFIX(const Product<T>& p0, const Product<T>& p1, const T* g, \
                                              std::int64_t n) {                                        \
    products(p0, p1, g, n);                                                                            \
  }
NODEFLOW_LANES_CLONES(NODEFLOW_GRADIENT_LANES)
#undef NODEFLOW_GRADIENT_LANES

}  // namespace

void copy_to_two(float* d0, float* d1, const float* s, std::int64_t n) {
  NODEFLOW_LANES_PICK(copy_to_two_float)(d0, d1, s, n);
}
void copy_to_two(double* d0, double* d1, const double* s, std::int64_t n) {
  NODEFLOW_LANES_PICK(copy_to_two_double)(d0, d1, s, n);
}
void write_products(const Product<float>& p0, const Product<float>& p1, const float* g, std::int64_t n) {
  NODEFLOW_LANES_PICK(write_products_float)(p0, p1, g, n);
}
void write_products(const Product<double>& p0, const Product<double>& p1, const double* g, std::int64_t n) {
  NODEFLOW_LANES_PICK(write_products_double)(p0, p1, g, n);
}

}  // namespace nodeflow::gradient_lanes

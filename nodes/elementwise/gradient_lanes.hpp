#pragma once
// The innermost loops of the elementwise ops' backward where both input
// gradients have dY's shape, each compiled for the baseline, AVX2 and
// AVX-512F and picked at run time (nodes/common/vector_lanes.hpp): the
// library is built for baseline x86-64, whose SSE2 packets left these
// passes over 51 MB short of the memory's pace with 2 threads (README, "The
// ops beyond pooling"). Every element is computed as written below, without
// contraction, so every instruction set gives a scalar loop's bits.
#include <cstdint>

namespace nodeflow::gradient_lanes {

/// d0[j] = d1[j] = s[j] for j < n: an Add's two overwritten gradients from
/// one load of each vector of dY.
void copy_to_two(float* d0, float* d1, const float* s, std::int64_t n);
void copy_to_two(double* d0, double* d1, const double* s, std::int64_t n);

/// One gradient of a product: d[j] = k * (g[j] * x[j]), or d[j] + that
/// where !assign.
template <typename T> struct Product {
  T* d;
  T k;
  const T* x;
  bool assign;
};

/// A Mul's two gradients of dY's shape in one pass over g = dY[0, n):
/// p.d[j] = p.k * (g[j] * p.x[j]) (+ p.d[j] where !p.assign), p0's first.
/// p0.d may be p1.d (Mul(t, t), both added into one buffer): the element
/// then gets p0's product added, then p1's.
void write_products(const Product<float>& p0, const Product<float>& p1, const float* g, std::int64_t n);
void write_products(const Product<double>& p0, const Product<double>& p1, const double* g, std::int64_t n);

}  // namespace nodeflow::gradient_lanes

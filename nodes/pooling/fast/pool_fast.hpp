#pragma once
// Fast pooling kernels: what the pooling nodes run. Same semantics, spans and
// resolved PoolGeometry as the reference kernels (pool_kernels.hpp, kept as
// the test oracle), plus a thread count; the pooling semantics' "Values"
// and "Backward", ONNX AveragePool/MaxPool/LpPool-22.
//
// Tensors are N x C x D1 ... Dn, row-major (NCHW). float32 runs vectorized
// (AVX-512 or AVX2, chosen at run time for the CPU, with a portable
// fallback); the other dtypes run the same algorithm one element at a time.
// Work is split over N x C planes and over rows of the first spatial axis;
// the split never changes a result, so results do not depend on `threads`.
//
// Results against the reference: MaxPool values, argmax/Indices and MaxPool
// and LpPool gradients are bitwise the same; AveragePool and LpPool values
// and AveragePool gradients sum in another order (separably, axis by axis),
// so they may differ in the last bits (a few units in the last place of the
// sum of the magnitudes). Geometries the fast kernels do not cover (planes of
// 2^31 elements or more, tap tables far larger than the tensors) run the
// reference kernels; the int32 form of MaxPool's argmax cannot describe such
// planes and refuses them. With one thread, float64 and bfloat16 sums over
// disjoint windows run them too, being faster there (pool_fast.cpp).
//
// Sums rarely leave their type's range, so the fast kernels only watch for
// it: an average or Lp value that is not finite (or, for LpPool, too small
// for its powers to be exact) has its window computed again as the
// reference kernels compute it (pool_math.hpp), and an AveragePool backward
// item whose |dY| could make a sum overflow is summed in float64 instead.
#include <cstdint>
#include <span>

#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow {

/// Which kernels the fast:: functions run: the reference kernels (the
/// oracle), or the fast ones in plain C++, AVX2 or AVX-512 (float32; the other
/// dtypes always run the plain C++ ones).
enum class PoolImpl { Reference, Portable, Avx2, Avx512 };

/// "reference", "portable", "avx2" or "avx512".
const char* pool_impl_name(PoolImpl impl);

/// The best level this CPU (and this build) supports.
PoolImpl pool_impl_supported();

/// The level in use: pool_impl_supported(), or at start-up the environment
/// variable NODEFLOW_POOL_IMPL (reference, portable, avx2, avx512; an unknown
/// or unsupported value is ignored), or what set_pool_impl() chose.
PoolImpl pool_impl();

/// Selects the level for every later call, process-wide (tests, benchmarks).
/// Throws InvalidAttribute if the CPU does not support it.
void set_pool_impl(PoolImpl impl);

namespace fast {

/// AveragePool forward (see nodeflow::average_pool_forward).
template <typename T>
void average_pool_forward(const PoolGeometry& g, bool count_include_pad, std::span<const T> x,
                          std::span<T> y, int threads);

/// dx += scale * AveragePool's gradient (see nodeflow::average_pool_backward).
template <typename T>
void average_pool_backward(const PoolGeometry& g, bool count_include_pad, std::span<const T> dy,
                           double scale, std::span<T> dx, int threads);

/// MaxPool forward; argmax (empty, or one per output) gets the row-major flat
/// input index of each window's winner (see nodeflow::max_pool_forward).
template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int64_t> argmax, int threads);

/// MaxPool forward keeping each winner as an offset within its output's N,C
/// input plane (one int32 per output): MaxPool's training state, half the
/// bytes of flat int64 indices. Throws RunError if a plane has 2^31 elements
/// or more.
template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int32_t> offsets, int threads);

/// dx[argmax[o]] += scale * dy[o], summed per element in output order (see
/// nodeflow::max_pool_backward). Throws RunError, naming the output and its
/// plane, if an argmax lies outside its output's N,C plane (checked before
/// the plane is written).
template <typename T>
void max_pool_backward(const PoolGeometry& g, std::span<const std::int64_t> argmax,
                       std::span<const T> dy, double scale, std::span<T> dx, int threads);

/// The same from the plane offsets of the int32 max_pool_forward. Throws
/// RunError if an offset lies outside its plane.
template <typename T>
void max_pool_backward(const PoolGeometry& g, std::span<const std::int32_t> offsets,
                       std::span<const T> dy, double scale, std::span<T> dx, int threads);

/// LpPool forward (see nodeflow::lp_pool_forward).
template <typename T>
void lp_pool_forward(const PoolGeometry& g, std::int64_t p, std::span<const T> x, std::span<T> y,
                     int threads);

/// dx += scale * LpPool's gradient (see nodeflow::lp_pool_backward).
template <typename T>
void lp_pool_backward(const PoolGeometry& g, std::int64_t p, std::span<const T> x,
                      std::span<const T> y, std::span<const T> dy, double scale, std::span<T> dx,
                      int threads);

}  // namespace fast
}  // namespace nodeflow

#pragma once
// Reference pooling kernels: free functions over plain spans and a resolved
// PoolGeometry (shapes and attributes are validated before they are called).
// Tensors are N x C x D1 ... Dn, row-major; spans hold whole tensors.
// Semantics: the pooling semantics' "Values" and "Backward" (ONNX, plus the
// project's rules for ties, NaN, divisors and ranges).
//
// Element types: T is float, double, half or bfloat16 everywhere; the max and
// unpool forward kernels also take int8_t and uint8_t. float16 and bfloat16
// sum in float32 (accumulator_t). Backward kernels add (+=) scale * gradient
// into `dx`, so a gradient buffer may already hold other contributions.
// AveragePool and LpPool have no intermediate overflow or underflow: a value
// or gradient that T can hold is returned (pool_math.hpp: sums that would
// overflow the accumulator run in float64, scaled where float64 would).
#include <cstdint>
#include <span>

#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow {

/// AveragePool: y = sum of the window's input elements / divisor, where the
/// divisor counts the input elements in the window (count_include_pad=0) or
/// the taps inside input + pads (count_include_pad=1; never the positions past
/// the end pad that ceil_mode creates; with dilations only sampled taps).
template <typename T>
void average_pool_forward(const PoolGeometry& g, bool count_include_pad, std::span<const T> x,
                          std::span<T> y);

/// dx[i] += scale * dy[w] / divisor(w) for every input element i of window w;
/// pad taps receive nothing. Needs no saved state. When |dy| is large
/// enough (or scale small enough) for a sum to leave the accumulator's
/// range, every sum runs in float64 (pool_math::GradSum).
template <typename T>
void average_pool_backward(const PoolGeometry& g, bool count_include_pad, std::span<const T> dy,
                           double scale, std::span<T> dx);

/// MaxPool: y = the window's largest input element; padding never takes part.
/// NaN compares above every number (a window holding NaN gives NaN, the first
/// NaN in row-major tap order wins); ties go to the first maximal element in
/// row-major tap order. argmax (optional, one per output element) receives
/// the flat row-major index of the winner in the whole input (N, C included).
template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int64_t> argmax);

/// ONNX Indices from row-major argmax: identity for StorageOrder::RowMajor;
/// for ColumnMajor the spatial part of each index becomes column-major (D1
/// fastest) while the N, C offsets stay row-major.
void max_pool_indices(const PoolGeometry& g, StorageOrder order,
                      std::span<const std::int64_t> argmax, std::span<std::int64_t> indices);

/// dx[argmax[o]] += scale * dy[o]: each output gradient goes to the element
/// that won the forward, summed where windows overlap.
template <typename T>
void max_pool_backward(std::span<const std::int64_t> argmax, std::span<const T> dy, double scale,
                       std::span<T> dx);

/// LpPool: y = (sum |x|^p)^(1/p) over the window's input elements, computed
/// as m * (sum (|x|/m)^p)^(1/p) with m the window's largest |x| (no
/// intermediate overflow or underflow). A NaN in the window gives NaN, else
/// an infinity gives +infinity, for every p (pool_math::window_lp).
template <typename T>
void lp_pool_forward(const PoolGeometry& g, std::int64_t p, std::span<const T> x, std::span<T> y);

/// dx += scale * dy * sign(x) * |x|^(p-1) / y^(p-1) for every input element of
/// every window; 0 where y == 0, and where x == 0 unless y is NaN. Where y
/// is NaN (a NaN in the window), or |x| / y is (x and y infinite), the
/// gradient is NaN for every p, p = 1 included. Where y overflowed to
/// infinity or is subnormal over a finite window, |x| / y is taken from the
/// window as the forward computes y, m * (sum (|x|/m)^p)^(1/p), so a
/// representable gradient is returned (pool_math::LpWindowGradient). Needs
/// the forward's x and y.
/// Sums leave the accumulator's range as for AveragePool: float64 then.
template <typename T>
void lp_pool_backward(const PoolGeometry& g, std::int64_t p, std::span<const T> x,
                      std::span<const T> y, std::span<const T> dy, double scale, std::span<T> dx);

/// MaxUnpool: y (zero-filled by the caller) receives x[i] at flat index
/// indices[i] of the whole output; where indices repeat, the later element of
/// x in row-major order wins. Throws RunError("input 1 (I): index ... is
/// outside ...") for an index outside [0, y.size()).
template <typename T>
void max_unpool_forward(std::span<const T> x, std::span<const std::int64_t> indices,
                        std::span<T> y);

/// dx[i] += scale * dy[indices[i]]: the gradient of X gathers dY at I
/// (docs/pooling.md), also for an element whose duplicate index lost the scatter.
template <typename T>
void max_unpool_backward(std::span<const std::int64_t> indices, std::span<const T> dy, double scale,
                         std::span<T> dx);

}  // namespace nodeflow

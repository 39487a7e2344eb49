#pragma once
// The one loop that adds one float tensor into another: the executor's sums
// of gradients (core/executor.cpp) and the nodes' gradient accumulation
// (accumulate_gradient, nodes/common/layer_common.hpp); and the zeroing of
// gradient buffers.
#include "core/tensor.hpp"

namespace nodeflow {

/// dst[i] += scale * src[i] for every element, for any two float dtypes
/// (float32, float64, float16, bfloat16). The sum is computed in float64 when
/// either tensor is float64, else in float32, and rounded once to dst's dtype.
/// Both must be float tensors with the same element count (their shapes may
/// differ, e.g. Flatten's gradient); the caller checks that.
void add_scaled(Tensor& dst, const Tensor& src, double scale);

/// Sets every byte of `t` to zero, each of up to `threads` threads zeroing its
/// share of the 64-byte lines: gradient buffers come back from tensors the
/// threads wrote in parts, and one thread zeroing it all pulls the others'
/// parts across the caches (docs/architecture.md, "Threads").
void zero_fill(Tensor& t, int threads);

}  // namespace nodeflow

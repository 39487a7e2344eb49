#pragma once
// What the data-movement nodes of this folder share: the gradient of a node
// that only relabels the shape and kernels instantiated per element size.
// Their constant int64 inputs are read by nodes/common/constant_inputs.hpp.
#include <cstddef>
#include <cstdint>

#include "core/node.hpp"

namespace nodeflow {

/// Backward of Flatten, Reshape, Squeeze, Unsqueeze: the output gradient,
/// read with the input's shape, added into the input's (docs/operators.md,
/// "Gradient conventions": the exact inverse movement).
void relabel_gradient(const BackwardContext& ctx);

/// The element size in bytes of `dtype` as an unsigned type of that size
/// (std::uint8_t ... std::uint64_t): kernels that only move elements are
/// instantiated once per size, not per dtype.
template <typename F> decltype(auto) visit_element_size(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    default: return f(std::uint64_t{});
  }
}

}  // namespace nodeflow

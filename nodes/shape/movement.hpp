#pragma once
// What the data-movement nodes of this folder share: the gradient of a node
// that only relabels the shape, and reading their constant int64 inputs
// (Split's split, Squeeze's and Unsqueeze's axes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/node.hpp"

namespace nodeflow {

/// Backward of Flatten, Reshape, Squeeze, Unsqueeze: the output gradient,
/// read with the input's shape, added into the input's (docs/operators.md,
/// "Gradient conventions": the exact inverse movement).
void relabel_gradient(const BackwardContext& ctx);

/// The values of input k (`name`) of `op`, a 1-D int64 tensor: throws
/// UnsupportedDType for another dtype, ShapeMismatch for another rank
/// ("input 1 (axes) has shape [2, 2]; Squeeze needs a 1-D int64 tensor").
std::vector<std::int64_t> int64_values(const std::string& op, std::size_t k, const std::string& name,
                                       const Tensor& t);

/// ONNX axes (input k, `name`) in [-rank, rank - 1] as a mask over [0, rank).
/// Throws ShapeMismatch naming the input and the values when one is out of
/// range or repeats.
std::vector<bool> axis_mask(const std::vector<std::int64_t>& axes, std::size_t rank, std::size_t k,
                            const std::string& name);

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

#pragma once
// The constant 1-D int64 inputs of the ops (Squeeze's, Unsqueeze's, Slice's,
// Pad's and Reduce*'s axes; Split's split; Reshape's and Expand's shape;
// Tile's repeats; Slice's starts, ends and steps; Pad's pads) and the ONNX
// axes among them, read one way with one set of messages:
//
//   "Squeeze needs dtype int64 for input 1 (axes), got float32"            UnsupportedDType
//   "input 1 (axes) has shape [2, 2]; Squeeze needs a 1-D int64 tensor"    ShapeMismatch
//   "input 1 (axes): axes[0] = 2 is outside [-2, 1] for input rank 2"      ShapeMismatch
//   "input 1 (axes): axes[1] = -2 repeats axis 0 (axes[0] = 0)"            ShapeMismatch
//
// Axes that do not fit are ShapeMismatch, not InvalidAttribute: they are an
// input's values checked against another input's rank (attributes.axis, an
// attribute, is normalize_axis's in layer_common.hpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/node.hpp"

namespace nodeflow {

/// "input 1 (axes)": how these messages name input k.
std::string input_name(std::size_t k, const std::string& name);

/// inputs[i] when it is given (not absent, not beyond the inputs given), else null.
const Tensor* present(std::span<const Tensor> inputs, std::size_t i);

/// Throws unless input k (`name`) of `op` is described as a 1-D int64 tensor:
/// UnsupportedDType for another dtype, ShapeMismatch for another rank. For
/// shape inference, where only the TensorInfo may be known.
void check_int64_list(const std::string& op, std::size_t k, const std::string& name, const TensorInfo& t);

/// The values of input k (`name`) of `op`, a 1-D int64 tensor (checked as
/// check_int64_list does). The span views t's buffer.
std::span<const std::int64_t> int64_list(const std::string& op, std::size_t k, const std::string& name,
                                         const Tensor& t);

/// ONNX axes (the values of input k, `name`), each in [-rank, rank - 1],
/// normalized to [0, rank) in the order given. Throws ShapeMismatch when one
/// is out of range or names an axis already named. `rank_of` says whose rank
/// it is in the message: "input" (the data's), or "output" (Unsqueeze's axes
/// count in the output's rank).
std::vector<std::size_t> normalized_axes(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                                         const std::string& name, std::string_view rank_of = "input");

/// The same axes as a mask over [0, rank): true where an axis is named.
std::vector<bool> axis_mask(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                            const std::string& name, std::string_view rank_of = "input");

}  // namespace nodeflow

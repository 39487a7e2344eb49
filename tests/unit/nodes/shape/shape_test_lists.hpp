#pragma once
// What the data-movement tests (Slice, Pad, Expand, Tile, Gather) share:
// the 1-D int64 tensors of their shape-like inputs and an inference-mode
// forward of a lone node.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow::testing {

inline Tensor int64_list(const std::vector<std::int64_t>& values) {
  return Tensor::from<std::int64_t>({static_cast<std::int64_t>(values.size())},
                                    std::span<const std::int64_t>(values));
}

/// The one output of an inference-mode forward of a lone `op_type` node.
inline Tensor forward_output(const std::string& op_type, const Attributes& attributes,
                             const std::vector<Tensor>& inputs) {
  return run_forward(*make_node(op_type, attributes), inputs, 1, false).outputs[0];
}

}  // namespace nodeflow::testing

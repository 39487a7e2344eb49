#pragma once
// The 1-D int64 tensors (starts, pads, repeats, ...) the data-movement tests
// pass as shape-like inputs.
#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.hpp"

namespace nodeflow::testing {

inline Tensor int64_list(const std::vector<std::int64_t>& values) {
  return Tensor::from<std::int64_t>({static_cast<std::int64_t>(values.size())},
                                    std::span<const std::int64_t>(values));
}

}  // namespace nodeflow::testing

#pragma once
// What the data-movement tests (Slice, Pad, Expand, Tile, Gather) share:
// the 1-D int64 tensors of their shape-like inputs, an inference-mode
// forward of a lone node, and the gradient check of an op whose second
// input is such a tensor (Expand's shape, Tile's repeats).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

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

/// (data shape, values of the 1-D int64 input 1) per case.
using ShapeAndInts = std::pair<Shape, std::vector<std::int64_t>>;

/// The gradient of `op_type`'s data passes the finite-difference check in
/// every case, lda_coeff 1 and 0.5 in turn; data uniform from `seed`.
inline void expect_data_gradients(const std::string& op_type, const std::vector<ShapeAndInts>& cases,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    auto node = make_node(op_type, {}, true, k % 2 ? 0.5 : 1.0);
    const GradCheckResult r = check_gradient(*node, {random_uniform(cases[k].first, rng), int64_list(cases[k].second)});
    EXPECT_TRUE(r.ok) << op_type << " case " << k << "\n" << r.failures;
  }
}

}  // namespace nodeflow::testing

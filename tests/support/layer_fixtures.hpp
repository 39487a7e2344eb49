#pragma once
// Helpers for the layer-node tests (tests/unit/nodes/**/test_layer_*.cpp):
// patterned inputs that numpy reproduces exactly, seeded random inputs, value
// extraction and comparison, and shape inference of a lone node
// (support/gradcheck.hpp checks their gradients).
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "core/node.hpp"
#include "core/tensor.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow::testing {

/// Element i is ((i * mul) % mod - off) / div, in `dtype`. numpy:
/// ((np.arange(n) * mul) % mod - off) / div; small dyadic values, so float32,
/// float64 and numpy agree bit for bit on sums of a few products.
Tensor pattern(Shape shape, std::int64_t mul, std::int64_t mod, std::int64_t off, double div,
               DType dtype = DType::Float64);

Tensor f64(Shape shape, std::initializer_list<double> values);

/// float64 values drawn in order from uniform(-bound, bound): well-spread
/// inputs for the gradient checks.
Tensor random_uniform(Shape shape, std::mt19937_64& rng, double bound = 1.0);
Tensor i64(Shape shape, std::initializer_list<std::int64_t> values);

/// Values of any float tensor as doubles.
std::vector<double> as_doubles(const Tensor& t);

/// Each of `got` within `tol` of `want` (a test failure naming the element otherwise).
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol);

/// Node::infer for a lone node: `inputs` (nullptr entries: absent) and the
/// constant values of some of them (nullptr: not constant).
std::vector<TensorInfo> infer(const Node& node, const std::vector<TensorInfo>& inputs,
                              const std::vector<const Tensor*>& constants = {},
                              std::size_t num_outputs = 1);

}  // namespace nodeflow::testing

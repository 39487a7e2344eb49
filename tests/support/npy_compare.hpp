#pragma once
// Tensor comparison of the conformance corpus (tests/conformance/README.md,
// "Comparing"), shared by the conformance harness and the unit tests.
#include <string>

#include "core/tensor.hpp"

namespace nodeflow::testing {

/// |got - want| <= atol + rtol * |want|.
struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

/// Empty when `got` matches `want`, else a description of every reason it does
/// not (dtype, shape, or the number of differing elements with the first few,
/// their multi-index, both values and the allowed difference).
///
/// Rules: dtype and shape must be equal; integer tensors compare exactly,
/// whatever the tolerance; float16, bfloat16 and float32 compare in float32,
/// float64 in float64; NaN equals NaN but no number; infinities must be equal.
/// bfloat16 results are compared as the float32 files that carry them, so the
/// caller casts them first.
std::string tensor_mismatch(const Tensor& got, const Tensor& want, Tolerance tolerance);

}  // namespace nodeflow::testing

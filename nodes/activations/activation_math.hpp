#pragma once
// Pieces of several activations' values and derivatives, in forms that stay
// finite for every input (docs/operators.md, "Choices where ONNX is silent":
// Softplus and Mish give the finite result for large inputs).
#include <cmath>

namespace nodeflow::activation_math {

/// 1 / (1 + exp(-x)), exp only of non-positive numbers: no overflow for large |x|.
template <typename A> A sigmoid(A x) {
  if (x >= A(0)) return A(1) / (A(1) + std::exp(-x));
  const A e = std::exp(x);
  return e / (A(1) + e);
}

/// ln(1 + exp(x)) = max(x, 0) + ln(1 + exp(-|x|)): x itself for large x.
template <typename A> A softplus(A x) {
  return (x > A(0) ? x : A(0)) + std::log1p(std::exp(-std::abs(x)));
}

}  // namespace nodeflow::activation_math

#pragma once
// Tiny ops used only by the graph/executor tests, so that graph mechanics
// (fan-out, lda_coeff, training=false, thread safety) are checked with exactly
// known local gradients, independent of the pooling kernels.
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow::testing {

/// Registers (once) in OpRegistry::global():
///  - "TestScale": Y = alpha * X (float32), dX += lda * alpha * dY; float attribute alpha.
///  - "TestMul": Y = A * B element-wise (float32), dA += lda * B * dY, dB += lda * A * dY;
///    saves A and B in training mode.
void register_test_ops();

/// A "TestScale" node `name` reading `inputs`.
NodeDef test_scale(const std::string& name, std::vector<std::string> inputs, double alpha = 2.0);

}  // namespace nodeflow::testing

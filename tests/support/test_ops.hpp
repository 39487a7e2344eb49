#pragma once
// Tiny ops used only by the graph/executor tests, so that graph mechanics
// (fan-out, lda_coeff, training=false, thread safety) are checked with exactly
// known local gradients, independent of the pooling kernels.
namespace nodeflow::testing {

/// Registers (once) in OpRegistry::global():
///  - "TestScale": Y = alpha * X (float32), dX += lda * alpha * dY; float attribute alpha.
///  - "TestMul": Y = A * B element-wise (float32), dA += lda * B * dY, dB += lda * A * dY;
///    saves A and B in training mode.
void register_test_ops();

}  // namespace nodeflow::testing

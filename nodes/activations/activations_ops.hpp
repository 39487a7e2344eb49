#pragma once
// Registration of the activations beyond Relu, Sigmoid and Tanh
// (nodes/layer_ops.hpp keeps those). Each takes any shape and gives its
// input's shape and dtype; float32, float64, float16 and bfloat16 (float16
// and bfloat16 computed in float32) unless said otherwise; the gradient rules
// at the kinks are docs/operators.md's ("Gradient conventions"). A dtype
// outside the op's ONNX type constraint is refused at load, naming the node
// and the dtype.
namespace nodeflow {

class OpRegistry;

/// LeakyRelu-16: x for x >= 0, alpha * x below (alpha 0.01); gradient alpha at 0.
void register_leaky_relu(OpRegistry& registry);
/// Elu-22: alpha * (exp(x) - 1) for x < 0 (alpha 1); gradient alpha at 0.
void register_elu(OpRegistry& registry);
/// Selu-22: gamma * (x > 0 ? x : alpha * (exp(x) - 1)) (ONNX's float32
/// defaults of alpha 1.6733, gamma 1.0507); gradient gamma * alpha at 0.
void register_selu(OpRegistry& registry);
/// Celu-12, float32 only: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
/// (alpha 1, not 0); gradient 1 at 0.
void register_celu(OpRegistry& registry);
/// Gelu-20: approximate "none" (erf) or "tanh", the exact derivative of each.
void register_gelu(OpRegistry& registry);
/// HardSigmoid-22: max(0, min(1, alpha * x + beta)) (0.2, 0.5); gradient
/// alpha at both kinks.
void register_hard_sigmoid(OpRegistry& registry);
/// HardSwish-22: x * max(0, min(1, x / 6 + 1/2)); gradient -0.5 at x = -3 and
/// 1.5 at x = 3.
void register_hard_swish(OpRegistry& registry);
/// Softplus-22: ln(1 + exp(x)), finite for large x.
void register_softplus(OpRegistry& registry);
/// Softsign-22 (input -> output): x / (1 + |x|).
void register_softsign(OpRegistry& registry);
/// Mish-22: x * tanh(softplus(x)), finite for large |x|.
void register_mish(OpRegistry& registry);
/// Clip-13 (input [, min] [, max] -> output): every dtype nodeflow has (the
/// integer ones forward only); min and max are scalars of input's dtype
/// (shape [] or [1]; else refused naming the input), not differentiable;
/// min > max gives max everywhere; the gradient passes where
/// min <= x <= max.
void register_clip(OpRegistry& registry);

}  // namespace nodeflow

// Relu (ONNX Relu-14), Sigmoid (Sigmoid-13), Tanh (Tanh-13): each derivative
// is a function of the output Y, so forward saves Y alone.
#include <cmath>

#include "nodes/activations/activation_math.hpp"
#include "nodes/activations/activation_node.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

struct Relu : ActivationTraits {
  static constexpr const char* op = "Relu";
  static constexpr const char* definition = "ONNX Relu-14";
  static constexpr const char* doc = "max(0, X)";
  static constexpr bool from_output = true;
  explicit Relu(const Attributes&) {}
  // NaN is not < 0, so it passes through (as numpy.maximum(x, 0) does).
  template <typename A> A value(A x) const { return x < A(0) ? A(0) : x; }
  // The derivative at 0 is taken as 0 (PyTorch's convention); NaN gets 0.
  // (This file is built with -fno-trapping-math, CMakeLists.txt, so that the
  // backward loop vectorizes.)
  template <typename A> A slope(A y) const { return static_cast<A>(y > A(0)); }
};

struct Sigmoid : ActivationTraits {
  static constexpr const char* op = "Sigmoid";
  static constexpr const char* definition = "ONNX Sigmoid-13";
  static constexpr const char* doc = "1 / (1 + exp(-X))";
  static constexpr bool from_output = true;
  explicit Sigmoid(const Attributes&) {}
  template <typename A> A value(A x) const { return activation_math::sigmoid(x); }
  template <typename A> A slope(A y) const { return y * (A(1) - y); }
};

struct Tanh : ActivationTraits {
  static constexpr const char* op = "Tanh";
  static constexpr const char* definition = "ONNX Tanh-13";
  static constexpr const char* doc = "Hyperbolic tangent of the input";
  static constexpr const char* input_name = "input";  // ONNX's names for Tanh
  static constexpr const char* output_name = "output";
  static constexpr bool from_output = true;
  explicit Tanh(const Attributes&) {}
  template <typename A> A value(A x) const { return std::tanh(x); }
  template <typename A> A slope(A y) const { return A(1) - y * y; }
};

}  // namespace

void register_relu(OpRegistry& registry) { register_activation<Relu>(registry); }
void register_sigmoid(OpRegistry& registry) { register_activation<Sigmoid>(registry); }
void register_tanh(OpRegistry& registry) { register_activation<Tanh>(registry); }

}  // namespace nodeflow

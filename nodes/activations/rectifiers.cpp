// The rectifiers with a negative branch: LeakyRelu (ONNX LeakyRelu-16), Elu
// (Elu-22), Selu (Selu-22), Celu (Celu-12, float32 only as ONNX's type
// constraint says). At x = 0 the derivative is that of the x <= 0 branch
// (docs/operators.md, "Gradient conventions"): LeakyRelu alpha, Elu alpha,
// Selu gamma * alpha, Celu 1.
#include <cmath>

#include "nodes/activations/activation_node.hpp"
#include "nodes/activations/activations_ops.hpp"

namespace nodeflow {
namespace {

struct LeakyRelu : ActivationTraits {
  static constexpr const char* op = "LeakyRelu";
  static constexpr const char* definition = "ONNX LeakyRelu-16";
  static constexpr const char* doc = "X if X >= 0, else alpha * X";
  static std::vector<AttrSpec> attributes() {
    return {float_spec("alpha", 0.01, "slope for x < 0")};
  }
  explicit LeakyRelu(const Attributes& a) : alpha(attr_float(a, "alpha")) {}
  template <typename A> A value(A x) const { return x < A(0) ? static_cast<A>(alpha) * x : x; }
  template <typename A> A slope(A x) const { return x > A(0) ? A(1) : static_cast<A>(alpha); }
  double alpha;
};

struct Elu : ActivationTraits {
  static constexpr const char* op = "Elu";
  static constexpr const char* definition = "ONNX Elu-22";
  static constexpr const char* doc = "X if X > 0, else alpha * (exp(X) - 1)";
  static std::vector<AttrSpec> attributes() {
    return {float_spec("alpha", 1.0, "y = alpha * (exp(x) - 1) for x < 0")};
  }
  explicit Elu(const Attributes& a) : alpha(attr_float(a, "alpha")) {}
  template <typename A> A value(A x) const {
    return x < A(0) ? static_cast<A>(alpha) * std::expm1(x) : x;
  }
  template <typename A> A slope(A x) const {
    return x > A(0) ? A(1) : static_cast<A>(alpha) * std::exp(x);
  }
  double alpha;
};

struct Selu : ActivationTraits {
  static constexpr const char* op = "Selu";
  static constexpr const char* definition = "ONNX Selu-22";
  static constexpr const char* doc = "gamma * X if X > 0, else gamma * alpha * (exp(X) - 1)";
  // ONNX's defaults are these float32 values (of 1.6732632... and 1.0507009...).
  static std::vector<AttrSpec> attributes() {
    return {float_spec("alpha", 1.67326319217681884765625, "y = gamma * alpha * (exp(x) - 1) for x <= 0"),
            float_spec("gamma", 1.05070102214813232421875, "scale of both branches")};
  }
  explicit Selu(const Attributes& a) : alpha(attr_float(a, "alpha")), gamma(attr_float(a, "gamma")) {}
  template <typename A> A value(A x) const {
    return static_cast<A>(gamma) * (x > A(0) ? x : static_cast<A>(alpha) * std::expm1(x));
  }
  template <typename A> A slope(A x) const {
    return x > A(0) ? static_cast<A>(gamma) : static_cast<A>(gamma * alpha) * std::exp(x);
  }
  double alpha;
  double gamma;
};

struct Celu : ActivationTraits {
  static constexpr const char* op = "Celu";
  static constexpr const char* definition = "ONNX Celu-12";
  static constexpr const char* doc = "max(0, X) + min(0, alpha * (exp(X / alpha) - 1))";
  static constexpr bool float32_only = true;
  static std::vector<AttrSpec> attributes() {
    AttrSpec alpha = float_spec("alpha", 1.0, "y = alpha * (exp(x / alpha) - 1) for x < 0; not 0");
    alpha.since_version = 12;  // Celu came in opset 12
    return {alpha};
  }
  // ONNX divides by alpha: 0 has no Celu.
  static void check(const Attributes& a) {
    if (attr_float(a, "alpha") == 0)
      throw InvalidAttribute("attributes.alpha: expected a number other than 0, got 0");
  }
  explicit Celu(const Attributes& a) : alpha(attr_float(a, "alpha")) {}
  template <typename A> A value(A x) const {
    return x > A(0) ? x : static_cast<A>(alpha) * std::expm1(x / static_cast<A>(alpha));
  }
  template <typename A> A slope(A x) const {
    return x > A(0) ? A(1) : std::exp(x / static_cast<A>(alpha));
  }
  double alpha;
};

}  // namespace

void register_leaky_relu(OpRegistry& registry) { register_activation<LeakyRelu>(registry); }
void register_elu(OpRegistry& registry) { register_activation<Elu>(registry); }
void register_selu(OpRegistry& registry) { register_activation<Selu>(registry); }
void register_celu(OpRegistry& registry) { register_activation<Celu>(registry); }

}  // namespace nodeflow

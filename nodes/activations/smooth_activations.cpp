// The smooth activations: Gelu (ONNX Gelu-20; approximate none or tanh, each
// with the exact derivative of its own formula), Softplus (Softplus-22),
// Softsign (Softsign-22) and Mish (Mish-22). Softplus and Mish stay finite
// for large inputs (docs/operators.md, "Choices where ONNX is silent").
#include <cmath>

#include "nodes/activations/activation_math.hpp"
#include "nodes/activations/activation_node.hpp"
#include "nodes/activations/activations_ops.hpp"

namespace nodeflow {
namespace {

using activation_math::sigmoid;
using activation_math::softplus;

struct Gelu : ActivationTraits {
  static constexpr const char* op = "Gelu";
  static constexpr const char* definition = "ONNX Gelu-20";
  static constexpr const char* doc = "X * Phi(X), Phi the standard normal CDF (approximate: none or tanh)";
  static std::vector<AttrSpec> attributes() {
    AttrSpec approximate;
    approximate.name = "approximate";
    approximate.kind = AttrKind::String;
    approximate.default_value = AttrValue(std::string("none"));
    approximate.allowed = {"none", "tanh"};
    approximate.since_version = 20;
    approximate.doc =
        "none: x * (1 + erf(x / sqrt(2))) / 2; tanh: x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 "
        "x^3))) / 2";
    return {approximate};
  }
  explicit Gelu(const Attributes& a) : tanh_form(attr_string(a, "approximate") == "tanh") {}

  template <typename A> A value(A x) const {
    if (tanh_form) return A(0.5) * x * (A(1) + std::tanh(inner(x)));
    return A(0.5) * x * (A(1) + std::erf(x * A(M_SQRT1_2)));
  }
  template <typename A> A slope(A x) const {
    if (tanh_form) {
      const A t = std::tanh(inner(x));
      const A sech2 = A(1) - t * t;
      // Where tanh saturates, x^2 may overflow: 0 * inf would give NaN.
      if (sech2 == A(0)) return A(0.5) * (A(1) + t);
      return A(0.5) * (A(1) + t) +
             A(0.5) * x * sech2 * A(kSqrt2OverPi) * (A(1) + A(3 * kCubic) * x * x);
    }
    // Phi(x) + x * phi(x), phi the standard normal density.
    return A(0.5) * (A(1) + std::erf(x * A(M_SQRT1_2))) +
           x * A(0.5 * M_2_SQRTPI * M_SQRT1_2) * std::exp(A(-0.5) * x * x);
  }

  static constexpr double kSqrt2OverPi = M_SQRT2 * M_2_SQRTPI * 0.5;  // sqrt(2 / pi)
  static constexpr double kCubic = 0.044715;
  template <typename A> static A inner(A x) { return A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x); }
  bool tanh_form;
};

struct Softplus : ActivationTraits {
  static constexpr const char* op = "Softplus";
  static constexpr const char* definition = "ONNX Softplus-22";
  static constexpr const char* doc = "log(1 + exp(X))";
  explicit Softplus(const Attributes&) {}
  template <typename A> A value(A x) const { return softplus(x); }
  template <typename A> A slope(A x) const { return sigmoid(x); }
};

struct Softsign : ActivationTraits {
  static constexpr const char* op = "Softsign";
  static constexpr const char* definition = "ONNX Softsign-22";
  static constexpr const char* doc = "X / (1 + |X|)";
  static constexpr const char* input_name = "input";
  static constexpr const char* output_name = "output";
  explicit Softsign(const Attributes&) {}
  template <typename A> A value(A x) const { return x / (A(1) + std::abs(x)); }
  template <typename A> A slope(A x) const {
    const A d = A(1) + std::abs(x);
    return A(1) / (d * d);
  }
};

struct Mish : ActivationTraits {
  static constexpr const char* op = "Mish";
  static constexpr const char* definition = "ONNX Mish-22";
  static constexpr const char* doc = "X * tanh(softplus(X))";
  explicit Mish(const Attributes&) {}
  // With n = exp(x) and m = n (n + 2): tanh(softplus(x)) = m / (m + 2) and
  // 1 - tanh^2 = 4 (m + 1) / (m + 2)^2, one exp where the plain formula takes
  // three calls (exp, log1p, tanh) and loses the small 1 - tanh^2 to
  // cancellation. Above x = 30, tanh(softplus(x)) and the slope are 1 to
  // float64 precision (1 - t is about 2 exp(-2x)), and float32's m would
  // overflow from x = 44 on.
  static constexpr double kSaturated = 30;
  template <typename A> A value(A x) const {
    if (x > A(kSaturated)) return x;
    const A n = std::exp(x);
    const A m = n * (n + A(2));
    return x * m / (m + A(2));
  }
  // tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2), sigmoid(x) = n / (1 + n).
  template <typename A> A slope(A x) const {
    if (x > A(kSaturated)) return A(1);
    const A n = std::exp(x);
    const A m = n * (n + A(2));
    const A d = m + A(2);
    return m / d + x * n / (A(1) + n) * A(4) * (m + A(1)) / (d * d);
  }
};

}  // namespace

void register_gelu(OpRegistry& registry) { register_activation<Gelu>(registry); }
void register_softplus(OpRegistry& registry) { register_activation<Softplus>(registry); }
void register_softsign(OpRegistry& registry) { register_activation<Softsign>(registry); }
void register_mish(OpRegistry& registry) { register_activation<Mish>(registry); }

}  // namespace nodeflow

// The piecewise-linear activations: HardSigmoid (ONNX HardSigmoid-22) and
// HardSwish (HardSwish-22). At the kinks the derivative is that of the inner,
// non-constant branch, both boundaries included (docs/operators.md,
// "Gradient conventions"): HardSigmoid alpha at both, HardSwish -0.5 at
// x = -3 and 1.5 at x = 3 (PyTorch 1.13 gives 0 there).
#include "nodes/activations/activation_node.hpp"
#include "nodes/activations/activations_ops.hpp"

namespace nodeflow {
namespace {

struct HardSigmoid : ActivationTraits {
  static constexpr const char* op = "HardSigmoid";
  static constexpr const char* definition = "ONNX HardSigmoid-22";
  static constexpr const char* doc = "max(0, min(1, alpha * X + beta))";
  static std::vector<AttrSpec> attributes() {
    return {float_spec("alpha", 0.2, "y = max(0, min(1, alpha * x + beta))"),
            float_spec("beta", 0.5, "offset of the linear part")};
  }
  explicit HardSigmoid(const Attributes& a) : alpha(attr_float(a, "alpha")), beta(attr_float(a, "beta")) {}
  template <typename A> A linear(A x) const { return static_cast<A>(alpha) * x + static_cast<A>(beta); }
  template <typename A> A value(A x) const {
    const A v = linear(x);
    return v < A(0) ? A(0) : v > A(1) ? A(1) : v;
  }
  template <typename A> A slope(A x) const {
    const A v = linear(x);
    return v >= A(0) && v <= A(1) ? static_cast<A>(alpha) : A(0);
  }
  double alpha;
  double beta;
};

struct HardSwish : ActivationTraits {
  static constexpr const char* op = "HardSwish";
  static constexpr const char* definition = "ONNX HardSwish-22";
  static constexpr const char* doc = "X * max(0, min(1, X / 6 + 1/2))";
  explicit HardSwish(const Attributes&) {}
  // x * HardSigmoid(x) with alpha 1/6, beta 1/2; x / 6 is exact at the kinks.
  template <typename A> A value(A x) const {
    const A v = x / A(6) + A(0.5);
    return x * (v < A(0) ? A(0) : v > A(1) ? A(1) : v);
  }
  template <typename A> A slope(A x) const {
    const A v = x / A(6) + A(0.5);
    return v < A(0) ? A(0) : v > A(1) ? A(1) : x / A(3) + A(0.5);
  }
};

}  // namespace

void register_hard_sigmoid(OpRegistry& registry) { register_activation<HardSigmoid>(registry); }
void register_hard_swish(OpRegistry& registry) { register_activation<HardSwish>(registry); }

}  // namespace nodeflow

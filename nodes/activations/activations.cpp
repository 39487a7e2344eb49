// Element-wise activations sharing one node template: Relu (ONNX Relu-14),
// Sigmoid (Sigmoid-13), Tanh (Tanh-13). Each derivative is a function of the
// output Y, so forward saves Y alone.
#include <cmath>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

struct Relu {
  static constexpr const char* op = "Relu";
  static constexpr const char* definition = "ONNX Relu-14";
  // NaN is not < 0, so it passes through (as numpy.maximum(x, 0) does).
  template <typename A> static A value(A x) { return x < A(0) ? A(0) : x; }
  // The derivative at 0 is taken as 0 (PyTorch's convention).
  template <typename A> static A slope(A y) { return y > A(0) ? A(1) : A(0); }
};

struct Sigmoid {
  static constexpr const char* op = "Sigmoid";
  static constexpr const char* definition = "ONNX Sigmoid-13";
  // exp only of non-positive numbers: no overflow for large |x|.
  template <typename A> static A value(A x) {
    if (x >= A(0)) return A(1) / (A(1) + std::exp(-x));
    const A e = std::exp(x);
    return e / (A(1) + e);
  }
  template <typename A> static A slope(A y) { return y * (A(1) - y); }
};

struct Tanh {
  static constexpr const char* op = "Tanh";
  static constexpr const char* definition = "ONNX Tanh-13";
  template <typename A> static A value(A x) { return std::tanh(x); }
  template <typename A> static A slope(A y) { return A(1) - y * y; }
};

template <typename Fn> class ElementwiseNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    check_float_input(Fn::op, 0, "X", ctx.inputs[0]->dtype);
    return {*ctx.inputs[0]};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    Tensor y(x.dtype(), x.shape());
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (std::int64_t i = 0; i < x.numel(); ++i) yp[i] = static_cast<T>(Fn::value(static_cast<A>(xp[i])));
    });
    ctx.outputs[0] = y;
    if (ctx.saved) ctx.saved->push_back(y);
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) return;
    require_saved(Fn::op, ctx.saved.size(), 1);
    const Tensor& y = ctx.saved[0];
    check_output_gradient(Fn::op, 0, dy, y.shape());
    visit_float_dtype(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* yp = y.data<T>();
      const T* gp = dy.data<T>();
      T* dp = dx.data<T>();
      const auto scale = static_cast<A>(ctx.scale_for(0));
      for (std::int64_t i = 0; i < y.numel(); ++i)
        dp[i] = static_cast<T>(static_cast<A>(dp[i]) +
                               scale * static_cast<A>(gp[i]) * Fn::slope(static_cast<A>(yp[i])));
    });
  }
};

template <typename Fn> void register_elementwise(OpRegistry& registry) {
  OpSchema s;
  s.op_type = Fn::op;
  s.definition = Fn::definition;
  s.inputs = {{"X", float_dtypes(), "any shape"}};
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<ElementwiseNode<Fn>>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace

void register_relu(OpRegistry& registry) { register_elementwise<Relu>(registry); }
void register_sigmoid(OpRegistry& registry) { register_elementwise<Sigmoid>(registry); }
void register_tanh(OpRegistry& registry) { register_elementwise<Tanh>(registry); }

}  // namespace nodeflow

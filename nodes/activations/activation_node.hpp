#pragma once
// The one node of the element-wise activations (Relu, Sigmoid, Tanh, LeakyRelu,
// Elu, Selu, Celu, Gelu, HardSigmoid, HardSwish, Softplus, Softsign, Mish):
// y = f(x) and dx += scale * dy * f'(.), each one flat pass over the tensor,
// split over the executor's threads when it is large. float16 and bfloat16
// compute in float32 (accumulator_t), element by element.
//
// An activation is a struct Fn deriving from ActivationTraits, with
//   op, definition               ONNX op_type and "ONNX <op>-<version>"
//   explicit Fn(const Attributes&)  reads its checked attributes once
//   template <A> A value(A x)    f(x)
//   template <A> A slope(A s)    f' in terms of s = y (from_output) or s = x
// and, where the traits' defaults do not fit, attributes(), check(),
// float32_only and the tensor names.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/attributes.hpp"
#include "core/errors.hpp"
#include "core/node.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

struct ActivationTraits {
  /// True when the derivative is a function of y (Sigmoid, Tanh): forward
  /// saves y, else x (a handle, never a copy).
  static constexpr bool from_output = false;
  /// ONNX's type constraint is float32 alone (Celu-12).
  static constexpr bool float32_only = false;
  /// ONNX's names of the input and output (Softsign: input, output).
  static constexpr const char* input_name = "X";
  static constexpr const char* output_name = "Y";
  static std::vector<AttrSpec> attributes() { return {}; }
  /// The schema's check_attributes (rules a spec cannot state); none by default.
  static void check(const Attributes&) {}
};

/// Calls body(begin, end) over [0, n): on up to `threads` threads once n is
/// large enough (tens of thousands of elements) to pay for a parallel region.
void activation_ranges(int threads, std::int64_t n,
                       const std::function<void(std::int64_t, std::int64_t)>& body);

/// Throws UnsupportedDType unless `dtype` is a float dtype (float32 only with
/// `float32_only`): "Celu does not take dtype float64 (input 0 (X); allowed: float32)".
void check_activation_dtype(const std::string& op, const std::string& input_name, DType dtype,
                            bool float32_only);

template <typename Fn>
class ActivationNode final : public Node {
 public:
  explicit ActivationNode(NodeConfig config) : Node(std::move(config)), fn_(this->config().attributes) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    check_activation_dtype(Fn::op, Fn::input_name, ctx.inputs[0]->dtype, Fn::float32_only);
    return {*ctx.inputs[0]};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    check_activation_dtype(Fn::op, Fn::input_name, x.dtype(), Fn::float32_only);
    Tensor y = Tensor::uninitialized(x.dtype(), x.shape());  // written in full
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      activation_ranges(ctx.threads, x.numel(), [xp, yp, fn = fn_](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) yp[i] = static_cast<T>(fn.value(static_cast<A>(xp[i])));
      });
    });
    ctx.outputs[0] = y;
    if (ctx.saved) ctx.saved->push_back(Fn::from_output ? y : x);
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) return;
    require_saved(Fn::op, ctx.saved.size(), 1);
    const Tensor& s = ctx.saved[0];
    check_output_gradient(Fn::op, 0, dy, s.shape());
    visit_float_dtype(s.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* sp = s.data<T>();
      const T* gp = dy.data<T>();
      T* dp = dx.data<T>();
      const auto scale = static_cast<A>(ctx.scale_for(0));
      // Captured by value: a scale or function object held by reference may
      // alias dp for the compiler, which then reloads it at every element and
      // keeps the loop scalar (Relu's backward took 12 % of a ResNet step).
      activation_ranges(ctx.threads, s.numel(), [sp, gp, dp, scale, fn = fn_](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i)
          dp[i] = static_cast<T>(static_cast<A>(dp[i]) + scale * static_cast<A>(gp[i]) *
                                                             fn.slope(static_cast<A>(sp[i])));
      });
    });
  }

 private:
  Fn fn_;
};

template <typename Fn>
void register_activation(OpRegistry& registry) {
  OpSchema s;
  s.op_type = Fn::op;
  s.definition = Fn::definition;
  s.doc = Fn::doc;
  const std::vector<DType> dtypes =
      Fn::float32_only ? std::vector<DType>{DType::Float32} : float_dtypes();
  s.inputs = {{Fn::input_name, dtypes, "any shape"}};
  s.outputs = {{Fn::output_name, dtypes, "the input's shape and dtype"}};
  s.attributes = Fn::attributes();
  s.check_attributes = [](const Attributes& a) { Fn::check(a); };
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<ActivationNode<Fn>>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

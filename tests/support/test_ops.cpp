#include "support/test_ops.hpp"

#include <mutex>
#include <utility>

#include "core/registry.hpp"

namespace nodeflow::testing {
namespace {

class TestScale : public Node {
 public:
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext& ctx) const override { return {*ctx.inputs[0]}; }
  void forward(const ForwardContext& ctx) const override {
    const float alpha = static_cast<float>(attr_float(config().attributes, "alpha"));
    const Tensor& x = ctx.inputs[0];
    Tensor y(x.dtype(), x.shape());
    for (std::int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = alpha * x.data<float>()[i];
    ctx.outputs[0] = y;
  }
  void backward(const BackwardContext& ctx) const override {
    const float alpha = static_cast<float>(attr_float(config().attributes, "alpha"));
    Tensor& dx = ctx.grad_inputs[0];
    const Tensor& dy = ctx.grad_outputs[0];
    if (dx.empty() || dy.empty()) return;
    for (std::int64_t i = 0; i < dx.numel(); ++i)
      dx.data<float>()[i] += static_cast<float>(ctx.scale_for(0)) * alpha * dy.data<float>()[i];
  }
};

class TestMul : public Node {
 public:
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext& ctx) const override { return {*ctx.inputs[0]}; }
  void forward(const ForwardContext& ctx) const override {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    Tensor y(a.dtype(), a.shape());
    for (std::int64_t i = 0; i < a.numel(); ++i)
      y.data<float>()[i] = a.data<float>()[i] * b.data<float>()[i];
    ctx.outputs[0] = y;
    if (ctx.saved) *ctx.saved = {a, b};
  }
  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    for (int k = 0; k < 2; ++k) {
      Tensor& dx = ctx.grad_inputs[k];
      if (dx.empty() || dy.empty()) continue;
      const Tensor& other = ctx.saved[1 - k];
      for (std::int64_t i = 0; i < dx.numel(); ++i)
        dx.data<float>()[i] +=
            static_cast<float>(ctx.scale_for(static_cast<std::size_t>(k))) * other.data<float>()[i] * dy.data<float>()[i];
    }
  }
};

}  // namespace

NodeDef test_scale(const std::string& name, std::vector<std::string> inputs, double alpha) {
  NodeDef n;
  n.op_type = "TestScale";
  n.name = name;
  n.inputs = std::move(inputs);
  n.attributes["alpha"] = alpha;
  return n;
}

void register_test_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry& r = OpRegistry::global();
    const std::vector<DType> f32{DType::Float32};
    OpSchema scale;
    scale.op_type = "TestScale";
    scale.definition = "test op";
    scale.doc = "alpha * X (test op)";
    scale.inputs = {{"X", f32, ""}};
    scale.outputs = {{"Y", f32, ""}};
    scale.attributes = {float_spec("alpha", 1.0, "factor")};
    scale.create = [](NodeConfig c) { return std::make_unique<TestScale>(std::move(c)); };
    r.add(std::move(scale));
    OpSchema mul;
    mul.op_type = "TestMul";
    mul.definition = "test op";
    mul.doc = "Elementwise A * B, float32 (test op)";
    mul.inputs = {{"A", f32, ""}, {"B", f32, ""}};
    mul.min_inputs = 2;
    mul.outputs = {{"Y", f32, ""}};
    mul.create = [](NodeConfig c) { return std::make_unique<TestMul>(std::move(c)); };
    r.add(std::move(mul));
  });
}

}  // namespace nodeflow::testing

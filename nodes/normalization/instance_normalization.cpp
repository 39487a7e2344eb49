// InstanceNormalization (ONNX InstanceNormalization-22): input N x C x D1..Dn
// (rank >= 2), scale and B [C] of input's dtype. Each (n, c) plane is
// normalised by its own mean and biased variance, in the compute dtype
// (float64 for float64, float32 otherwise: ONNX gives this op no stash_type),
// then scaled and shifted by channel c's scale and B. Gradients for input,
// scale and B, with the statistics as functions of the input.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/normalization_node.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "InstanceNormalization";
constexpr const char* kInputNames[] = {"input", "scale", "B"};

void check_rank(const Shape& x) {
  if (x.size() < 2)
    throw ShapeMismatch("input 0 (input) has shape " + to_string(x) + "; " + kOp +
                        " needs N x C x D1 ... (rank >= 2)");
}

class InstanceNormalizationNode final : public Node {
 public:
  explicit InstanceNormalizationNode(NodeConfig c)
      : Node(std::move(c)), epsilon_(attr_float(config().attributes, "epsilon")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_rank(x.shape);
    for (std::size_t k = 0; k < 3; ++k) {
      check_normalization_input(kOp, k, kInputNames[k], ctx.inputs[k]->dtype, x.dtype);
      if (k > 0) check_channel_parameter(k, kInputNames[k], ctx.inputs[k]->shape, x.shape[1]);
    }
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    const Shape& shape = ctx.inputs[0].shape();
    check_rank(shape);
    for (std::size_t k = 1; k < 3; ++k) check_channel_parameter(k, kInputNames[k], ctx.inputs[k].shape(), shape[1]);
    const DType ct = compute_dtype(ctx.inputs[0].dtype());
    ctx.outputs[0] = normalization_forward(ctx, layout_of(shape), ct, as_dtype(ctx.inputs[1], ct),
                                           as_dtype(ctx.inputs[2], ct), epsilon_)
                         .y;
  }

  void backward(const BackwardContext& ctx) const override {
    const auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    const ParameterGradients g = normalization_backward(ctx, kOp, layout_of(ctx.inputs[0].shape), wanted(1), wanted(2));
    if (!g.scale.empty()) accumulate_gradient(ctx.grad_inputs[1], g.scale, ctx.scale_for(1));
    if (!g.bias.empty()) accumulate_gradient(ctx.grad_inputs[2], g.bias, ctx.scale_for(2));
  }

 private:
  // One row per (n, c) plane; channel c's parameters for all of it.
  static RowLayout layout_of(const Shape& shape) {
    return {shape[0] * shape[1], dims_product(shape, 2, shape.size()), shape[1], 1,
            dims_product(shape, 2, shape.size())};
  }

  double epsilon_;
};

}  // namespace

void register_instance_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX InstanceNormalization-22";
  s.inputs = {{"input", float_dtypes(), "N x C x D1..Dn"},
              {"scale", float_dtypes(), "[C], input's dtype"},
              {"B", float_dtypes(), "[C] bias, input's dtype"}};
  s.min_inputs = 3;
  s.outputs = {{"output", float_dtypes(), "input's shape and dtype"}};
  s.attributes = {epsilon_spec()};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<InstanceNormalizationNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

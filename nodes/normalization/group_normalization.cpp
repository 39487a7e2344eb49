// GroupNormalization (ONNX GroupNormalization-21): X N x C x D1..Dn (rank >=
// 2), its C channels split into num_groups groups of C / num_groups
// consecutive channels; each (n, group) is normalised by its own mean and
// biased variance, computed in float32 (stash_type 1), then channel c is
// scaled and shifted by scale[c] and bias[c] ([C], X's dtype; opset 18 had
// them per group). Gradients for X, scale and bias, with the statistics as
// functions of X. C not divisible by num_groups is a ShapeMismatch.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/normalization_node.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "GroupNormalization";
constexpr const char* kInputNames[] = {"X", "scale", "bias"};

class GroupNormalizationNode final : public Node {
 public:
  explicit GroupNormalizationNode(NodeConfig c)
      : Node(std::move(c)),
        groups_(attr_int(config().attributes, "num_groups")),
        epsilon_(attr_float(config().attributes, "epsilon")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_shape(x.shape);
    for (std::size_t k = 0; k < 3; ++k) {
      check_normalization_input(kOp, k, kInputNames[k], ctx.inputs[k]->dtype, x.dtype);
      if (k > 0) check_channel_parameter(k, kInputNames[k], ctx.inputs[k]->shape, x.shape[1]);
    }
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    const Shape& shape = ctx.inputs[0].shape();
    check_shape(shape);
    for (std::size_t k = 1; k < 3; ++k) check_channel_parameter(k, kInputNames[k], ctx.inputs[k].shape(), shape[1]);
    ctx.outputs[0] = normalization_forward(ctx, layout_of(shape), DType::Float32,
                                           as_dtype(ctx.inputs[1], DType::Float32),
                                           as_dtype(ctx.inputs[2], DType::Float32), epsilon_)
                         .y;
  }

  void backward(const BackwardContext& ctx) const override {
    const auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    const ParameterGradients g = normalization_backward(ctx, kOp, layout_of(ctx.inputs[0].shape), wanted(1), wanted(2));
    if (!g.scale.empty()) accumulate_gradient(ctx.grad_inputs[1], g.scale, ctx.scale_for(1));
    if (!g.bias.empty()) accumulate_gradient(ctx.grad_inputs[2], g.bias, ctx.scale_for(2));
  }

 private:
  void check_shape(const Shape& x) const {
    if (x.size() < 2)
      throw ShapeMismatch("input 0 (X) has shape " + to_string(x) + "; " + kOp + " needs N x C x D1 ... (rank >= 2)");
    if (x[1] != kDynamicDim && (x[1] % groups_ != 0 || groups_ > x[1]))
      throw ShapeMismatch("input 0 (X) has " + std::to_string(x[1]) + " channels, which num_groups " +
                          std::to_string(groups_) + " does not divide into groups of at least one channel");
  }

  // One row per (n, group): its C / G channels' planes, one parameter per channel.
  RowLayout layout_of(const Shape& shape) const {
    const std::int64_t spatial = dims_product(shape, 2, shape.size());
    const std::int64_t per_group = shape[1] / groups_;
    return {shape[0] * groups_, per_group * spatial, groups_, per_group, spatial};
  }

  std::int64_t groups_;
  double epsilon_;
};

}  // namespace

void register_group_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX GroupNormalization-21";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"scale", float_dtypes(), "[C], X's dtype"},
              {"bias", float_dtypes(), "[C], X's dtype"}};
  s.min_inputs = 3;
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"}};
  AttrSpec groups;
  groups.name = "num_groups";
  groups.kind = AttrKind::Int;
  groups.required = true;
  groups.min = 1;
  groups.doc = "number of groups of consecutive channels; divides C";
  s.attributes = {epsilon_spec(), groups, stash_type_spec(21)};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<GroupNormalizationNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

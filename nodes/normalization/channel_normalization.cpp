#include "nodes/normalization/channel_normalization.hpp"

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/normalization_node.hpp"

namespace nodeflow {
namespace {

class ChannelNormalizationNode final : public Node {
 public:
  ChannelNormalizationNode(NodeConfig c, ChannelNormalization kind)
      : Node(std::move(c)),
        instance_(kind == ChannelNormalization::Instance),
        op_(instance_ ? "InstanceNormalization" : "GroupNormalization"),
        names_{instance_ ? "input" : "X", "scale", instance_ ? "B" : "bias"},
        groups_(instance_ ? 0 : attr_int(config().attributes, "num_groups")),
        epsilon_(attr_float(config().attributes, "epsilon")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_shapes(x.shape, [&](std::size_t k) { return ctx.inputs[k]->shape; });
    for (std::size_t k = 0; k < 3; ++k)
      check_normalization_input(op_, k, names_[k], ctx.inputs[k]->dtype, names_[0], x.dtype);
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    const Shape& shape = ctx.inputs[0].shape();
    check_shapes(shape, [&](std::size_t k) { return ctx.inputs[k].shape(); });
    const DType ct = instance_ ? compute_dtype(ctx.inputs[0].dtype()) : DType::Float32;
    ctx.outputs[0] =
        normalization_forward(ctx, layout_of(shape), ct, as_dtype(ctx.inputs[1], ct), as_dtype(ctx.inputs[2], ct),
                              epsilon_)
            .y;
  }

  // X's gradient is written row by row (normalization_backward).
  bool overwrites_gradients() const override { return true; }

  void backward(const BackwardContext& ctx) const override {
    const auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    for (std::size_t k = 1; k < ctx.grad_inputs.size(); ++k) ctx.zero_if_overwritten(k);  // added into below
    const ParameterGradients g = normalization_backward(ctx, op_, layout_of(ctx.inputs[0].shape), wanted(1), wanted(2));
    if (!g.scale.empty()) accumulate_gradient(ctx.grad_inputs[1], g.scale, ctx.scale_for(1));
    if (!g.bias.empty()) accumulate_gradient(ctx.grad_inputs[2], g.bias, ctx.scale_for(2));
  }

 private:
  template <typename ShapeOf> void check_shapes(const Shape& x, ShapeOf&& shape_of) const {
    if (x.size() < 2)
      throw ShapeMismatch("input 0 (" + std::string(names_[0]) + ") has shape " + to_string(x) + "; " + op_ +
                          " needs N x C x D1 ... (rank >= 2)");
    if (!instance_ && x[1] != kDynamicDim && (x[1] % groups_ != 0 || groups_ > x[1]))
      throw ShapeMismatch("input 0 (X) has " + std::to_string(x[1]) + " channels, which num_groups " +
                          std::to_string(groups_) + " does not divide into groups of at least one channel");
    for (std::size_t k = 1; k < 3; ++k) check_channel_parameter(k, names_[k], shape_of(k), x[1]);
  }

  // One row per (n, group): its C / G channels' planes, one parameter per channel.
  RowLayout layout_of(const Shape& shape) const {
    const std::int64_t groups = instance_ ? shape[1] : groups_;
    const std::int64_t spatial = dims_product(shape, 2, shape.size());
    const std::int64_t per_group = groups == 0 ? 0 : shape[1] / groups;
    return {shape[0] * groups, per_group * spatial, groups, per_group, spatial};
  }

  bool instance_;
  std::string op_;
  const char* names_[3];
  std::int64_t groups_;  // GroupNormalization's num_groups
  double epsilon_;
};

}  // namespace

std::unique_ptr<Node> make_channel_normalization(NodeConfig config, ChannelNormalization kind) {
  return std::make_unique<ChannelNormalizationNode>(std::move(config), kind);
}

}  // namespace nodeflow

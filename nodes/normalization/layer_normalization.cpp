// LayerNormalization (ONNX LayerNormalization-17, the latest in opset 22).
//
// X of rank r is normalised over its axes [axis, r): each of the
// prod(X.shape[:axis]) rows of prod(X.shape[axis:]) values by its own mean
// and biased variance, computed in float32 whatever X's dtype (stash_type 1),
// then Y = Normalized * Scale + B, with Scale and the optional B
// unidirectionally broadcast to X.shape[axis:]. The optional outputs Mean and
// InvStdDev (1 / sqrt(var + epsilon)) are float32 of shape
// X.shape[:axis] + [1] * (r - axis). Gradients for X, Scale and B, with the
// statistics as functions of X; the gradients of Mean and InvStdDev, when a
// graph reads them, flow into X's too.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/normalization_node.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "LayerNormalization";
constexpr const char* kInputNames[] = {"X", "Scale", "B"};

// Scale or B must fit X.shape[axis:] as numpy broadcasting stretches it there
// (aligned on the right, each dimension equal or 1), without growing Y.
void check_parameter_shape(std::size_t k, const Shape& param, const Shape& normalized) {
  bool fits = param.size() <= normalized.size();
  for (std::size_t i = 0; fits && i < param.size(); ++i) {
    const std::int64_t p = param[param.size() - 1 - i], n = normalized[normalized.size() - 1 - i];
    fits = p == 1 || p == n || p == kDynamicDim || n == kDynamicDim;
  }
  if (!fits)
    throw ShapeMismatch("input " + std::to_string(k) + " (" + kInputNames[k] + ") has shape " + to_string(param) +
                        ", which does not broadcast to the normalized shape " + to_string(normalized) +
                        " (X.shape[axis:])");
}

// Scale or B in float32 over the normalized shape (a copy only when it broadcasts).
Tensor expand_parameter(const Tensor& param, const Shape& normalized) {
  const Tensor p = as_dtype(param, DType::Float32);
  if (p.shape() == normalized) return p.reshaped({p.numel()});
  Tensor out = Tensor::uninitialized(DType::Float32, {element_count(normalized)});
  const std::vector<std::int64_t> s = broadcast_strides(p.shape(), normalized);
  const float* in = p.data<float>();
  float* o = out.data<float>();
  for_each_broadcast(normalized, s, s, [&](std::int64_t i, std::int64_t ip, std::int64_t) { o[i] = in[ip]; });
  return out;
}

// The gradient over the normalized shape summed back onto the parameter's shape.
Tensor reduce_parameter_gradient(const Tensor& g, const Shape& param, const Shape& normalized) {
  if (param == normalized) return g.reshaped(param);
  Tensor out(DType::Float32, param);
  const std::vector<std::int64_t> s = broadcast_strides(param, normalized);
  const float* in = g.data<float>();
  float* o = out.data<float>();
  for_each_broadcast(normalized, s, s, [&](std::int64_t i, std::int64_t ip, std::int64_t) { o[ip] += in[i]; });
  return out;
}

class LayerNormalizationNode final : public Node {
 public:
  explicit LayerNormalizationNode(NodeConfig c)
      : Node(std::move(c)),
        axis_(attr_int(config().attributes, "axis")),
        epsilon_(attr_float(config().attributes, "epsilon")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const std::size_t axis = normalize_axis(axis_, x.shape.size());
    const Shape normalized(x.shape.begin() + static_cast<std::ptrdiff_t>(axis), x.shape.end());
    for (std::size_t k = 0; k < 3; ++k) {
      if (k >= ctx.inputs.size() || !ctx.inputs[k]) continue;
      check_normalization_input(kOp, k, kInputNames[k], ctx.inputs[k]->dtype, kInputNames[0], x.dtype);
      if (k > 0) check_parameter_shape(k, ctx.inputs[k]->shape, normalized);
    }
    const TensorInfo stats{DType::Float32, statistics_shape(x.shape, axis)};
    return {x, stats, stats};
  }

  void forward(const ForwardContext& ctx) const override {
    const Shape& shape = ctx.inputs[0].shape();
    const std::size_t axis = normalize_axis(axis_, shape.size());
    const Shape normalized(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
    const bool has_bias = ctx.inputs.size() > 2 && !ctx.inputs[2].empty();
    for (std::size_t k = 1; k < (has_bias ? 3u : 2u); ++k) check_parameter_shape(k, ctx.inputs[k].shape(), normalized);
    const RowLayout layout = layout_of(shape, axis);
    const RowStatistics s = normalization_forward(
        ctx, layout, DType::Float32, expand_parameter(ctx.inputs[1], normalized),
        has_bias ? expand_parameter(ctx.inputs[2], normalized) : Tensor{}, epsilon_);
    ctx.outputs[0] = s.y;
    const Shape stats = statistics_shape(shape, axis);
    if (ctx.outputs.size() > 1) ctx.outputs[1] = s.mean.reshaped(stats);
    if (ctx.outputs.size() > 2) ctx.outputs[2] = s.inv_std.reshaped(stats);
  }

  // X's gradient is written row by row (normalization_backward).
  bool overwrites_gradients() const override { return true; }

  void backward(const BackwardContext& ctx) const override {
    for (std::size_t k = 1; k < ctx.grad_inputs.size(); ++k) ctx.zero_if_overwritten(k);  // added into below
    const Shape& shape = ctx.inputs[0].shape;
    const std::size_t axis = normalize_axis(axis_, shape.size());
    const Shape normalized(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
    const auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    const Shape stats = statistics_shape(shape, axis);
    const ParameterGradients g =
        normalization_backward(ctx, kOp, layout_of(shape, axis), wanted(1), wanted(2), &stats);
    if (!g.scale.empty())
      accumulate_gradient(ctx.grad_inputs[1], reduce_parameter_gradient(g.scale, ctx.inputs[1].shape, normalized),
                          ctx.scale_for(1));
    if (!g.bias.empty())
      accumulate_gradient(ctx.grad_inputs[2], reduce_parameter_gradient(g.bias, ctx.inputs[2].shape, normalized),
                          ctx.scale_for(2));
  }

 private:
  static RowLayout layout_of(const Shape& shape, std::size_t axis) {
    const std::int64_t cols = dims_product(shape, axis, shape.size());
    return {dims_product(shape, 0, axis), cols, 1, cols, 1};
  }

  static Shape statistics_shape(const Shape& shape, std::size_t axis) {
    Shape s(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis));
    s.resize(shape.size(), 1);
    return s;
  }

  std::int64_t axis_;
  double epsilon_;
};

}  // namespace

void register_layer_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX LayerNormalization-17";
  s.doc = "(X - mean) / sqrt(var + epsilon) over the axes from axis on, * Scale + B; optional Mean, InvStdDev";
  s.inputs = {{"X", float_dtypes(), "any rank; normalized over axes [axis, rank)"},
              {"Scale", float_dtypes(), "X's dtype; broadcasts to X.shape[axis:]"},
              {"B", float_dtypes(), "optional bias, X's dtype; broadcasts to X.shape[axis:]"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"},
               {"Mean", {DType::Float32}, "float32, X.shape[:axis] + [1] * (rank - axis)"},
               {"InvStdDev", {DType::Float32}, "float32 1 / sqrt(var + epsilon), the shape of Mean"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{-1}};
  axis.doc = "first normalized axis, in [-rank, rank - 1]";
  axis.since_version = 17;  // LayerNormalization came in opset 17
  AttrSpec epsilon = epsilon_spec();
  epsilon.since_version = 17;
  s.attributes = {axis, epsilon, stash_type_spec(17)};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<LayerNormalizationNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

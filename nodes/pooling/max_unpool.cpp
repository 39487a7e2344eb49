// MaxUnpool (ONNX MaxUnpool-22): inputs X, I (int64 flat indices into the
// whole output, as MaxPool's Indices) and optional output_shape (int64, the
// full output shape). Y is zero except at I, where it holds X; training saves
// I (a handle, no copy) for the backward, which gathers dY at I.
#include <type_traits>

#include "core/errors.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"
#include "nodes/pooling/pool_node.hpp"
#include "nodes/pooling/pool_ops.hpp"

namespace nodeflow {
namespace {

constexpr std::size_t kX = 0, kIndices = 1, kOutputShape = 2;

std::string input_name(std::size_t i) {
  static const char* const names[] = {"X", "I", "output_shape"};
  return "input " + std::to_string(i) + " (" + names[i] + ")";
}

// True when two possibly dynamic shapes can be equal.
bool compatible(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != kDynamicDim && b[i] != kDynamicDim && a[i] != b[i]) return false;
  return true;
}

class MaxUnpoolNode final : public Node {
 public:
  explicit MaxUnpoolNode(NodeConfig config)
      : Node(std::move(config)),
        attrs_(parse_pool_attributes(PoolKind::Unpool, this->config().attributes)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs.at(kX);
    const TensorInfo& indices = *ctx.inputs.at(kIndices);
    check_pool_dtype(PoolKind::Unpool, x.dtype, kX);
    check_pool_rank(attrs_, x.shape, kX);
    check_index_input(indices, x.shape);
    const TensorInfo* shape_info =
        ctx.inputs.size() > kOutputShape ? ctx.inputs[kOutputShape] : nullptr;
    if (!shape_info) return {{x.dtype, default_shape(x.shape)}};
    if (shape_info->dtype != DType::Int64 || shape_info->shape.size() != 1 ||
        (shape_info->shape[0] != kDynamicDim &&
         shape_info->shape[0] != static_cast<std::int64_t>(x.shape.size())))
      throw ShapeMismatch(input_name(kOutputShape) + " must be an int64 vector of " +
                          std::to_string(x.shape.size()) + " values, got " +
                          std::string(dtype_name(shape_info->dtype)) + " " +
                          to_string(shape_info->shape));
    const Tensor* value =
        ctx.constants.size() > kOutputShape ? ctx.constants[kOutputShape] : nullptr;
    if (value) return {{x.dtype, given_shape(*value, x.shape)}};
    // Known only at run time: N and C still come from X.
    Shape out(x.shape.size(), kDynamicDim);
    out[0] = x.shape[0];
    out[1] = x.shape[1];
    return {{x.dtype, out}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[kX];
    const Tensor& indices = ctx.inputs[kIndices];
    check_pool_dtype(PoolKind::Unpool, x.dtype(), kX);
    check_pool_rank(attrs_, x.shape(), kX);
    check_index_input({indices.dtype(), indices.shape()}, x.shape());
    const bool has_shape = ctx.inputs.size() > kOutputShape && !ctx.inputs[kOutputShape].empty();
    Tensor y(x.dtype(), has_shape ? given_shape(ctx.inputs[kOutputShape], x.shape())
                                  : default_shape(x.shape()));
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!is_index_type_v<T>)
        max_unpool_forward<T>(x.values<T>(), indices.values<std::int64_t>(), y.values<T>());
    });
    ctx.outputs[0] = y;
    if (ctx.saved && is_float(x.dtype())) ctx.saved->push_back(indices);
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs.empty() || ctx.grad_outputs[0].empty() || ctx.grad_inputs.empty() ||
        ctx.grad_inputs[kX].empty())
      return;
    const TensorInfo& x = ctx.inputs[kX];
    if (!is_float(x.dtype))
      throw UnsupportedDType("MaxUnpool: input 0 of dtype " + std::string(dtype_name(x.dtype)) +
                             " has no gradient (not differentiable)");
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[kX];
    if (ctx.saved.size() != 1 || ctx.saved[0].shape() != x.shape)
      throw RunError("MaxUnpool backward needs I saved by a training-mode forward");
    if (dx.shape() != x.shape || dx.dtype() != x.dtype || dy.dtype() != x.dtype)
      throw ShapeMismatch("gradient of input 0 " + to_string(dx.shape()) +
                          " does not fit the forward " + to_string(x.shape));
    const auto indices = ctx.saved[0].values<std::int64_t>();
    for (std::int64_t at : indices)
      if (at < 0 || at >= dy.numel())
        throw ShapeMismatch("gradient of output 0 " + to_string(dy.shape()) +
                            " does not hold index " + std::to_string(at) + " of the forward");
    visit_float_dtype(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      max_unpool_backward<T>(indices, dy.values<T>(), ctx.scale_for(0), dx.values<T>());
    });
  }

 private:
  // I: int64 with X's shape.
  static void check_index_input(const TensorInfo& indices, const Shape& x_shape) {
    if (indices.dtype != DType::Int64)
      throw UnsupportedDType("MaxUnpool " + input_name(kIndices) + " must be int64, got " +
                             std::string(dtype_name(indices.dtype)));
    if (!compatible(indices.shape, x_shape))
      throw ShapeMismatch(input_name(kIndices) + " has shape " + to_string(indices.shape) +
                          ", expected the shape of " + input_name(kX) + " " + to_string(x_shape));
  }

  // The output shape without output_shape: (in-1)*s + k - pb - pe per spatial
  // axis, N and C from X; worked out once per shape of X.
  Shape default_shape(const Shape& x_shape) const {
    return *default_shapes_.get(x_shape, [&] { return unpooled_shape(x_shape); });
  }

  Shape unpooled_shape(const Shape& x_shape) const {
    Shape out{x_shape[0], x_shape[1]};
    for (std::size_t i = 2; i < x_shape.size(); ++i) {
      const std::int64_t in = x_shape[i];
      if (in == kDynamicDim) {
        out.push_back(kDynamicDim);
        continue;
      }
      const WindowAxis& a = attrs_.axes[i - 2];
      const std::int64_t size = in == 0 ? 0 : transposed_size(a, in, "pooling");
      if (in > 0 && size < 1)
        throw ShapeMismatch("axis " + std::to_string(i) + ": output size (" + std::to_string(in) +
                            "-1)*" + std::to_string(a.stride) + "+" + std::to_string(a.kernel) +
                            "-" + std::to_string(a.pad_begin) + "-" + std::to_string(a.pad_end) +
                            " = " + std::to_string(size) + " is < 1");
      out.push_back(size);
    }
    return out;
  }

  // output_shape's values: the full output shape, same rank, N and C of X.
  static Shape given_shape(const Tensor& value, const Shape& x_shape) {
    if (value.dtype() != DType::Int64 || value.rank() != 1 ||
        value.numel() != static_cast<std::int64_t>(x_shape.size()))
      throw ShapeMismatch(input_name(kOutputShape) + " must be an int64 vector of " +
                          std::to_string(x_shape.size()) + " values, got " +
                          std::string(dtype_name(value.dtype())) + " " + to_string(value.shape()));
    const auto v = value.values<std::int64_t>();
    Shape out(v.begin(), v.end());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const bool fixed = i < 2 && x_shape[i] != kDynamicDim;
      if ((fixed && out[i] != x_shape[i]) || out[i] < 0)
        throw ShapeMismatch(input_name(kOutputShape) + " " + to_string(out) + " does not fit " +
                            input_name(kX) + " " + to_string(x_shape) +
                            " (N and C are kept, sizes are >= 0)");
    }
    return out;
  }

  PoolAttributes attrs_;
  ShapeCache<Shape, Shape> default_shapes_;
};

}  // namespace

void register_max_unpool(OpRegistry& registry) {
  OpSchema s = pool_schema(PoolKind::Unpool);
  s.inputs.push_back({"I", {DType::Int64}, "X's shape: MaxPool's Indices"});
  s.inputs.push_back({"output_shape", {DType::Int64}, "optional 1-D: the output's shape"});
  s.min_inputs = 2;
  s.outputs[0].name = "output";  // ONNX's name for MaxUnpool's
  s.outputs[0].doc = "N x C x D1..Dn: X scattered to I, zeros elsewhere";
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<MaxUnpoolNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow

// Flatten (ONNX Flatten-21) and Reshape (ONNX Reshape-21). Both only relabel
// the shape: the output shares the input's buffer, and the gradient is the
// output gradient read with the input's shape. They take every dtype (no
// arithmetic); gradients flow through the float ones.
#include <span>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/shape/movement.hpp"

namespace nodeflow {
namespace {

// Product of dims [begin, end), kDynamicDim if any of them is dynamic.
std::int64_t product_or_dynamic(const Shape& s, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t a = begin; a < end; ++a) {
    if (s[a] == kDynamicDim) return kDynamicDim;
    p *= s[a];
  }
  return p;
}

class FlattenNode final : public Node {
 public:
  explicit FlattenNode(NodeConfig c) : Node(std::move(c)), axis_(attr_int(config().attributes, "axis")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    return {TensorInfo{ctx.inputs[0]->dtype, flattened(ctx.inputs[0]->shape)}};
  }

  void forward(const ForwardContext& ctx) const override {
    ctx.outputs[0] = ctx.inputs[0].reshaped(flattened(ctx.inputs[0].shape()));
  }

  void backward(const BackwardContext& ctx) const override { relabel_gradient(ctx); }

 private:
  // [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)]; axis in [-r, r].
  Shape flattened(const Shape& in) const {
    const std::size_t axis = normalize_axis(axis_, in.size(), 1);
    return {product_or_dynamic(in, 0, axis), product_or_dynamic(in, axis, in.size())};
  }

  std::int64_t axis_;
};

// ONNX Reshape's rules: 0 copies the input dimension at the same position
// (unless allowzero, where 0 is a zero-sized dimension), one -1 is inferred
// from the element count. Dimensions copied by 0 appear on both sides, so -1
// can be inferred even when they are dynamic (the usual [0, -1] after a
// dynamic batch).
Shape reshaped_shape(const Shape& in, std::span<const std::int64_t> spec, bool allowzero) {
  Shape out(spec.begin(), spec.end());
  std::vector<bool> copied(spec.size(), false);
  std::size_t inferred = spec.size();
  bool has_zero = false;
  auto where = [&](std::size_t i) {
    return "input 1 (shape): shape[" + std::to_string(i) + "] = " + std::to_string(spec[i]);
  };
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const std::int64_t v = spec[i];
    if (v == -1) {
      if (inferred != spec.size())
        throw ShapeMismatch(where(i) + ": at most one -1 is allowed (shape[" + std::to_string(inferred) +
                            "] is -1 too)");
      inferred = i;
    } else if (v < -1) {
      throw ShapeMismatch(where(i) + ": dimensions must be >= -1");
    } else if (v == 0) {
      has_zero = true;
      if (!allowzero) {
        if (i >= in.size())
          throw ShapeMismatch(where(i) + " copies input axis " + std::to_string(i) + ", but the input " +
                              to_string(in) + " has rank " + std::to_string(in.size()));
        out[i] = in[i];
        copied[i] = true;
      }
    }
  }
  if (allowzero && has_zero && inferred != spec.size())
    throw ShapeMismatch("input 1 (shape): with allowzero = 1 the shape cannot hold both 0 and -1");
  // Element counts of the parts not copied from the input.
  std::int64_t in_rest = 1;
  for (std::size_t a = 0; a < in.size(); ++a) {
    const bool same = a < copied.size() && copied[a];
    if (same) continue;
    if (in[a] == kDynamicDim || in_rest == kDynamicDim)
      in_rest = kDynamicDim;
    else
      in_rest *= in[a];
  }
  std::int64_t out_rest = 1;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!copied[i] && i != inferred && __builtin_mul_overflow(out_rest, out[i], &out_rest))
      throw ShapeMismatch("input 1 (shape): the element count of " + to_string(out) + " overflows");
  if (inferred != spec.size()) {
    if (in_rest == kDynamicDim) {
      out[inferred] = kDynamicDim;
    } else if (out_rest == 0 || in_rest % out_rest != 0) {
      throw ShapeMismatch("input 1 (shape): cannot infer the -1 of " +
                          to_string(AttrValue{std::vector<std::int64_t>(spec.begin(), spec.end())}) +
                          " for input " + to_string(in));
    } else {
      out[inferred] = in_rest / out_rest;
    }
  } else if (in_rest != kDynamicDim && in_rest != out_rest) {
    throw ShapeMismatch("cannot reshape input " + to_string(in) + " to " + to_string(out) +
                        " (different element counts)");
  }
  return out;
}

class ReshapeNode final : public Node {
 public:
  explicit ReshapeNode(NodeConfig c)
      : Node(std::move(c)), allowzero_(attr_int(config().attributes, "allowzero") != 0) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    // The graph refuses a shape that is not a non-trainable initializer (the
    // schema marks it constant), so its values are known here.
    const Tensor* shape = ctx.constants[1];
    if (shape == nullptr) throw InvalidGraph("input 1 (shape) must be a non-trainable initializer");
    const TensorInfo& data = *ctx.inputs[0];
    return {TensorInfo{data.dtype, reshaped_shape(data.shape, int64_list("Reshape", 1, "shape", *shape), allowzero_)}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& data = ctx.inputs[0];
    ctx.outputs[0] = data.reshaped(reshaped_shape(data.shape(), int64_list("Reshape", 1, "shape", ctx.inputs[1]), allowzero_));
  }

  void backward(const BackwardContext& ctx) const override { relabel_gradient(ctx); }

 private:
  bool allowzero_;
};

}  // namespace

void register_flatten(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Flatten";
  s.definition = "ONNX Flatten-21";
  s.doc = "Reshapes to 2-D: the axes before axis times the axes from axis on";
  s.inputs = {{"input", graph_dtypes(), "any rank"}};
  s.outputs = {{"output", graph_dtypes(), "2-D, input's dtype"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{1}};
  axis.doc = "input axes before it form the output's first dimension, the rest the second; in [-r, r]";
  s.attributes = {axis};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<FlattenNode>(std::move(c)); };
  registry.add(std::move(s));
}

void register_reshape(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Reshape";
  s.definition = "ONNX Reshape-21";
  s.doc = "Gives data the shape in shape (0 copies the input's length unless allowzero; -1 is inferred)";
  s.inputs = {{"data", graph_dtypes(), "any shape"},
              {"shape", int64_dtypes(), "1-D: the output's dimensions (0 copies, -1 is inferred)",
               /*constant=*/true}};
  s.min_inputs = 2;
  s.outputs = {{"reshaped", graph_dtypes(), "data's elements and dtype"}};
  AttrSpec allowzero =
      flag_spec("allowzero", "1: a 0 in shape is a zero-sized dimension; 0: it copies the input dimension");
  allowzero.since_version = 14;
  s.attributes = {allowzero};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ReshapeNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
